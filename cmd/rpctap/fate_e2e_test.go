package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpctap/rpctap/sessions"
)

// runBinary runs the built binary and returns its stdout and exit status.
func runBinary(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(rpctapBinary(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("rpctap %s: %v\n%s", strings.Join(args, " "), err, errb.Bytes())
	}
	return out.String(), 0
}

// lineWith is the line of out that holds every one of subs, or "".
func lineWith(out string, subs ...string) string {
	for _, l := range strings.Split(out, "\n") {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			return l
		}
	}
	return ""
}

// Through the built binary, between the test as host and
// server-everything, with rpctap run --intercept holding the host's
// tools/call: one call forwarded, one dropped, one answered in place, one
// edited, one left until its hold time runs out; a request injected with
// its answer captured, a catalog frame injected; and a call still owed
// when the server is stopped. Then tail, tail --json, check (every
// format) and every export of the session file say what became of each
// frame; check blames no peer for what the user did (no timeout for the
// dropped call, the injected frame's findings apart), and reports the
// call owed at the end.
func TestEveryOutputSaysWhatBecameOfEachFrameWithServerEverything(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	name := fmt.Sprintf("e2e-fate-%d", time.Now().UnixNano())
	h := startLiveHostWith(t, name, []string{"--intercept", "dir:h2s method:tools/call", "--hold-timeout", "2s"}, server, "stdio")
	w := openHold(t, name, nil, nil)
	h.handshake(t)
	call := func(id int, msg string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":%q}}}`, id, msg)
	}

	h.send(t, call(1, "forwarded as it was"))
	f := w.held(t, "forwarded as it was")
	w.c.Forward(f.N)
	w.answered(t, "forward", f.N)
	h.waitLine(t, "Echo: forwarded as it was")

	h.send(t, call(2, "dropped in the view"))
	d := w.held(t, "dropped in the view")
	w.c.Drop(d.N)
	w.answered(t, "drop", d.N)

	h.send(t, call(3, "answered in its place"))
	a := w.held(t, "answered in its place")
	w.c.Reply(a.N, []byte(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"typed in the view"}]}}`))
	w.answered(t, "reply", a.N)
	h.waitLine(t, "typed in the view")

	h.send(t, call(4, "as sent"))
	e := w.held(t, `"as sent"`)
	w.c.Edit(e.N, []byte(call(4, "as edited in the view")))
	w.answered(t, "edit", e.N)
	h.waitLine(t, "Echo: as edited in the view")

	h.send(t, call(5, "left to expire"))
	x := w.held(t, "left to expire")
	if how := w.released(t, x.N); how != sessions.HeldTimeout {
		t.Errorf("the frame left to expire went %s", how)
	}
	h.waitLine(t, "Echo: left to expire")

	if out, code := h.inject(t, "--capture", "--wait", "20s", `{"jsonrpc":"2.0","id":"rpctap-fate","method":"ping"}`); code != 0 {
		t.Fatalf("inject --capture: exit %d: %s", code, out)
	}
	if out, code := h.inject(t, "--catalog", "object-id"); code != 0 {
		t.Fatalf("inject --catalog object-id: exit %d: %s", code, out)
	}

	// A call the server still owes when it is stopped.
	h.send(t, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":60,"steps":2}}}`)
	l := w.held(t, "trigger-long-running-operation")
	w.c.Forward(l.N)
	w.answered(t, "forward", l.N)
	h.waitRecorded(t, "trigger-long-running-operation")
	// Past the 1 s check judges by below, so that it times out there.
	time.Sleep(1500 * time.Millisecond)
	h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the tap did not end on SIGTERM")
	}
	h.cmd.Wait()
	h.noRace(t)
	file := h.record

	// tail: a word for each fate, the edit's original.
	tail, code := runBinary(t, "tail", file)
	if code != 0 {
		t.Fatalf("tail: exit %d", code)
	}
	for _, want := range [][]string{
		{`"forwarded as it was"`, "fate=held "},
		{`"dropped in the view"`, "fate=held,dropped"},
		{`"answered in its place"`, "fate=held,answered-in-place"},
		{"typed in the view", "← response", "fate=injected"},
		{"as edited in the view", "fate=edited,held", `original: {"jsonrpc":"2.0","id":4`, `"as sent"`},
		{`"left to expire"`, "fate=held,expired"},
		{`"rpctap-fate","method"`, "fate=injected"},
		{`"rpctap-fate"`, "← response", "fate=captured"},
		{"trigger-long-running-operation", "[unanswered-at-end]", "fate=held "},
	} {
		if lineWith(tail, want...) == "" {
			t.Errorf("tail has no line with %q:\n%s", want, tail)
		}
	}

	// tail --json: the fate of each frame, with its words and the
	// record's fields.
	js, _ := runBinary(t, "tail", "--json", file)
	fates := map[string]string{} // a frame's distinguishing text → its fate words
	sc := bufio.NewScanner(strings.NewReader(js))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Frame json.RawMessage `json:"frame"`
			Fate  struct {
				Words    []string        `json:"words"`
				Held     string          `json:"held"`
				Src      string          `json:"src"`
				Original json.RawMessage `json:"original"`
			} `json:"fate"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("tail --json printed %q: %v", sc.Text(), err)
		}
		// The host's messages in quotes: not the echoes of them.
		for _, key := range []string{`"forwarded as it was"`, `"dropped in the view"`, `"answered in its place"`, "typed in the view", `"as edited in the view"`, `"left to expire"`, "rpctap-fate"} {
			if bytes.Contains(rec.Frame, []byte(key)) {
				fates[key] += strings.Join(rec.Fate.Words, ",") + ";"
				if key == `"as edited in the view"` && !bytes.Contains(rec.Fate.Original, []byte(`"as sent"`)) {
					t.Errorf("tail --json gives the edit no original: %s", sc.Text())
				}
			}
		}
	}
	for key, want := range map[string]string{`"forwarded as it was"`: "held;", `"dropped in the view"`: "held,dropped;", `"answered in its place"`: "held,answered-in-place;",
		"typed in the view": "injected;", `"as edited in the view"`: "edited,held;", `"left to expire"`: "held,expired;", "rpctap-fate": "injected;captured;"} {
		if fates[key] != want {
			t.Errorf("tail --json: the fate of the frame with %q is %q, want %q", key, fates[key], want)
		}
	}

	// check: the dropped call is no timeout of the server's, even judged
	// by a 1 s timeout; the injected frame's findings are the user's and
	// fail nothing unless asked; the call owed at the end is reported.
	text, code := runBinary(t, "check", file)
	if code != 0 {
		t.Errorf("check failed on the user's own findings (exit %d):\n%s", code, text)
	}
	owed := lineWith(text, "unanswered-at-end", "tools/call")
	yours := strings.Index(text, "YOURS (")
	if owed == "" || yours < 0 || !strings.Contains(text[yours:], "bad-id") || !strings.Contains(text[yours:], "fate: injected by the user") {
		t.Errorf("check does not report the call owed at the end, or the injected frame's findings apart:\n%s", text)
	}
	if _, code := runBinary(t, "check", "--fail-on-injected", file); code != 1 {
		t.Errorf("check --fail-on-injected exits %d, want 1", code)
	}
	strict, _ := runBinary(t, "check", "--timeout", "1s", "--format", "json", file)
	var doc struct {
		Findings []struct {
			Code   string          `json:"code"`
			ID     json.RawMessage `json:"id"`
			ByUser bool            `json:"by_user"`
			Fate   *struct {
				Words []string `json:"words"`
			} `json:"fate"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(strict), &doc); err != nil {
		t.Fatalf("check --format json: %v\n%s", err, strict)
	}
	timedOut := false
	for _, f := range doc.Findings {
		if string(f.ID) == "2" || string(f.ID) == "3" {
			t.Errorf("check blames a peer for the call the user dropped or answered in place: %+v", f)
		}
		if string(f.ID) == "6" && f.Code == "timeout" {
			timedOut = true
			if f.Fate == nil || strings.Join(f.Fate.Words, ",") != "held" {
				t.Errorf("check --format json: the held call's finding has fate %+v", f.Fate)
			}
		}
	}
	if !timedOut {
		t.Errorf("judged by 1 s, the long call did not time out:\n%s", strict)
	}
	for format, want := range map[string][]string{
		"sarif": {`"ruleId":"unanswered-at-end"`, `"id":"unanswered-at-end"`, `"suppressions":[{"kind":"external"`, `"fate":{"words":["held"]`},
		"junit": {`name="unanswered-at-end"`, "(yours: about a frame you injected or edited)", "fate: injected by the user"},
	} {
		out, _ := runBinary(t, "check", "--format", format, file)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("check --format %s lacks %q:\n%s", format, w, out)
			}
		}
	}

	// Every export.
	for format, want := range map[string][]string{
		"markdown": {"held", "then dropped by the user: its receiver never read it", "then answered in place by the user", "injected by the user",
			"forwarded as the user edited it", "The original, as it came in", `"as sent"`, "expired: its hold time ran out", "captured: kept from the side"},
		"html": {"then dropped by the user: its receiver never read it", "then answered in place by the user", "injected by the user",
			"the original, as it came in", "expired: its hold time ran out", "captured: kept from the side"},
		"mermaid": {"participant R as rpctap", "H-xR: ", "#91;held, dropped", "#91;held, answered-in-place", "R-->>H: ", "#91;injected#93;",
			"S-->>R: ", "#91;captured#93;", "#91;edited, held", "#91;held, expired"},
		"json": {`"words":["held","dropped"]`, `"status":"dropped"`, `"words":["held","answered-in-place"]`, `"words":["captured"]`,
			`"words":["edited","held"]`, `"as sent"`, `"words":["held","expired"]`},
		"har":  {`"request_fate":{"words":["held","dropped"]`, `"response_fate":{"words":["injected"]`, `"response_fate":{"words":["captured"]`, `"request_fate":{"words":["edited","held"]`},
		"otlp": {`"stringValue":"held dropped"`, `"stringValue":"held answered-in-place"`, `"stringValue":"captured"`, `"stringValue":"edited held"`, `"stringValue":"held expired"`},
	} {
		out, code := runBinary(t, "export", file, "--format", format)
		if code != 0 {
			t.Errorf("export --format %s: exit %d", format, code)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("export --format %s lacks %q:\n%s", format, w, out)
			}
		}
		if format == "mermaid" && lineWith(out, "H->>S", "dropped") != "" {
			t.Errorf("Mermaid draws the dropped call as delivered:\n%s", out)
		}
	}

	// The filter language names each fate, for tail --filter and the view.
	for expr, want := range map[string]string{"fate:dropped": "dropped in the view", "fate:answered-in-place": "answered in its place",
		"fate:captured": `"rpctap-fate"`, "fate:edited": "as edited in the view", "fate:expired": "left to expire"} {
		out, _ := runBinary(t, "tail", "--filter", expr, file)
		if n := strings.Count(strings.TrimSpace(out), "\n") + 1; !strings.Contains(out, want) || n != 1 {
			t.Errorf("tail --filter %s printed %d lines, want the one with %s:\n%s", expr, n, want, out)
		}
	}
}

