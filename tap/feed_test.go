package tap

import (
	"bufio"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// A tap of rpctap http refuses a frame to inject with a sentence that
// says why (the HTTP tap has no stream to write it into), not that its
// session has not started while the session runs.
func TestAnHTTPTapRefusesAnInjectionSayingItRelaysHTTP(t *testing.T) {
	tp, err := New(Options{Argv: []string{"http://127.0.0.1:1/mcp"}, Record: true, Path: filepath.Join(t.TempDir(), "s.jsonl"),
		Transport: sessions.TransportHTTP, Env: []string{}, Warn: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	feed := tp.Feed()
	defer feed.Close()
	feed.Frame(classify.H2S, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`), &sessions.HTTPInfo{Method: "POST", Path: "/mcp"})
	for _, dir := range []classify.Direction{classify.H2S, classify.S2H} {
		_, err := tp.Inject(dir, []byte(`{"jsonrpc":"2.0","id":"z","method":"ping"}`), InjectOptions{Capture: true})
		if !errors.Is(err, errInjectHTTP) || !strings.Contains(err.Error(), "rpctap http") {
			t.Errorf("inject %v into an HTTP tap: %v; want %q", dir, err, errInjectHTTP)
		}
	}
}

// A tap of rpctap http refuses a view that would hold its frames, with a
// sentence that says why. It took the filter, held nothing, and when the
// view went, releasing what it held panicked (the HTTP tap has no hold
// queues' streams): rpctap http crashed under the host.
func TestAnHTTPTapRefusesAnInterceptSayingItRelaysHTTP(t *testing.T) {
	tp, err := New(Options{Argv: []string{"http://127.0.0.1:1/mcp"}, Record: true, Path: filepath.Join(t.TempDir(), "s.jsonl"),
		Transport: sessions.TransportHTTP, Env: []string{}, Warn: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	feed := tp.Feed()
	defer feed.Close()
	view, c := net.Pipe()
	defer view.Close()
	filter := "method:tools/call"
	go func() {
		defer c.Close()
		tp.serveIntercept(c, bufio.NewReader(c), request{Op: "intercept", H2S: &filter})
	}()
	h := &HoldClient{c: view, r: bufio.NewReader(view)}
	ev, err := h.Next()
	if err != nil || ev.OK == nil || *ev.OK || !strings.Contains(ev.Error, "rpctap http") {
		t.Errorf("intercept on an HTTP tap: %+v, %v; want a refusal that says it relays HTTP", ev, err)
	}
}
