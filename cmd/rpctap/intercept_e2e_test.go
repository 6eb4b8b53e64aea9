package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
)

// holdWatcher is a view's intercept connection in a test: it reads what
// the tap tells, and lets the test wait for it.
type holdWatcher struct {
	c       *tap.HoldClient
	mu      sync.Mutex
	evs     []tap.HoldEvent
	changed chan struct{}
}

func openHold(t *testing.T, name string, h2s, s2h *string) *holdWatcher {
	t.Helper()
	var info tap.Info
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if info, err = tap.FindTap(name); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tap %s never came up: %v", name, err)
		}
	}
	c, err := tap.OpenHold(info.Socket, h2s, s2h)
	if err != nil {
		t.Fatal(err)
	}
	w := &holdWatcher{c: c, changed: make(chan struct{}, 1)}
	go func() {
		for {
			ev, err := c.Next()
			if err != nil {
				return
			}
			w.mu.Lock()
			w.evs = append(w.evs, ev)
			w.mu.Unlock()
			select {
			case w.changed <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() { c.Close() })
	return w
}

// waitFor waits until an event that ok accepts has come, and returns it.
func (w *holdWatcher) waitFor(t *testing.T, what string, ok func(tap.HoldEvent) bool) tap.HoldEvent {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		w.mu.Lock()
		for _, ev := range w.evs {
			if ok(ev) {
				w.mu.Unlock()
				return ev
			}
		}
		w.mu.Unlock()
		select {
		case <-w.changed:
		case <-deadline:
			evs := w.events()
			t.Fatalf("the tap never told the view %s; it told %d events, the last %+v", what, len(evs), evs[max(len(evs)-3, 0):])
		}
	}
}

func (w *holdWatcher) events() []tap.HoldEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]tap.HoldEvent(nil), w.evs...)
}

// held waits until the tap holds a frame holding substr, and returns it.
func (w *holdWatcher) held(t *testing.T, substr string) tap.HeldFrame {
	t.Helper()
	return *w.waitFor(t, "it holds "+substr, func(ev tap.HoldEvent) bool {
		return ev.Held != nil && strings.Contains(ev.Held.Frame, substr)
	}).Held
}

// released waits until the tap says frame n left it, and returns how.
func (w *holdWatcher) released(t *testing.T, n int64) string {
	t.Helper()
	return w.waitFor(t, fmt.Sprintf("frame %d left", n), func(ev tap.HoldEvent) bool {
		return ev.Released != nil && ev.Released.N == n
	}).Released.How
}

// answered waits for the answer to an action on frame n, and fails the
// test when it is an error.
func (w *holdWatcher) answered(t *testing.T, act string, n int64) {
	t.Helper()
	ev := w.waitFor(t, "how "+act+" went", func(ev tap.HoldEvent) bool { return ev.OK != nil && ev.Act == act && ev.N == n })
	if !*ev.OK {
		t.Fatalf("%s %d: %s", act, n, ev.Error)
	}
}

// flows has the other direction carry a frame, and waits until the host
// reads it: held frames toward the server do not stop it.
func (h *liveHost) flows(t *testing.T, mark string) {
	t.Helper()
	if out, code := h.inject(t, "--dir", "s2h", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`+mark+`"}}`); code != 0 {
		t.Fatalf("inject toward the host: exit %d: %s", code, out)
	}
	h.waitLine(t, mark)
}

func (h *liveHost) read(substr string) bool {
	for _, l := range h.lines() {
		if strings.Contains(l, substr) {
			return true
		}
	}
	return false
}

// noRace fails the test when the tap (built with -race) found one.
func (h *liveHost) noRace(t *testing.T) {
	t.Helper()
	if s := h.stderr.String(); strings.Contains(s, "DATA RACE") {
		t.Errorf("the tap found a data race:\n%s", s)
	}
}

// heldRecords reads the session file's frame records toward the server.
func heldRecords(t *testing.T, path string) []sessions.Event {
	t.Helper()
	_, evs := readFrames(t, path)
	return slices.DeleteFunc(evs, func(ev sessions.Event) bool { return ev.Dir == classify.Err })
}

