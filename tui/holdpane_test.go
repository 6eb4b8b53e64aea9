package tui

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tap"
)

// openHeldView runs the view on a live tap (cat as the server) that holds
// what expr matches, and opens the held pane with H. It returns the
// program, the source and the host's pipe to the tap.
func openHeldView(t *testing.T, expr string, hold time.Duration) (*teatest.TestModel, *source.Source, io.WriteCloser) {
	t.Helper()
	info, host := startLiveTapWith(t, tap.Options{Record: true, Path: filepath.Join(t.TempDir(), "live.jsonl"), Intercept: expr, HoldTimeout: hold})
	src, err := source.OpenLive(info, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	tm := startProgram(t, []*source.Source{src}, 120, 36)
	waitFor(t, tm, "live")
	tm.Send(press("H"))
	waitFor(t, tm, "Held (0)", "intercept → "+expr)
	return tm, src, host
}

func hostWrite(t *testing.T, host io.Writer, line string) {
	t.Helper()
	if _, err := io.WriteString(host, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// The held pane lists held frames oldest first, a frame behind a held one
// as waiting, each held one with the seconds it may still be held, counting
// down; f forwards the selected one, and the frame behind it goes on too.
func TestHeldPaneListsFramesOldestFirstCountingDownAndForwards(t *testing.T) {
	tm, src, host := openHeldView(t, "method:hold/*", 30*time.Second)
	hostWrite(t, host, `{"jsonrpc":"2.0","id":1,"method":"hold/first"}`)
	hostWrite(t, host, `{"jsonrpc":"2.0","id":2,"method":"hold/second"}`)
	waitFor(t, tm, "Held (2)", "#1    → 30s   hold/first id 1", "hold/second id 2")
	// The count goes down as the clock goes.
	waitFor(t, tm, "#1    → 28s")
	// cat echoes what it reads; the echo of a frame toward the host
	// matches too, and waits behind nothing.
	tm.Send(press("f"))
	waitFor(t, tm, "#1 forwarded")
	waitRecorded(t, src, `"held":"forwarded"`)
	waitFor(t, tm, "hold/second id 2")
	fm := finalView(t, tm)
	if i, j := strings.Index(fm, "hold/second"), strings.Index(fm, "#1 forwarded"); i < 0 || j < 0 {
		t.Errorf("the pane after forwarding #1:\n%s", fm)
	}
}

// In the held pane, e opens the composer on the held frame, with the
// preview; ctrl+s sends the text in its place, recorded src edit with the
// original kept.
func TestHeldPaneEditSendsTheComposersTextInPlaceOfTheFrame(t *testing.T) {
	tm, src, host := openHeldView(t, "dir:h2s method:hold/*", 30*time.Second)
	hostWrite(t, host, `{"jsonrpc":"2.0","id":7,"method":"hold/edit"}`)
	waitFor(t, tm, "hold/edit id 7")
	tm.Send(press("e"))
	waitFor(t, tm, "editing held #1", "preview: request")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlA})
	typeText(tm, "x")
	waitFor(t, tm, "preview: not-json")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlS})
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlS}) // the warning, once
	waitFor(t, tm, "#1 forwarded as edited")
	rec := waitRecorded(t, src, `"src":"edit"`)
	if !bytes.Contains(rec, []byte(`"original":"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"hold/edit\"}"`)) ||
		!bytes.Contains(rec, []byte(`"frame":"x{\"jsonrpc\"`)) {
		t.Errorf("the session file lacks the edit with its original:\n%s", rec)
	}
	finalView(t, tm)
}

// In the held pane, a answers a held request in its receiver's place, from
// a reply skeleton that carries the request's id; x drops a frame; a frame
// that waits behind a held one is not itself decided.
func TestHeldPaneAnswersInPlaceAndDrops(t *testing.T) {
	tm, src, host := openHeldView(t, "dir:h2s method:hold/*", 30*time.Second)
	hostWrite(t, host, `{"jsonrpc":"2.0","id":"req-9","method":"hold/answer"}`)
	hostWrite(t, host, `{"jsonrpc":"2.0","id":10,"method":"behind"}`)
	waitFor(t, tm, `hold/answer id "req-9"`, "behind id 10 · waits behind #1")
	tm.Send(press("j"))
	tm.Send(press("x"))
	waitFor(t, tm, "#2 is not held itself")
	tm.Send(press("k"))
	tm.Send(press("a"))
	waitFor(t, tm, "answering held #1", `{"jsonrpc":"2.0","id":"req-9","result":{}}`, "to the host")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlS})
	waitFor(t, tm, "#1 answered in place")
	waitRecorded(t, src, `"held":"answered"`, `"src":"inject"`, `"held":"waited"`)
	hostWrite(t, host, `{"jsonrpc":"2.0","id":11,"method":"hold/drop"}`)
	waitFor(t, tm, "hold/drop id 11")
	tm.Send(press("x"))
	waitFor(t, tm, "#3 dropped")
	rec := waitRecorded(t, src, `"held":"dropped"`)
	var answered, reply bool
	for _, line := range strings.Split(string(rec), "\n") {
		answered = answered || strings.Contains(line, `"held":"answered"`)
		reply = reply || answered && strings.Contains(line, `"dir":"s2h","src":"inject"`) && strings.Contains(line, `req-9`)
	}
	if !reply {
		t.Errorf("the reply does not follow the answered request in the file:\n%s", rec)
	}
	_ = sessions.HeldAnswered
	finalView(t, tm)
}

