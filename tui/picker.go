package tui

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
)

// picker lists live taps and recent session files, newest first; enter
// opens one.
type picker struct {
	c       *common
	live    []tap.Info
	files   []sessions.SessionFile
	sel     int
	width   int
	height  int
	lastRef time.Time
	err     string
}

type pickerMsg struct {
	live  []tap.Info
	files []sessions.SessionFile
	err   error
}

func newPicker(c *common) *picker { return &picker{c: c} }

func (p *picker) SetSize(w, h int) { p.width, p.height = w, h }

func (p *picker) typing() bool { return false }

// refresh lists taps and files in a command (it touches sockets and disk).
func (p *picker) refresh() tea.Cmd {
	return func() tea.Msg {
		live, err := tap.LiveTaps()
		return pickerMsg{live: live, files: sessions.RecentSessions(100), err: err}
	}
}

func (p *picker) maybeRefresh(now time.Time) tea.Cmd {
	if now.Sub(p.lastRef) < 2*time.Second {
		return nil
	}
	p.lastRef = now
	return p.refresh()
}

func (p *picker) apply(msg pickerMsg) {
	p.live, p.files = msg.live, msg.files
	p.err = ""
	if msg.err != nil {
		p.err = msg.err.Error()
	}
	if p.sel >= p.count() {
		p.sel = max(p.count()-1, 0)
	}
}

func (p *picker) count() int { return len(p.live) + len(p.files) }

func (p *picker) Update(msg tea.KeyMsg) intent {
	k := p.c.keys
	switch {
	case key.Matches(msg, k.Up):
		p.sel = max(p.sel-1, 0)
	case key.Matches(msg, k.Down):
		p.sel = min(p.sel+1, max(p.count()-1, 0))
	case key.Matches(msg, k.Top):
		p.sel = 0
	case key.Matches(msg, k.Bottom):
		p.sel = max(p.count()-1, 0)
	case key.Matches(msg, k.Open):
		switch {
		case p.sel < len(p.live):
			return intent{kind: intentOpen, target: p.live[p.sel].Socket}
		case p.sel-len(p.live) < len(p.files):
			return intent{kind: intentOpen, target: p.files[p.sel-len(p.live)].Path}
		}
	}
	return intent{}
}

// ShortHelp is the footer of the picker; back, when there are views to go
// back to.
func (p *picker) ShortHelp(back bool) []key.Binding {
	k := p.c.keys
	keys := []key.Binding{k.Up, k.Down, k.Open}
	if back {
		keys = append(keys, k.Back)
	}
	return append(keys, k.Quit)
}

func (p *picker) View() string {
	s := p.c.styles
	var lines []string
	lines = append(lines, s.Title.Render("Live taps"))
	if len(p.live) == 0 {
		lines = append(lines, s.Dim.Render("  none running; start one with: rpctap run -- SERVER"))
	}
	row := 0
	mark := func(l string) string {
		defer func() { row++ }()
		if row == p.sel {
			return s.Selected.Render(padRight(truncate(l, p.width), p.width))
		}
		return truncate(l, p.width)
	}
	for _, t := range p.live {
		lines = append(lines, mark(fmt.Sprintf("  %-20s pid %-7d %7d frames %5d errors %4d pending  %s",
			truncate(classify.EscapeString(t.Name, 60), 20), t.PID, t.Frames, t.Errors, t.Pending,
			classify.EscapeString(strings.Join(t.Argv, " "), 120))))
	}
	lines = append(lines, "", s.Title.Render("Recent sessions"))
	if len(p.files) == 0 {
		lines = append(lines, s.Dim.Render("  none recorded yet"))
	}
	for _, f := range p.files {
		nameW := max(min(p.width-2-1-8-2-16, 56), 12)
		lines = append(lines, mark(fmt.Sprintf("  %-*s %8s  %s", nameW, truncate(classify.EscapeString(filepath.Base(f.Path), 120), nameW),
			FormatSize(f.Size), f.Modified.Local().Format("2006-01-02 15:04"))))
	}
	if p.err != "" {
		lines = append(lines, "", s.SevError.Render(p.err))
	}
	// Keep the selection on screen.
	if len(lines) > p.height && p.height > 0 {
		start := min(max(p.sel+3-p.height/2, 0), len(lines)-p.height)
		lines = lines[start : start+p.height]
	}
	// The footer goes at the bottom of the screen.
	for len(lines) < p.height {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