// Through the built binary, with cat as the server (it echoes what it
// reads), frames that match --intercept are held until the view forwards,
// edits, drops or answers them; a frame behind a held one waits for it
// while the other direction flows; and the session file says what became of
// each.
func TestInterceptHoldsAndTheViewForwardsEditsDropsAndRepliesInPlace(t *testing.T) {
	name := fmt.Sprintf("e2e-hold-%d", time.Now().UnixNano())
	h := startLiveHostWith(t, name, []string{"--intercept", "dir:h2s method:hold/*"}, "cat")
	w := openHold(t, name, nil, nil)
	w.waitFor(t, "its filters", func(ev tap.HoldEvent) bool { return ev.Filters != nil && ev.Filters.H2S == "dir:h2s method:hold/*" })

	// Held, and a frame behind it waits; the host still reads frames
	// toward it.
	h.send(t, `{"jsonrpc":"2.0","id":1,"method":"hold/a"}`)
	a := w.held(t, `"hold/a"`)
	h.send(t, `{"jsonrpc":"2.0","id":2,"method":"pass"}`)
	behind := w.held(t, `"pass"`)
	if !a.Matched || behind.Matched || a.HoldMs <= 0 {
		t.Errorf("held %+v, behind it %+v", a, behind)
	}
	h.flows(t, "flows-while-held")
	if h.read(`"hold/a"`) || h.read(`"pass"`) {
		t.Fatalf("the server echoed a held frame, or the one behind it: %q", h.lines())
	}
	if err := w.c.Forward(behind.N); err == nil {
		ev := w.waitFor(t, "forwarding a waiting frame is refused", func(ev tap.HoldEvent) bool { return ev.OK != nil && ev.N == behind.N })
		if *ev.OK || !strings.Contains(ev.Error, "waits behind a held frame") {
			t.Errorf("forwarding a frame that waits: %+v", ev)
		}
	}
	w.c.Forward(a.N)
	w.answered(t, "forward", a.N)
	h.waitLine(t, `"pass"`)
	lines := strings.Join(h.lines(), "")
	if i, j := strings.Index(lines, `"hold/a"`), strings.Index(lines, `"pass"`); i < 0 || j < i {
		t.Fatalf("the host read the echoes out of order: %q", h.lines())
	}

	// Edited: the server reads the new bytes.
	h.send(t, `{"jsonrpc":"2.0","id":3,"method":"hold/b","params":{"message":"before"}}`)
	b := w.held(t, `"hold/b"`)
	w.c.Edit(b.N, []byte(`{"jsonrpc":"2.0","id":3,"method":"hold/b","params":{"message":"after edit"}}`))
	w.answered(t, "edit", b.N)
	h.waitLine(t, "after edit")

	// Dropped: the server never reads it; the next frame goes on.
	h.send(t, `{"jsonrpc":"2.0","id":4,"method":"hold/c"}`)
	c := w.held(t, `"hold/c"`)
	w.c.Drop(c.N)
	w.answered(t, "drop", c.N)
	h.send(t, `{"jsonrpc":"2.0","id":5,"method":"after-drop"}`)
	h.waitLine(t, "after-drop")
	if h.read(`"hold/c"`) {
		t.Error("the server read a dropped frame")
	}

	// Answered in place: the host reads the reply, the server never the
	// request (cat would have echoed it before the next frame).
	h.send(t, `{"jsonrpc":"2.0","id":6,"method":"hold/d"}`)
	d := w.held(t, `"hold/d"`)
	w.c.Reply(d.N, []byte(`{"jsonrpc":"2.0","id":6,"result":{"from":"the view"}}`))
	w.answered(t, "reply", d.N)
	h.waitLine(t, `"from":"the view"`)
	h.send(t, `{"jsonrpc":"2.0","id":7,"method":"after-reply"}`)
	h.waitLine(t, "after-reply")
	if h.read(`"hold/d"`) {
		t.Error("the server read a request answered in its place")
	}
	// A reply to a frame that is no request is refused.
	h.send(t, `{"jsonrpc":"2.0","method":"hold/note"}`)
	e := w.held(t, `"hold/note"`)
	w.c.Reply(e.N, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	ev := w.waitFor(t, "a reply to a notification is refused", func(ev tap.HoldEvent) bool { return ev.OK != nil && ev.N == e.N })
	if *ev.OK || !strings.Contains(ev.Error, "gets no answer") {
		t.Errorf("reply to a notification: %+v", ev)
	}
	w.c.Forward(e.N)
	h.waitLine(t, `"hold/note"`)
	h.close(t)
	h.noRace(t)

	want := []struct{ method, held string }{
		{"hold/a", sessions.HeldForwarded}, {"pass", sessions.HeldWaited}, {"hold/b", sessions.HeldEdited},
		{"hold/c", sessions.HeldDropped}, {"after-drop", ""}, {"hold/d", sessions.HeldAnswered}, {"after-reply", ""},
		{"hold/note", sessions.HeldForwarded},
	}
	var got []sessions.Event
	var reply *sessions.Event
	for _, r := range heldRecords(t, h.record) {
		if r.Dir == classify.H2S {
			got = append(got, r)
		} else if bytes.Contains(r.Frame, []byte(`"from":"the view"`)) {
			rr := r
			reply = &rr
		}
	}
	if len(got) != len(want) {
		t.Fatalf("the file has %d frames toward the server, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if !bytes.Contains(got[i].Frame, []byte(`"`+w.method+`"`)) || got[i].Held != w.held {
			t.Errorf("record %d: held %q frame %s; want %s held %q", i, got[i].Held, got[i].Frame, w.method, w.held)
		}
	}
	if edit := got[2]; edit.Src != sessions.SrcEdit || !bytes.Contains(edit.Frame, []byte("after edit")) || !bytes.Contains(edit.Original, []byte("before")) {
		t.Errorf("the edit's record: src %q frame %s original %s", edit.Src, edit.Frame, edit.Original)
	}
	if got[0].HeldUs <= 0 {
		t.Errorf("the forwarded frame's record says it was held %d µs", got[0].HeldUs)
	}
	if reply == nil || reply.Src != sessions.SrcInject {
		t.Errorf("the reply in place is not recorded with src inject: %+v", reply)
	}
}

// The view shows a held frame's secrets masked, and a person edits (or
// quotes, in a reply) what they see. Through the built binary, with cat as
// the server: the masks an edit left as they were reach the server as the
// real secret, a mask the person changed goes as typed, a reply that quotes
// a mask gives the host the real secret; and neither what the view is told
// nor the session file ever carries the secret.
func TestAnEditOfAMaskedHeldFrameForwardsTheRealSecret(t *testing.T) {
	const secret = "tok-8f3a9c2e71"
	name := fmt.Sprintf("e2e-unmask-%d", time.Now().UnixNano())
	h := startLiveHostWith(t, name, []string{"--intercept", "dir:h2s method:hold/*", "--redact", "API_TOKEN=" + secret}, "cat")
	w := openHold(t, name, nil, nil)

	h.send(t, `{"jsonrpc":"2.0","id":1,"method":"hold/edit","params":{"token":"`+secret+`","other":"`+secret+`","note":"before"}}`)
	a := w.held(t, `"hold/edit"`)
	if strings.Contains(a.Frame, secret) || !a.Redacted || !strings.Contains(a.Frame, `"token":"***API_TOKEN***"`) {
		t.Fatalf("the view was told the held frame %s (redacted %v)", a.Frame, a.Redacted)
	}
	edited := strings.Replace(strings.Replace(a.Frame, `"before"`, `"after edit"`, 1), `"other":"***API_TOKEN***"`, `"other":"***API_TOKEN**"`, 1)
	w.c.Edit(a.N, []byte(edited))
	w.answered(t, "edit", a.N)
	h.waitLine(t, "after edit")
	if !h.read(`"token":"`+secret+`"`) || !h.read(`"other":"***API_TOKEN**"`) {
		t.Errorf("the server read %q; want the real secret where the mask was left, the changed mask as typed", h.lines())
	}

	h.send(t, `{"jsonrpc":"2.0","id":2,"method":"hold/reply","params":{"token":"`+secret+`"}}`)
	b := w.held(t, `"hold/reply"`)
	w.c.Reply(b.N, []byte(`{"jsonrpc":"2.0","id":2,"result":{"echo":"***API_TOKEN***"}}`))
	w.answered(t, "reply", b.N)
	h.waitLine(t, `"echo":"`+secret+`"`)
	h.close(t)
	h.noRace(t)

	for _, ev := range w.events() {
		if ev.Held != nil && strings.Contains(string(ev.Held.Bytes()), secret) || strings.Contains(ev.Notice+ev.Error, secret) {
			t.Errorf("the view was told the secret: %+v", ev)
		}
	}
	file, err := os.ReadFile(h.record)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(file, []byte(secret)) || bytes.Count(file, []byte("***API_TOKEN***")) < 4 {
		t.Errorf("the session file carries the secret, or not its masks:\n%s", file)
	}
}

// Hold is never forever. A frame goes on as it was when its hold time runs
// out, and when the view that set the intercept goes away; the view and the
// file say which.
func TestHeldFramesGoOnWhenTheHoldTimeRunsOutOrTheViewDetaches(t *testing.T) {
	name := fmt.Sprintf("e2e-release-%d", time.Now().UnixNano())
	h := startLiveHostWith(t, name, []string{"--intercept", "method:slow", "--hold-timeout", "1s"}, "cat")
	w := openHold(t, name, nil, nil)
	h.send(t, `{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	f := w.held(t, `"slow"`)
	start := time.Now()
	if how := w.released(t, f.N); how != sessions.HeldTimeout {
		t.Errorf("released %s, want timeout", how)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the hold time of 1s ran out after %s", d)
	}
	// The echo comes back toward the host and matches too: it times out
	// as well, and the host reads it.
	h.waitLine(t, `"slow"`)

	// A view that sets its own filter, then goes away.
	expr, none := "method:mine", ""
	v := openHold(t, name, &expr, &none)
	v.waitFor(t, "its filter", func(ev tap.HoldEvent) bool { return ev.Filters != nil && ev.Filters.H2S == expr })
	h.send(t, `{"jsonrpc":"2.0","id":2,"method":"mine"}`)
	m := v.held(t, `"mine"`)
	v.c.Close()
	if how := w.released(t, m.N); how != sessions.HeldDetached {
		t.Errorf("released %s, want detached", how)
	}
	h.waitLine(t, `"mine"`)
	w.waitFor(t, "the filters went back to the tap's own", func(ev tap.HoldEvent) bool {
		return ev.Filters != nil && ev.Filters.H2S == "method:slow"
	})
	h.close(t)
	h.noRace(t)
	var hows []string
	for _, r := range heldRecords(t, h.record) {
		if r.Held != "" {
			hows = append(hows, r.Dir.String()+":"+r.Held)
		}
	}
	if strings.Join(hows, " ") != "h2s:timeout s2h:timeout h2s:detached" {
		t.Errorf("the file's held records: %v", hows)
	}
}

// Intercept toggled on and off under traffic in both directions never
// loses, duplicates or reorders a frame, and never splits one, with frames
// large and small.
func TestInterceptToggledUnderTrafficBothWaysKeepsEveryFrameWholeAndInOrder(t *testing.T) {
	name := fmt.Sprintf("e2e-toggle-%d", time.Now().UnixNano())
	h := startLiveHostWith(t, name, nil, "cat")
	expr, none := "", ""
	w := openHold(t, name, &expr, &none)
	var sent []string
	for i := range 1500 {
		pad := ""
		switch i % 50 {
		case 7:
			pad = strings.Repeat("x", 300<<10) // several reads, and pipe capacities
		case 8:
			pad = strings.Repeat("y", 2<<20) // too large to hold: it streams
		}
		sent = append(sent, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m%d","params":{"pad":"%s"}}`, i, i%3, pad))
	}
	// The view forwards whatever is held, toggling the filters.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		filters := []string{"method:m1", "", "method:m2", "kind:request", ""}
		for i := 0; ; i++ {
			select {
			case <-stop:
				w.c.SetFilters("", "")
				w.c.ForwardAll()
				return
			case <-time.After(3 * time.Millisecond):
			}
			f := filters[i%len(filters)]
			w.c.SetFilters(f, filters[(i+2)%len(filters)])
			w.c.ForwardAll()
		}
	}()
	go func() {
		for _, s := range sent {
			h.send(t, s)
		}
	}()
	h.waitLine(t, fmt.Sprintf(`"id":%d,`, len(sent)-1))
	close(stop)
	<-done
	h.close(t)
	h.noRace(t)
	got := h.lines()
	if len(got) != len(sent) {
		t.Fatalf("the host read %d lines, sent %d", len(got), len(sent))
	}
	for i := range sent {
		if got[i] != sent[i]+"\n" {
			t.Fatalf("line %d differs: read %.80q, sent %.80q", i, got[i], sent[i])
		}
	}
	var toServer, toHost []string
	for _, r := range heldRecords(t, h.record) {
		switch r.Dir {
		case classify.H2S:
			toServer = append(toServer, string(r.Frame))
		case classify.S2H:
			toHost = append(toHost, string(r.Frame))
		}
	}
	for name, recs := range map[string][]string{"toward the server": toServer, "toward the host": toHost} {
		if len(recs) != len(sent) {
			t.Errorf("the file has %d frames %s, want %d", len(recs), name, len(sent))
			continue
		}
		for i := range sent {
			if recs[i] != sent[i] {
				t.Errorf("record %d %s differs: %.80q", i, name, recs[i])
				break
			}
		}
	}
	held := 0
	for _, ev := range w.events() {
		if ev.Held != nil {
			held++
		}
	}
	if held == 0 {
		t.Error("no frame was ever held: the toggling tested nothing")
	}
	t.Logf("%d frames each way, %d held on the way", len(sent), held)
}

