package tui

import (
	"strings"
	"sync"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/rpctap/rpctap/source"
)

// fakeDemo records the keys that reach a demo.
type fakeDemo struct {
	mu    sync.Mutex
	calls []string
}

func (d *fakeDemo) TogglePause() { d.add("pause") }
func (d *fakeDemo) Step()        { d.add("step") }
func (d *fakeDemo) Replay()      { d.add("replay") }
func (d *fakeDemo) add(s string) {
	d.mu.Lock()
	d.calls = append(d.calls, s)
	d.mu.Unlock()
}

func (d *fakeDemo) got() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.Join(d.calls, " ")
}

// The demo's bar shows where the scenario is, its caption and what came
// back, under the traffic, and the whole screen still fits 80x24; z, .
// and , reach the demo, and nothing else does (a filter's text is the
// filter's).
func TestDemoBarShowsTheStepAndTakesItsKeys(t *testing.T) {
	d := &fakeDemo{}
	states := make(chan DemoState, 1)
	m := New(asciiRenderer(), []*source.Source{openFile(t, demoSession)}, WithDemo(d, states))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	states <- DemoState{Step: 12, Steps: 49, Name: "leaky-error", Caption: "The server answers a call with leaky error. A response is never answered; an error's text should not show stack frames or file paths: handler text can name a host's internals to a third-party peer.",
		Outcome: "Came back: error -32603 TypeError: cannot read properties of undefined …"}
	waitFor(t, tm, "demo 12/49 · leaky-error", "z pause", "→ Came back: error -32603")
	for _, k := range []string{"z", ".", ","} {
		tm.Send(press(k))
	}
	tm.Send(press("/"))
	typeText(tm, "z.,")
	tm.Send(press("esc"))
	states <- DemoState{Step: 13, Steps: 49, Name: "unsafe-text", Caption: "The host sends unsafe text \x1b[31m.", Paused: true}
	waitFor(t, tm, "demo 13/49 · unsafe-text · paused", "z resume", `unsafe text \x1b[31m.`)
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	view := tm.FinalModel(t).View()
	if got := d.got(); got != "pause step replay" {
		t.Errorf("the demo got keys %q; want %q", got, "pause step replay")
	}
	lines := strings.Split(view, "\n")
	if len(lines) > 24 {
		t.Errorf("the view is %d lines at 80x24", len(lines))
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("line %d is %d wide at 80x24: %q", i, w, l)
		}
	}
	if strings.ContainsRune(view, 0x1b) && strings.Contains(view, "\x1b[31m.") {
		t.Error("a caption's escape reached the screen raw")
	}
}

// On a 40×12 terminal the demo's bar takes two lines (where it is, its
// caption cut to one), and the panes give way to fit: the header stays on
// the screen's first line.
func TestDemoFitsASmallTerminal(t *testing.T) {
	states := make(chan DemoState, 1)
	m := New(asciiRenderer(), []*source.Source{openFile(t, demoSession)}, WithDemo(&fakeDemo{}, states))
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(40, 12))
	states <- DemoState{Step: 4, Steps: 49, Name: "progress", Caption: "The server reports progress three times before it answers: each notification names the request's progressToken.",
		Outcome: "Came back: a notification"}
	waitFor(t, tm, "demo 4/49", "recorded")
	for _, k := range []string{"tab", "P"} {
		tm.Send(press(k))
	}
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	view := tm.FinalModel(t).View()
	checkFits(t, view, 40, 12)
	if !strings.HasPrefix(view, "demo-server") || !strings.Contains(view, "The server reports progress three times…") {
		t.Errorf("at 40×12 with a demo:\n%s", view)
	}
}
