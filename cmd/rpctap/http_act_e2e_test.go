package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
)

// httpTapped is server-everything in streamableHttp mode behind rpctap
// http, with a live socket, recording.
type httpTapped struct {
	bin, name, record, target, given string
}

func startHTTPTapped(t *testing.T) *httpTapped {
	t.Helper()
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	h := &httpTapped{bin: rpctapBinary(t), name: fmt.Sprintf("e2e-hact-%d", time.Now().UnixNano())}
	port := freePort(t)
	srv := exec.Command(server, "streamableHttp")
	srv.Env = append(os.Environ(), "PORT="+port)
	startLine(t, srv, "listening on port")
	h.target = "http://127.0.0.1:" + port + "/mcp"
	h.record = filepath.Join(t.TempDir(), "s.jsonl")
	h.given = startLine(t, exec.Command(h.bin, "http", "--target", h.target, "--record", h.record, "--name", h.name), "http://")
	return h
}

// inject runs rpctap inject into the tap, and returns its output and
// exit status.
func (h *httpTapped) inject(args ...string) (string, int) {
	out, err := exec.Command(h.bin, append([]string{"inject", "--tap", h.name}, args...)...).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	return string(out), 0
}

// waitRecorded waits until the session file holds substr.
func (h *httpTapped) waitRecorded(t *testing.T, substr string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(h.record); bytes.Contains(b, []byte(substr)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session file never held %q", substr)
		}
	}
}