// End to end with real peers: the inspector CLI as host and
// server-everything, with rpctap run --intercept method:tools/call between
// them. The held call edited (another echo message): the inspector prints the
// edited answer. Answered in place: the inspector prints the reply typed in
// the view, and server-everything never read the call. Dropped: the inspector
// times out, as with a server that never answers.
func TestInspectorWithInterceptedToolCallEditedAnsweredInPlaceAndDropped(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	run := func(t *testing.T, decide func(w *holdWatcher, call tap.HeldFrame)) (string, int, string) {
		name := fmt.Sprintf("e2e-icpt-%d", time.Now().UnixNano())
		record := t.TempDir() + "/s.jsonl"
		cmd := exec.Command(inspector, "--cli", "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=as sent",
			"--", bin, "run", "--name", name, "--record", record, "--intercept", "method:tools/call", "--", server, "stdio")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		w := openHold(t, name, nil, nil)
		decide(w, w.held(t, `"tools/call"`))
		err := cmd.Wait()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		rec, _ := os.ReadFile(record)
		return out.String() + errb.String(), code, string(rec)
	}
	t.Run("edited", func(t *testing.T) {
		out, code, rec := run(t, func(w *holdWatcher, call tap.HeldFrame) {
			edited := strings.Replace(call.Frame, "as sent", "as edited in the view", 1)
			w.c.Edit(call.N, []byte(edited))
			w.answered(t, "edit", call.N)
			// The answer is held too (its request's method matches).
			ans := w.waitFor(t, "the answer is held", func(ev tap.HoldEvent) bool {
				return ev.Held != nil && ev.Held.Dir == "s2h" && strings.Contains(ev.Held.Frame, "Echo:")
			}).Held
			w.c.Forward(ans.N)
		})
		if code != 0 || !strings.Contains(out, "Echo: as edited in the view") || strings.Contains(out, "Echo: as sent") {
			t.Errorf("the inspector (exit %d) printed: %s", code, out)
		}
		if !strings.Contains(rec, `"src":"edit"`) || !strings.Contains(rec, `as sent`) {
			t.Errorf("the session file lacks the edit and its original:\n%s", rec)
		}
	})
	t.Run("answered in place", func(t *testing.T) {
		out, code, rec := run(t, func(w *holdWatcher, call tap.HeldFrame) {
			m := classify.Classify(call.Bytes(), classify.H2S, classify.JSONRPC)
			reply := `{"jsonrpc":"2.0","id":` + string(m.ID().Raw) + `,"result":{"content":[{"type":"text","text":"typed in the view"}]}}`
			w.c.Reply(call.N, []byte(reply))
			w.answered(t, "reply", call.N)
		})
		if code != 0 || !strings.Contains(out, "typed in the view") {
			t.Errorf("the inspector (exit %d) printed: %s", code, out)
		}
		if strings.Contains(rec, "Echo:") || !strings.Contains(rec, `"held":"answered"`) {
			t.Errorf("server-everything answered the call, or the file lacks it answered in place:\n%s", rec)
		}
	})
	t.Run("dropped", func(t *testing.T) {
		start := time.Now()
		out, code, rec := run(t, func(w *holdWatcher, call tap.HeldFrame) {
			w.c.Drop(call.N)
			w.answered(t, "drop", call.N)
		})
		if code == 0 || !strings.Contains(strings.ToLower(out), "timed out") {
			t.Errorf("the inspector (exit %d, after %s) printed: %s", code, time.Since(start), out)
		}
		if strings.Contains(rec, "Echo:") || !strings.Contains(rec, `"held":"dropped"`) {
			t.Errorf("server-everything answered a dropped call, or the file lacks the drop:\n%s", rec)
		}
		t.Logf("the inspector gave up after %s", time.Since(start).Round(time.Second))
	})
}