// A frame that waits behind a held one is listed by its own name, then
// the held frame it waits behind; a request the tap holds is pending (its
// receiver has not read it), and the header counts it.
func TestHeldPaneNamesWhatAFrameWaitsBehindAndHeldRequestsArePending(t *testing.T) {
	tm, _, host := openHeldView(t, "dir:h2s method:hold/*", 30*time.Second)
	hostWrite(t, host, `{"jsonrpc":"2.0","id":1,"method":"hold/first"}`)
	hostWrite(t, host, `{"jsonrpc":"2.0","id":0,"result":{}}`)
	waitFor(t, tm, "Held (2)", "#1    → 30s   hold/first id 1", "#2    →       response id 0 · waits behind #1", "1 pending")
	tm.Send(press("a"))
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlS})
	waitFor(t, tm, "#1 answered in place", "0 pending")
	finalView(t, tm)
}

// A held request decided to be dropped or answered in place, while it
// waits behind a held frame, is no longer pending: its receiver will
// never read it.
func TestAHeldRequestDecidedNotToGoOnIsNotPending(t *testing.T) {
	tm, _, host := openHeldView(t, "dir:h2s method:hold/*", 30*time.Second)
	hostWrite(t, host, `{"jsonrpc":"2.0","id":1,"method":"hold/first"}`)
	hostWrite(t, host, `{"jsonrpc":"2.0","id":2,"method":"hold/drop"}`)
	hostWrite(t, host, `{"jsonrpc":"2.0","id":3,"method":"hold/answer"}`)
	waitFor(t, tm, "Held (3)", "3 pending")
	tm.Send(press("j"))
	tm.Send(press("x"))
	waitFor(t, tm, "hold/drop id 2 · drop, waits behind #1", "2 pending")
	tm.Send(press("j"))
	tm.Send(press("a"))
	waitFor(t, tm, "answering held #3")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlS})
	waitFor(t, tm, "hold/answer id 3 · answered, waits behind #1", "1 pending")
	finalView(t, tm)
}

// A frame whose hold time runs out goes on, and the pane says so.
func TestHeldPaneSaysWhenTheHoldTimeRanOut(t *testing.T) {
	tm, _, host := openHeldView(t, "dir:h2s method:hold/*", time.Second)
	hostWrite(t, host, `{"jsonrpc":"2.0","id":1,"method":"hold/late"}`)
	waitFor(t, tm, "#1 forwarded as it was: its hold time ran out")
	finalView(t, tm)
}

// The held pane fits at 80×24 and at 200×50; its footer ends, as every
// pane's does, with ? help and q quit, with at 80 all its keys but F,
// which the ? screen lists with the pane's other keys.
func TestHeldPaneFitsItsFooterEndingWithHelpAndQuit(t *testing.T) {
	for _, c := range []struct {
		w, h   int
		footer string
	}{
		{80, 24, "f forward • e edit • x drop • a answer in place • esc back … • ? help • q quit"},
		{200, 50, "f forward • e edit • x drop • a answer in place • esc back • F forward all • ? help • q quit"},
	} {
		info, host := startLiveTapWith(t, tap.Options{Record: true, Path: filepath.Join(t.TempDir(), "live.jsonl"), Intercept: "dir:h2s"})
		src, err := source.OpenLive(info, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(src.Close)
		tm := startProgram(t, []*source.Source{src}, c.w, c.h)
		waitFor(t, tm, "live")
		tm.Send(press("H"))
		hostWrite(t, host, `{"jsonrpc":"2.0","id":1,"method":"`+strings.Repeat("long/", 40)+`"}`)
		waitFor(t, tm, "Held (1)", c.footer)
		tm.Send(press("?"))
		waitFor(t, tm, "forward all", "answer in place", "any key closes help")
		tm.Send(press("?"))
		waitFor(t, tm, "Held (1)")
		if err := tm.Quit(); err != nil {
			t.Fatal(err)
		}
		checkFits(t, tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View(), c.w, c.h)
	}
}

// A tap that refuses the intercept connection (an HTTP tap, one that has
// too many views) says why and closes it: the pane keeps its sentence, not
// that the tap may be gone; a connection that just ends says so.
func TestHeldPaneKeepsTheTapsRefusalWhenTheConnectionEnds(t *testing.T) {
	no := false
	for _, c := range []struct {
		events []holdEventMsg
		want   string
	}{
		{[]holdEventMsg{{session: 1, ev: tap.HoldEvent{OK: &no, Error: "this tap relays HTTP (rpctap http)"}, ok: true}, {session: 1}}, "this tap relays HTTP (rpctap http)"},
		{[]holdEventMsg{{session: 1}}, "the intercept connection ended (the tap is gone?)"},
	} {
		p := newHoldPane(newCommon(asciiRenderer()), 1)
		p.SetSize(80, 10)
		for _, m := range c.events {
			p.Update(m)
		}
		if v := p.View(); !strings.Contains(v, c.want) {
			t.Errorf("after %+v the pane shows:\n%s\nwant %q", c.events, v, c.want)
		}
	}
}
