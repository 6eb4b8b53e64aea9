package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/rpctap/rpctap/classify"
)

// A Demo is a scripted scenario that plays in the view (rpctap demo): its
// keys pause it, step it and replay a step, and its caption shows under
// the traffic.
type Demo interface {
	TogglePause()
	Step()
	Replay()
}

// DemoState is where a demo's scenario is.
type DemoState struct {
	Step, Steps int
	Name        string
	Caption     string // what the step does and what the specs require
	Outcome     string // what came back
	Paused      bool
	Done        bool
}

// demoBarHeight is the lines the demo's bar takes: where it is, its
// caption in two, and what came back. On a terminal shorter than
// demoShortBelow lines it takes two: where it is, and its caption cut to
// one line, leaving the panes their room.
const (
	demoBarHeight  = 4
	demoShortBelow = 20
)

// WithDemo plays a demo: states deliver its state as it changes, and the
// demo's keys go to d.
func WithDemo(d Demo, states <-chan DemoState) Option {
	return func(m *Model) { m.demo, m.demoStates = d, states }
}

type demoStateMsg struct {
	state DemoState
	ok    bool
}

// waitDemo waits for the demo's next state.
func (m *Model) waitDemo() tea.Cmd {
	states := m.demoStates
	return func() tea.Msg {
		s, ok := <-states
		return demoStateMsg{s, ok}
	}
}

// demoKey handles the demo's keys; it reports whether the key was one.
func (m *Model) demoKey(msg tea.KeyMsg) bool {
	if m.demo == nil {
		return false
	}
	switch msg.String() {
	case "z":
		m.demo.TogglePause()
	case ".":
		m.demo.Step()
	case ",":
		m.demo.Replay()
	default:
		return false
	}
	return true
}

// demoBar shows where the demo is and the step's caption, in
// demoBarHeight lines of the width.
func (m *Model) demoBar() string {
	s := m.c.styles
	st := m.demoState
	where := "demo"
	switch {
	case st.Done:
		where = fmt.Sprintf("demo · all %d steps done", st.Steps)
	case st.Step > 0:
		where = fmt.Sprintf("demo %d/%d · %s", st.Step, st.Steps, classify.EscapeString(st.Name, 40))
	}
	if st.Paused {
		where += " · paused"
	}
	keys := "z pause · . step · , replay"
	switch {
	case st.Done:
		keys = ""
	case st.Paused:
		keys = "z resume · . step · , replay"
	}
	gap := max(m.width-ansi.StringWidth(where)-ansi.StringWidth(keys), 2)
	top := truncate(s.Title.Render(where)+strings.Repeat(" ", gap)+s.Dim.Render(keys), m.width)
	text := classify.EscapeString(st.Caption, 0)
	outcome := ""
	if st.Outcome != "" {
		outcome = "→ " + classify.EscapeString(st.Outcome, 0)
	}
	if st.Done {
		text, outcome = "The scenario is over; the session stays open: inject a frame (i), filter (/), look around; q quits.", ""
		if v := m.view(); v != nil && v.src.Ended() {
			// The tour's last step has the server exit.
			text = "The scenario is over and the server has exited; filter (/), open a frame (enter), look around; q quits."
		}
	}
	caption := demoBarHeight - 2 // lines, under which the outcome's
	if m.demoHeight() < demoBarHeight {
		caption = m.demoHeight() - 1 // and no outcome
	}
	lines := strings.Split(ansi.Wrap(text, max(m.width, 1), " "), "\n")
	if len(lines) > caption {
		lines = lines[:caption]
		lines[len(lines)-1] = truncate(strings.TrimRight(lines[len(lines)-1], " ")+" …", m.width)
	}
	for len(lines) < caption {
		lines = append(lines, "")
	}
	if m.demoHeight() == demoBarHeight {
		lines = append(lines, truncate(s.Dim.Render(outcome), m.width))
	}
	return top + "\n" + strings.Join(lines, "\n")
}