// What a direction holds is bounded, whatever a client sends. Past 1024
// frames held, the tap lets them all go on as they were, in order, says so to
// the view and on its stderr, and holds again from the next match.
func TestHoldingPastTheBoundLetsEveryHeldFrameGoOnInOrder(t *testing.T) {
	name := fmt.Sprintf("e2e-overflow-%d", time.Now().UnixNano())
	h := startLiveHostWith(t, name, []string{"--intercept", "dir:h2s"}, "cat")
	w := openHold(t, name, nil, nil)
	w.waitFor(t, "its filters", func(ev tap.HoldEvent) bool { return ev.Filters != nil })
	const n = 1100
	for i := range n {
		h.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m"}`, i))
	}
	w.waitFor(t, "it holds no more", func(ev tap.HoldEvent) bool { return strings.Contains(ev.Notice, "holds at most 1024 frames") })
	h.waitLine(t, `"id":1024,`)
	// The frames after the bound are held again.
	w.held(t, `"id":1025,`)
	w.c.ForwardAll()
	h.waitLine(t, fmt.Sprintf(`"id":%d,`, n-1))
	h.close(t)
	h.noRace(t)
	got := h.lines()
	for i := range n {
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m"}`+"\n", i); i >= len(got) || got[i] != want {
			t.Fatalf("line %d: %q, want %q", i, got[min(i, len(got)-1)], want)
		}
	}
	if !strings.Contains(h.stderr.String(), "holds at most 1024 frames") {
		t.Errorf("the tap did not say so on its stderr: %s", h.stderr.String())
	}
	overflow := 0
	for _, r := range heldRecords(t, h.record) {
		if r.Held == sessions.HeldOverflow {
			overflow++
		}
	}
	if overflow != 1024 {
		t.Errorf("the file says %d frames went on past the bound, want 1024", overflow)
	}
}
