package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// recordInspectorOverHTTP records in the session file record what the
// inspector CLI's calls (each a run of its own, with the inspector
// arguments extra) send through rpctap http in front of target, given
// the arguments tapArgs too.
func recordInspectorOverHTTP(t *testing.T, target, record string, tapArgs, extra []string, calls ...[]string) {
	t.Helper()
	inspector := needPeer(t, "node_modules/.bin/inspector")
	tp := exec.Command(rpctapBinary(t), append([]string{"http", "--target", target, "--record", record, "--no-listen"}, tapArgs...)...)
	given := startLine(t, tp, "http://")
	for _, call := range calls {
		args := append([]string{"--cli", "--transport", "http", "--server-url", given}, extra...)
		timed(t, filepath.Dir(record), inspector, append(args, call...)...)
	}
	tp.Process.Signal(syscall.SIGINT)
	if err := tp.Wait(); err != nil {
		t.Fatalf("rpctap http ended with %v on SIGINT, want status 0", err)
	}
}

// hostileOrigin is an Origin header a host sends with a right-to-left
// override in it. A header goes out as bytes (latin-1 characters), so
// the override's UTF-8 bytes are given to the inspector one by one.
const hostileOrigin = "http://evil\u00e2\u0080\u00ae.example"

// In tmux at 80×24 and at 200×50, rpctap ui of a session the inspector
// CLI made through rpctap http with server-everything: the list says
// what HTTP did on each frame of kind http ("HTTP 202", "GET stream
// opened", "SSE priming event"), and the detail pane shows a frame's
// exchange, request, status, content type, SSE event id and recorded
// headers, a hostile header value escaped (never the raw override).
func TestTheViewShowsWhatHTTPDidOnEachFrameAndTheHeadersEscaped(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(dir, "http.jsonl")
	recordInspectorOverHTTP(t, startEverythingHTTP(t), record, nil, []string{"--header", "Origin: " + hostileOrigin},
		[]string{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"})
	env := watchEnv(t, dir)
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		waitfor, keys, screen := tmuxScreen(t, size[0], size[1], env[len(env)-3:], rpctapBinary(t), "ui", record)
		waitfor("tools/call")
		keys("g")
		waitfor("initialize", "SSE priming event", "HTTP 202")
		for range 6 {
			keys("Down")
		}
		waitfor("GET stream opened")
		keys("/")
		keys("-l", "kind:request method:tools/call")
		keys("Enter")
		waitfor("HTTP", "exchange ", "· POST /mcp", "content type application/json", "Mcp-Session-Id: ")
		keys("Enter") // the detail pane has focus: the headers are a few lines down
		for range 8 {
			keys("Down")
		}
		waitfor(`Origin: http://evil\u202e.example`)
		if s := screen(); strings.ContainsRune(s, '\u202e') {
			t.Errorf("at %dx%d a peer's right-to-left override reached the terminal raw:\n%s", size[0], size[1], s)
		}
		keys("q")
		keys("q")
	}
}