// A view of a live tap that holds frames says so at once, in its header
// and on its status line, with the key that shows them; once the frame
// is forwarded, neither counts it. Through the built binary: rpctap run
// --intercept between the test as host and server-everything, rpctap ui
// on it in tmux, at 80×24 and at 160×40.
func TestTheViewCountsHeldFramesAndNamesTheKeyThatShowsThem(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	for _, size := range [][2]int{{80, 24}, {160, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			name := fmt.Sprintf("e2e-heldcount-%d", time.Now().UnixNano())
			h := startLiveHostWith(t, name, []string{"--intercept", "dir:h2s method:tools/call"}, server, "stdio")
			h.handshake(t)
			waitfor, keys, screen := tmuxScreen(t, size[0], size[1], nil, rpctapBinary(t), "ui", name)
			waitfor("← response", "→ notification")
			if s := screen(); strings.Contains(s, " held ") {
				t.Fatalf("the header counts held frames before any is held:\n%s", s)
			}
			h.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hold me"}}}`)
			waitfor("1 held H", "the tap holds 1 frame for you: H shows it")
			keys("H")
			waitfor("Held (1)", "tools/call id 1")
			keys("f")
			h.waitLine(t, "Echo: hold me")
			waitfor("HELD") // the row of the frame that was held
			for deadline := time.Now().Add(10 * time.Second); strings.Contains(screen(), "1 held"); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the header still counts the forwarded frame:\n%s", screen())
				}
			}
			h.close(t)
		})
	}
}

// The live view of a tap says unanswered-at-end once the server exits
// with a call owed: the demo's own view (its tap in the same process), in
// tmux, on the step where the demo server quits before it answers.
func TestTheLiveViewShowsACallOwedWhenTheServerExits(t *testing.T) {
	dir := t.TempDir()
	waitfor, _, _ := tmuxScreen(t, 100, 30, []string{"XDG_STATE_HOME=" + dir, "XDG_RUNTIME_DIR=" + dir}, rpctapBinary(t),
		"demo", "--scenario", "exit-with-work-owed", "--speed", "40", "--record", filepath.Join(dir, "demo.jsonl"))
	waitfor("demo-strict  ended", "1 warn", "host → server  request", "id 3 · tools/call", "warn  unanswered-at-end  The session ended with this")
}
