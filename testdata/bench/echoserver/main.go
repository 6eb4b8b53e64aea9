// Command echoserver is the latency benchmark's server: for every request
// line it reads on stdin (a line with an "id" and a "method"), it writes
// one result line with the same id to stdout, in one write. Lines without
// an id (notifications) get no answer. It exits at EOF.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"io"
	"os"
	"strings"
)

func main() {
	size := flag.Int("size", 1024, "approximate bytes per result line")
	flag.Parse()
	prefix := []byte(`{"jsonrpc":"2.0","id":`)
	mid := []byte(`,"result":{"content":[{"type":"text","text":"`)
	suffix := []byte(`"}],"isError":false}}` + "\n")
	pad := max(*size-len(prefix)-len(mid)-len(suffix)-8, 0)
	text := []byte(strings.Repeat("Partly cloudy, 18 C, wind 12 km/h NW, humidity 64%. ", pad/52+1)[:pad])

	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	out := make([]byte, 0, *size+256)
	key := []byte(`"id":`)
	for {
		line, err := in.ReadSlice('\n')
		if err == io.EOF {
			return
		}
		if err != nil {
			os.Exit(1)
		}
		i := bytes.Index(line, key)
		if i < 0 || !bytes.Contains(line, []byte(`"method":`)) {
			continue // a notification or a response: nothing to answer
		}
		id := line[i+len(key):]
		end := bytes.IndexAny(id, ",}")
		if end < 0 {
			continue
		}
		id = bytes.TrimSpace(id[:end])
		out = append(out[:0], prefix...)
		out = append(out, id...)
		out = append(out, mid...)
		out = append(out, text...)
		out = append(out, suffix...)
		if _, err := os.Stdout.Write(out); err != nil {
			os.Exit(1)
		}
	}
}