// inspect runs the inspector CLI against url with args, and returns what
// it printed and its exit status.
func inspect(t *testing.T, url string, args ...string) (string, int) {
	t.Helper()
	inspector := needPeer(t, "node_modules/.bin/inspector")
	cmd := exec.Command(inspector, append([]string{"--cli", "--transport", "http", "--server-url", url}, args...)...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// Over HTTP, a tools/call injected while the inspector's own call is
// under way goes to server-everything as rpctap's own POST, with the
// host's session: its answer comes back to rpctap inject, is recorded as
// captured, and the inspector prints what it prints without it.
func TestInjectedToolCallOverHTTPIsAnsweredToRpctapAndTheInspectorSeesNothingOfIt(t *testing.T) {
	h := startHTTPTapped(t)
	if out, code := h.inject("--capture", "--method", "tools/call", "--tool", "echo", "--arg", "message=injected"); code == 0 || !strings.Contains(out, "the host has sent no request yet") {
		t.Errorf("inject before the host's first request (exit %d): %s", code, out)
	}
	call := []string{"--method", "tools/call", "--tool-name", "trigger-long-running-operation", "--tool-arg", "duration=2", "--tool-arg", "steps=2"}
	direct, directCode := inspect(t, h.target, call...)
	if !strings.Contains(direct, "Long running operation completed") {
		t.Fatalf("the inspector, direct (exit %d): %s", directCode, direct)
	}
	type result struct {
		out  string
		code int
	}
	host := make(chan result, 1)
	go func() {
		out, code := inspect(t, h.given, call...)
		host <- result{out, code}
	}()
	h.waitRecorded(t, `trigger-long-running-operation\",\"arguments`) // the host's call, not the instructions that name it
	captured, code := h.inject("--capture", "--method", "tools/call", "--tool", "echo", "--arg", "message=injected")
	if code != 0 || !strings.Contains(captured, "Echo: injected") {
		t.Errorf("the injected call's answer (exit %d): %s", code, captured)
	}
	tapped := <-host
	if tapped.out != direct || tapped.code != directCode {
		t.Errorf("the inspector's output changed with an injection:\n direct (exit %d): %s\n tapped (exit %d): %s", directCode, direct, tapped.code, tapped.out)
	}
	_, evs := readFrames(t, h.record)
	var sessionID, injected string
	for _, ev := range evs {
		var x httpObject
		if err := json.Unmarshal(ev.HTTP, &x); err != nil {
			t.Fatal(err)
		}
		m := classify.Classify(ev.Frame, ev.Dir, classify.JSONRPC)
		switch {
		case ev.Src == sessions.SrcInject:
			injected = x.Headers["Mcp-Session-Id"]
			if ev.Dir != classify.H2S || m.Method() != "tools/call" || x.Method != "POST" {
				t.Errorf("the injected frame is recorded as %v %s over %s", ev.Dir, m.Method(), x.Method)
			}
		case ev.Dir == classify.H2S && m.Method() == "tools/call":
			sessionID = x.Headers["Mcp-Session-Id"]
		case bytes.Contains(ev.Frame, []byte("Echo: injected")):
			if !ev.Captured || ev.Dir != classify.S2H {
				t.Errorf("the injected call's answer is recorded %v, captured %v", ev.Dir, ev.Captured)
			}
		}
	}
	if sessionID == "" || injected != sessionID {
		t.Errorf("the injected request carried session %q; the host's call %q", injected, sessionID)
	}
}

// Over HTTP, a view that holds tools/call holds the inspector's request
// before rpctap forwards it: server-everything gets the view's edit, and
// a call the view answers in its place never reaches it.
func TestInterceptOverHTTPHoldsTheInspectorsCallAndTheServerGetsTheEdit(t *testing.T) {
	h := startHTTPTapped(t)
	filter := "method:tools/call"
	w := openHold(t, h.name, &filter, nil)
	w.waitFor(t, "the filter is set", func(ev tap.HoldEvent) bool { return ev.OK != nil && ev.Act == "filter" })
	run := func(decide func(call tap.HeldFrame)) (string, int) {
		done := make(chan struct{})
		var out string
		var code int
		go func() {
			defer close(done)
			out, code = inspect(t, h.given, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=as sent")
		}()
		decide(w.held(t, `"tools/call"`))
		<-done
		return out, code
	}
	out, code := run(func(call tap.HeldFrame) {
		w.c.Edit(call.N, []byte(strings.Replace(call.Frame, "as sent", "as edited in the view", 1)))
		w.answered(t, "edit", call.N)
	})
	if code != 0 || !strings.Contains(out, "Echo: as edited in the view") {
		t.Errorf("the inspector (exit %d) printed: %s", code, out)
	}
	w.mu.Lock()
	w.evs = nil // the next call is held afresh
	w.mu.Unlock()
	out, code = run(func(call tap.HeldFrame) {
		m := classify.Classify(call.Bytes(), classify.H2S, classify.JSONRPC)
		w.c.Reply(call.N, []byte(`{"jsonrpc":"2.0","id":`+string(m.ID().Raw)+`,"result":{"content":[{"type":"text","text":"typed in the view"}]}}`))
		w.answered(t, "reply", call.N)
	})
	if code != 0 || !strings.Contains(out, "typed in the view") {
		t.Errorf("the inspector (exit %d) printed: %s", code, out)
	}
	rec, _ := os.ReadFile(h.record)
	if n := bytes.Count(rec, []byte("Echo: as ")); n != 1 || !bytes.Contains(rec, []byte(`"src":"edit"`)) || !bytes.Contains(rec, []byte(`"held":"answered"`)) {
		t.Errorf("the session file has %d answers from the server (want the edit's only), or lacks the edit or the reply:\n%s", n, rec)
	}
}

// Over HTTP, a roots/list injected toward the inspector while its call
// is under way goes into the inspector's open stream: the inspector
// answers it, and its answer comes back to rpctap inject, kept from
// server-everything; the inspector prints what it prints without it.
func TestARequestInjectedTowardTheInspectorOverHTTPIsAnsweredToRpctap(t *testing.T) {
	h := startHTTPTapped(t)
	call := []string{"--method", "tools/call", "--tool-name", "trigger-long-running-operation", "--tool-arg", "duration=3", "--tool-arg", "steps=3"}
	direct, directCode := inspect(t, h.target, call...)
	type result struct {
		out  string
		code int
	}
	host := make(chan result, 1)
	go func() {
		out, code := inspect(t, h.given, call...)
		host <- result{out, code}
	}()
	h.waitRecorded(t, `trigger-long-running-operation\",\"arguments`)
	answer, code := h.inject("--dir", "s2h", "--capture", `{"jsonrpc":"2.0","id":"rpctap-r1","method":"roots/list"}`)
	if code != 0 || !strings.Contains(answer, `"roots"`) {
		t.Errorf("the inspector's answer to the injected roots/list (exit %d): %s", code, answer)
	}
	tapped := <-host
	if tapped.out != direct || tapped.code != directCode {
		t.Errorf("the inspector's output changed with an injection:\n direct (exit %d): %s\n tapped (exit %d): %s", directCode, direct, tapped.code, tapped.out)
	}
	rec, _ := os.ReadFile(h.record)
	if !bytes.Contains(rec, []byte(`"dir":"s2h","src":"inject","kind":"request","id":"rpctap-r1"`)) || !bytes.Contains(rec, []byte(`"dir":"h2s","captured":true,"kind":"response","id":"rpctap-r1"`)) {
		t.Errorf("the session file lacks the injected request or the inspector's captured answer:\n%s", rec)
	}
}

// Over HTTP, a view that holds the answers to tools/call holds
// server-everything's answer before it reaches the inspector, and the
// inspector prints the view's edit.
func TestInterceptOverHTTPHoldsTheServersAnswerAndTheInspectorPrintsTheEdit(t *testing.T) {
	h := startHTTPTapped(t)
	filter := "method:tools/call"
	w := openHold(t, h.name, nil, &filter)
	w.waitFor(t, "the filter is set", func(ev tap.HoldEvent) bool { return ev.OK != nil && ev.Act == "filter" })
	done := make(chan struct{})
	var out string
	var code int
	go func() {
		defer close(done)
		out, code = inspect(t, h.given, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=as sent")
	}()
	answer := w.held(t, "Echo: as sent")
	if answer.Dir != "s2h" {
		t.Fatalf("the view held %+v, want the server's answer", answer)
	}
	w.c.Edit(answer.N, []byte(strings.Replace(answer.Frame, "Echo: as sent", "Echo: as edited in the view", 1)))
	w.answered(t, "edit", answer.N)
	<-done
	if code != 0 || !strings.Contains(out, "Echo: as edited in the view") {
		t.Errorf("the inspector (exit %d) printed: %s", code, out)
	}
	rec, _ := os.ReadFile(h.record)
	if !bytes.Contains(rec, []byte(`"dir":"s2h","src":"edit","held":"edited"`)) {
		t.Errorf("the session file lacks the edited answer:\n%s", rec)
	}
}
