// Command framegen writes N newline-delimited JSON-RPC frames of a fixed
// size to stdout: MCP tools/call requests (-kind request, what a host
// sends) or tools/call results (-kind result, what a server answers). It
// is the producer of the throughput benchmark's h2s leg and the server
// (CMD) of its s2h leg and of the live-view benchmark, which paces it with
// -rate and starts it with -start-file. With -handshake it begins with the two frames of
// the MCP handshake a host sends, so a tap judges the rest as MCP. At the
// end it says what it wrote on stderr:
//
//	framegen: BYTES bytes FRAMES frames
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
	n := flag.Int("n", 204800, "frames to write")
	size := flag.Int("size", 1024, "bytes per frame, newline included")
	kind := flag.String("kind", "request", "request (tools/call) or result (its answer)")
	bufSize := flag.Int("buf", 64<<10, "write size in bytes (1: a write per frame)")
	quiet := flag.Bool("q", false, "do not report on stderr")
	content := flag.String("content", "code", "code (source text: an escaped quote or newline every 25 bytes or so) or prose (no escapes)")
	handshake := flag.Bool("handshake", false, "begin with the MCP handshake a host sends (initialize, notifications/initialized)")
	rate := flag.Float64("rate", 0, "frames a second (0: as fast as the reader takes them)")
	startFile := flag.String("start-file", "", "wait for this file to exist before the first frame (so a live view can attach first)")
	startWait := flag.Duration("start-wait", 30*time.Second, "how long to wait for -start-file")
	flag.Parse()

	var prefix, middle, suffix string
	switch *kind {
	case "request":
		// {"jsonrpc":"2.0","id":N,"method":"tools/call","params":{...}}
		prefix = `{"jsonrpc":"2.0","id":`
		middle = `,"method":"tools/call","params":{"name":"edit_file","arguments":{"path":"/home/dev/project/src/server.go","dryRun":false,"newText":"`
		suffix = `"}}}`
	case "result":
		prefix = `{"jsonrpc":"2.0","id":`
		middle = `,"result":{"content":[{"type":"text","text":"`
		suffix = `"}],"structuredContent":{"matches":12,"truncated":false},"isError":false}}`
	default:
		fmt.Fprintln(os.Stderr, "framegen: -kind is request or result")
		os.Exit(2)
	}
	// Tool text as it looks on the wire: quotes and newlines escaped.
	filler := strings.Repeat(`func (s *Server) Handle(ctx context.Context, req *Request) error {\n\tif req.ID == nil { return errors.New(\"no id\") }\n`, 40)
	switch *content {
	case "code":
	case "prose":
		filler = strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100)
	default:
		fmt.Fprintln(os.Stderr, "framegen: -content is code or prose")
		os.Exit(2)
	}

	var out *bufio.Writer
	if *bufSize > 1 {
		out = bufio.NewWriterSize(os.Stdout, *bufSize)
	}
	frame := make([]byte, 0, *size+64)
	var total, frames int64
	if *handshake {
		for _, f := range []string{
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"framegen","version":"1.0.0"}}}` + "\n",
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n",
		} {
			var err error
			if out != nil {
				_, err = out.WriteString(f)
			} else {
				_, err = os.Stdout.WriteString(f)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "framegen:", err)
				os.Exit(1)
			}
			total += int64(len(f))
			frames++
		}
	}
	if *startFile != "" {
		deadline := time.Now().Add(*startWait)
		for {
			if _, err := os.Stat(*startFile); err == nil {
				break
			}
			if time.Now().After(deadline) {
				fmt.Fprintln(os.Stderr, "framegen: no", *startFile, "after", *startWait)
				os.Exit(1)
			}
			time.Sleep(time.Millisecond)
		}
	}
	var interval, behind time.Duration
	if *rate > 0 {
		interval = time.Duration(float64(time.Second) / *rate)
	}
	start := time.Now()
	for i := 1; i <= *n; i++ {
		if interval > 0 {
			// Frame i is due at start + (i-1)*interval: write what is
			// due, flush, and sleep until the next one is due.
			due := start.Add(time.Duration(i-1) * interval)
			if now := time.Now(); now.Before(due) {
				if out != nil {
					if err := out.Flush(); err != nil {
						fmt.Fprintln(os.Stderr, "framegen:", err)
						os.Exit(1)
					}
				}
				time.Sleep(time.Until(due))
			} else if late := now.Sub(due); late > behind {
				behind = late
			}
		}
		frame = append(frame[:0], prefix...)
		frame = strconv.AppendInt(frame, int64(i), 10)
		frame = append(frame, middle...)
		pad := *size - len(frame) - len(suffix) - 1
		if pad < 0 {
			pad = 0
		}
		text := filler[:min(pad, len(filler))] // a larger frame is padded with spaces below
		// Do not cut an escape sequence in half.
		for strings.HasSuffix(text, `\`) && !strings.HasSuffix(text, `\\`) {
			text = text[:len(text)-1]
		}
		frame = append(frame, text...)
		for len(frame)+len(suffix)+1 < *size {
			frame = append(frame, ' ')
		}
		frame = append(frame, suffix...)
		frame = append(frame, '\n')
		var err error
		if out != nil {
			_, err = out.Write(frame)
		} else {
			_, err = os.Stdout.Write(frame)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "framegen:", err)
			os.Exit(1)
		}
		total += int64(len(frame))
		frames++
	}
	if out != nil {
		if err := out.Flush(); err != nil {
			fmt.Fprintln(os.Stderr, "framegen:", err)
			os.Exit(1)
		}
	}
	switch {
	case *quiet:
	case interval > 0 || *startFile != "":
		secs := time.Since(start).Seconds()
		fmt.Fprintf(os.Stderr, "framegen: %d bytes %d frames %.4f s %.0f frames/s behind %.1f ms\n",
			total, frames, secs, float64(*n)/secs, float64(behind)/1e6)
	default:
		fmt.Fprintf(os.Stderr, "framegen: %d bytes %d frames\n", total, frames)
	}
}
