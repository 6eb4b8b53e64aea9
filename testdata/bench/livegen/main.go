// Command livegen is framegen (testdata/bench/framegen) with pacing: it
// writes N newline-delimited JSON-RPC frames of a fixed size to stdout, the
// same frames framegen writes, at RATE frames a second (0: as fast as the
// reader takes them). With -start-file it waits for that file to exist
// before the first frame, so that a live view can attach first. It is the
// server (CMD) of .ci/bench/live. At the end it says on stderr what it
// wrote, how long it took from the first frame to the last byte written,
// and how far behind its schedule it fell at worst:
//
//	livegen: BYTES bytes FRAMES frames SECS s RATE frames/s behind MS ms
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 500000, "frames to write")
	size := flag.Int("size", 1024, "bytes per frame, newline included")
	kind := flag.String("kind", "result", "request (tools/call) or result (its answer)")
	rate := flag.Float64("rate", 0, "frames a second (0: unpaced)")
	startFile := flag.String("start-file", "", "wait for this file to exist before writing")
	startWait := flag.Duration("start-wait", 30*time.Second, "how long to wait for -start-file")
	flag.Parse()

	var prefix, middle, suffix string
	switch *kind {
	case "request":
		prefix = `{"jsonrpc":"2.0","id":`
		middle = `,"method":"tools/call","params":{"name":"edit_file","arguments":{"path":"/home/dev/project/src/server.go","dryRun":false,"newText":"`
		suffix = `"}}}`
	case "result":
		prefix = `{"jsonrpc":"2.0","id":`
		middle = `,"result":{"content":[{"type":"text","text":"`
		suffix = `"}],"structuredContent":{"matches":12,"truncated":false},"isError":false}}`
	default:
		fail("-kind is request or result")
	}
	// framegen's "code" content: tool text as it looks on the wire.
	filler := strings.Repeat(`func (s *Server) Handle(ctx context.Context, req *Request) error {\n\tif req.ID == nil { return errors.New(\"no id\") }\n`, 40)

	if *startFile != "" {
		deadline := time.Now().Add(*startWait)
		for {
			if _, err := os.Stat(*startFile); err == nil {
				break
			}
			if time.Now().After(deadline) {
				fail("no " + *startFile + " after " + startWait.String())
			}
			time.Sleep(time.Millisecond)
		}
	}

	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	frame := make([]byte, 0, *size+64)
	var total int64
	var behind time.Duration
	start := time.Now()
	var interval time.Duration
	if *rate > 0 {
		interval = time.Duration(float64(time.Second) / *rate)
	}
	for i := 1; i <= *n; i++ {
		if interval > 0 {
			// Frame i is due at start + (i-1)*interval: write what is
			// due, flush, and sleep until the next one is due.
			due := start.Add(time.Duration(i-1) * interval)
			if now := time.Now(); now.Before(due) {
				if err := out.Flush(); err != nil {
					fail(err.Error())
				}
				time.Sleep(due.Sub(time.Now()))
			} else if late := now.Sub(due); late > behind {
				behind = late
			}
		}
		frame = append(frame[:0], prefix...)
		frame = strconv.AppendInt(frame, int64(i), 10)
		frame = append(frame, middle...)
		pad := max(*size-len(frame)-len(suffix)-1, 0)
		text := filler[:min(pad, len(filler))]
		for strings.HasSuffix(text, `\`) && !strings.HasSuffix(text, `\\`) {
			text = text[:len(text)-1]
		}
		frame = append(frame, text...)
		for len(frame)+len(suffix)+1 < *size {
			frame = append(frame, ' ')
		}
		frame = append(frame, suffix...)
		frame = append(frame, '\n')
		if _, err := out.Write(frame); err != nil {
			fail(err.Error())
		}
		total += int64(len(frame))
	}
	if err := out.Flush(); err != nil {
		fail(err.Error())
	}
	secs := time.Since(start).Seconds()
	fmt.Fprintf(os.Stderr, "livegen: %d bytes %d frames %.4f s %.0f frames/s behind %.1f ms\n",
		total, *n, secs, float64(*n)/secs, float64(behind)/1e6)
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "livegen:", msg)
	os.Exit(1)
}
