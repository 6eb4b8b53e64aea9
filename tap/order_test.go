package tap

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Frames are recorded in order across directions: a frame is handed to the
// recorder before its receiver can read it, so the answer it brings about
// is never recorded before it (the tracker, live and in rpctap check, would
// call that answer unmatched). The receiver here answers the moment it
// reads, as a fast server on another core does.
func TestFrameIsRecordedBeforeItsReceiverCanAnswerIt(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(it item) {
		if it.eof {
			return
		}
		mu.Lock()
		order = append(order, fmt.Sprintf("%s %s", it.dir, strings.TrimSpace(string(it.data))))
		mu.Unlock()
	}
	server := writerFunc(func(p []byte) (int, error) {
		note(item{dir: classify.S2H, data: []byte("answer to " + strings.TrimSpace(string(p)))})
		return len(p), nil
	})
	d := &dest{dir: classify.H2S, w: server, note: note}
	inj := &injection{frame: []byte("injected\n"), parts: []injectPart{{body: []byte("injected")}}, done: make(chan error, 1)}
	d.inject(inj)
	if err := <-inj.done; err != nil {
		t.Fatal(err)
	}
	r := &relay{dir: classify.H2S, src: strings.NewReader("request\n"), dst: d, framing: classify.FramingNDJSON}
	if err := r.run(); err != nil {
		t.Fatal(err)
	}
	want := []string{"h2s injected", "s2h answer to injected", "h2s request", "s2h answer to request"}
	if strings.Join(order, "|") != strings.Join(want, "|") {
		t.Errorf("recorded in the order %q, want %q", order, want)
	}
}

// Frames are judged ahead of the tracker, in batches; a frame that arrives
// in the same read as the initialize request that makes the session MCP
// must still be judged by MCP's rules: a null request id is an error
// there, only a warning in plain JSON-RPC.
func TestFrameAfterInitializeInTheSameReadIsJudgedAsMCP(t *testing.T) {
	s := startSession(t, Options{Argv: []string{"/bin/sh", "-c", "cat >/dev/null"}, Framing: classify.FramingNDJSON, Record: true, NoRedact: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`+"\n"))
	s.in.Close()
	s.wait(t, generous)
	r := s.tap.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tracker.Profile() != classify.MCP {
		t.Fatalf("the session was judged as %s, want mcp", r.tracker.Profile())
	}
	if r.frames != 2 || r.errs != 1 {
		t.Errorf("the tap counted %d frames, %d with errors; want 2, the null-id request an error under MCP", r.frames, r.errs)
	}
}

// The tap counts the errors of frames the user wrote apart from the
// peers': what ls shows as a tap's errors is the peers' alone.
func TestTheTapCountsTheErrorsOfInjectedFramesApart(t *testing.T) {
	s := startSession(t, Options{Argv: []string{"/bin/sh", "-c", "cat >/dev/null"}, Framing: classify.FramingNDJSON, Record: true, NoRedact: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}`+"\n"))
	if _, err := s.tap.Inject(classify.H2S, []byte(`{"jsonrpc":"2.0","id":{"n":2},"method":"ping"}`), InjectOptions{}); err != nil {
		t.Fatal(err)
	}
	s.in.Close()
	s.wait(t, generous)
	r := s.tap.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.frames != 2 || r.errs != 1 || r.userErrs != 1 {
		t.Errorf("the tap counted %d frames, %d with the peers' errors, %d with the user's; want 2, 1, 1", r.frames, r.errs, r.userErrs)
	}
}
