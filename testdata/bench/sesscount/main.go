// Command sesscount reads a session file with the sessions reader and
// prints, per direction, how many frame records it holds and their bytes,
// then the events by kind and the lines it could not read:
//
//	h2s FRAMES BYTES
//	s2h FRAMES BYTES
//	err FRAMES BYTES
//	event KIND COUNT
//	skipped N
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: sesscount SESSION-FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "sesscount:", err)
		os.Exit(1)
	}
	defer f.Close()
	r := sessions.NewReader(bufio.NewReaderSize(f, 1<<20))
	var frames, bytes [4]int64
	events := map[string]int{}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "sesscount:", err)
			os.Exit(1)
		}
		if ev.Kind != "" {
			events[ev.Kind]++
			continue
		}
		if int(ev.Dir) < len(frames) {
			frames[ev.Dir]++
			// The wire bytes: the frame plus the newline that ended it
			// (ndjson), unless it ended its stream without one.
			n := int64(len(ev.Header) + len(ev.Frame))
			if !ev.EOF && ev.Dir != classify.Err {
				n++
			}
			bytes[ev.Dir] += n
		}
	}
	for _, d := range []classify.Direction{classify.H2S, classify.S2H, classify.Err} {
		fmt.Printf("%s %d %d\n", d, frames[d], bytes[d])
	}
	kinds := make([]string, 0, len(events))
	for k := range events {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Printf("event %s %d\n", k, events[k])
	}
	fmt.Printf("skipped %d\n", r.Skipped())
}
