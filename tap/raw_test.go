package tap

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// Raw bytes go on the wire as they are (several frames, a line with no
// newline when forced); a partial frame is refused with the reason unless
// forced; the session file records each frame the receiver reads with src
// inject, and a forced open end as partial.
func TestRawInjectionIsWrittenAsGivenAndAPartialFrameOnlyWhenForced(t *testing.T) {
	s := startSession(t, Options{Argv: []string{"/bin/cat"}, Framing: classify.FramingNDJSON, Record: true, Listen: true, NoRedact: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","method":"first"}`+"\n"))
	s.out.waitFor(t, "first")

	rep, err := SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Raw: true, Frame: []byte(`{"jsonrpc":"2.0","method":"a"}` + "\n" + `{"jsonrpc":"2.0","method":"b"}` + "\n")})
	if err != nil || !rep.OK {
		t.Fatalf("raw inject of two frames: %v %+v", err, rep)
	}
	s.out.waitFor(t, `"b"}`+"\n")

	partial := []byte(`{"jsonrpc":"2.0","method":"open"`)
	rep, err = SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Raw: true, Frame: partial})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || !strings.Contains(rep.Error, "partial") || !strings.Contains(rep.Error, "no line feed after them") {
		t.Fatalf("a partial frame without force: %+v, want a refusal that says why", rep)
	}
	// The stream was not touched: the host's next frame comes whole.
	s.write(t, []byte(`{"jsonrpc":"2.0","method":"second"}`+"\n"))
	s.out.waitFor(t, "second")
	if rep, err = SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Raw: true, Force: true, Frame: partial}); err != nil || !rep.OK {
		t.Fatalf("a forced partial frame: %v %+v", err, rep)
	}
	s.write(t, []byte(`,"params":{}}`+"\n"))
	s.out.waitFor(t, `"open","params":{}}`)
	s.in.Close()
	s.wait(t, generous)

	want := `{"jsonrpc":"2.0","method":"first"}` + "\n" + `{"jsonrpc":"2.0","method":"a"}` + "\n" + `{"jsonrpc":"2.0","method":"b"}` + "\n" +
		`{"jsonrpc":"2.0","method":"second"}` + "\n" + `{"jsonrpc":"2.0","method":"open","params":{}}` + "\n"
	if got := s.out.String(); got != want {
		t.Errorf("cat read %q, want %q", got, want)
	}
	_, evs, _ := readSession(t, s.tap.Path())
	var injected []string
	for _, e := range evs {
		if e.IsFrame() && e.Dir == classify.H2S && e.Src == sessions.SrcInject {
			injected = append(injected, string(e.Frame)+map[bool]string{true: " (partial)"}[e.Partial])
		}
	}
	wantInj := []string{`{"jsonrpc":"2.0","method":"a"}`, `{"jsonrpc":"2.0","method":"b"}`, string(partial) + " (partial)"}
	if strings.Join(injected, "|") != strings.Join(wantInj, "|") {
		t.Errorf("recorded injections %q, want %q", injected, wantInj)
	}
	if r := replay(evs, classify.H2S, classify.FramingNDJSON); string(r) != want {
		t.Errorf("the h2s records replay %q, want what cat read, %q", r, want)
	}
}

// On an lsp stream, a raw frame keeps its hand-made header, recorded as the
// frame's header block.
func TestRawLSPInjectionKeepsItsHandMadeHeader(t *testing.T) {
	s := startSession(t, Options{Argv: []string{"/bin/cat"}, Framing: classify.FramingLSP, Record: true, Listen: true, NoRedact: true})
	first := `{"jsonrpc":"2.0","method":"first"}`
	s.write(t, fmt.Appendf(nil, "Content-Length: %d\r\n\r\n%s", len(first), first))
	s.out.waitFor(t, "first")
	body := `{"jsonrpc":"2.0","method":"x"}`
	frame := "Content-Length: 30\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + body
	if rep, err := SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Raw: true, Frame: []byte(frame)}); err != nil || !rep.OK {
		t.Fatalf("raw lsp inject: %v %+v", err, rep)
	}
	rep, _ := SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Raw: true, Frame: []byte("Content-Length: 99\r\n\r\n" + body)})
	if rep.OK || !strings.Contains(rep.Error, "lsp frame") {
		t.Errorf("a short lsp body without force: %+v, want a refusal that says why", rep)
	}
	s.out.waitFor(t, `"x"}`)
	s.in.Close()
	s.wait(t, generous)
	_, evs, _ := readSession(t, s.tap.Path())
	found := false
	for _, e := range evs {
		if e.IsFrame() && e.Src == sessions.SrcInject {
			found = string(e.Frame) == body && bytes.HasPrefix([]byte(frame), e.Header) && len(e.Header) == len(frame)-len(body)
		}
	}
	if !found {
		t.Errorf("the raw frame was not recorded with its body and header: %+v", evs)
	}
}

// A kept capture (the view's) holds however late the answer comes: the
// answer is recorded as captured and never reaches the host, though no one
// waits for it on the socket.
func TestKeptCaptureHoldsALateAnswerFromTheHost(t *testing.T) {
	answer := `while read -r l; do sleep 1; id=$(printf '%s' "$l" | sed 's/.*"id":"\([^"]*\)".*/\1/'); printf '{"jsonrpc":"2.0","id":"%s","result":{}}\n' "$id"; done`
	s := startSession(t, Options{Argv: sh(answer), Framing: classify.FramingNDJSON, Record: true, Listen: true, NoRedact: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"warm","method":"ping"}`+"\n"))
	s.out.waitFor(t, "warm")
	start := time.Now()
	rep, err := SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Capture: true, Keep: true, Wait: 100 * time.Millisecond, Frame: []byte(`{"jsonrpc":"2.0","id":"rpctap-1","method":"ping"}`)})
	if err != nil || !rep.OK || rep.ID != `"rpctap-1"` {
		t.Fatalf("inject: %v %+v", err, rep)
	}
	if time.Since(start) > 900*time.Millisecond {
		t.Errorf("a kept capture waited %v for the answer; it should not wait", time.Since(start))
	}
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"after","method":"ping"}`+"\n"))
	s.out.waitFor(t, `"after"`) // answered after rpctap-1
	s.in.Close()
	s.wait(t, generous)
	if strings.Contains(s.out.String(), "rpctap-1") {
		t.Errorf("the host read the answer to the injected request: %q", s.out.String())
	}
	_, evs, _ := readSession(t, s.tap.Path())
	captured := false
	for _, e := range evs {
		captured = captured || e.Dir == classify.S2H && e.Captured && bytes.Contains(e.Frame, []byte(`"rpctap-1"`))
	}
	if !captured {
		t.Error("the answer was not recorded as captured")
	}
}
