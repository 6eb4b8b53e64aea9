// Command gensession writes a synthetic session file of N request/response
// pairs of about 1 KiB frames, for benchmarking check and the UI.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

func main() {
	n := flag.Int("frames", 200_000, "frames to write (half requests, half responses)")
	out := flag.String("o", "", "output file (default stdout)")
	window := flag.Int("window", 1, "requests the host sends before their answers come, as a host with calls in flight (1: each answer before the next request)")
	tools := flag.Int("tools", 0, "list this many tools (echo, tool-1, …, each with an inputSchema its calls match) before the calls")
	spread := flag.Int("spread", 1, "call this many tools in turn (echo, tool-1, …), whether or not they are listed")
	flag.Parse()
	w := os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gensession:", err)
			os.Exit(1)
		}
		defer f.Close()
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	defer bw.Flush()
	sw, err := sessions.NewWriter(bw, sessions.Header{ID: "bench", Started: time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC),
		Argv: []string{"bench-server"}, Name: "bench", Framing: "ndjson", Profile: "mcp"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gensession:", err)
		os.Exit(1)
	}
	sw.WriteFrame(sessions.FrameRecord{T: 0, Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)})
	sw.WriteFrame(sessions.FrameRecord{T: 10, Dir: classify.S2H, Frame: []byte(`{"jsonrpc":"2.0","id":"init","result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}}`)})
	sw.WriteFrame(sessions.FrameRecord{T: 20, Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)})
	toolName := func(k int) string {
		if k == 0 {
			return "echo"
		}
		return fmt.Sprintf("tool-%d", k)
	}
	if *tools > 0 {
		var list []string
		for k := range *tools {
			list = append(list, fmt.Sprintf(`{"name":%q,"description":"Echoes its message back.","inputSchema":{"type":"object","properties":{"message":{"type":"string","maxLength":4096},"n":{"type":"integer","minimum":0}},"required":["message"],"additionalProperties":false}}`, toolName(k)))
		}
		sw.WriteFrame(sessions.FrameRecord{T: 30, Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`)})
		sw.WriteFrame(sessions.FrameRecord{T: 40, Dir: classify.S2H, Frame: []byte(`{"jsonrpc":"2.0","id":"list","result":{"tools":[` + strings.Join(list, ",") + `]}}`)})
	}
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)[:880]
	pairs := *n / 2
	for first := 0; first < pairs; first += max(*window, 1) {
		last := min(first+max(*window, 1), pairs)
		for i := first; i < last; i++ {
			req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"message":"%s","n":%d}}}`, i, toolName(i%max(*spread, 1)), text, i)
			sw.WriteFrame(sessions.FrameRecord{T: 100 + int64(i)*100, Dir: classify.H2S, Frame: []byte(req)})
		}
		for i := first; i < last; i++ {
			resp := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}],"isError":false}}`, i, text)
			sw.WriteFrame(sessions.FrameRecord{T: 100 + int64(last-1)*100 + 50 + int64(i-first), Dir: classify.S2H, Frame: []byte(resp)})
		}
	}
}
