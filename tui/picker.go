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
// opens one; / narrows the lists to what is typed.
type picker struct {
	c       *common
	live    []tap.Info
	files   []sessions.SessionFile
	filter  listFilter
	shown   []int // the rows that pass the filter: live taps, then files
	sel     int   // in shown
	width   int
	height  int
	back    bool // there are views to go back to (the root says)
	lastRef time.Time
	err     string
}

type pickerMsg struct {
	live  []tap.Info
	files []sessions.SessionFile
	err   error
}

func newPicker(c *common) *picker { return &picker{c: c, filter: newListFilter(c)} }

func (p *picker) SetSize(w, h int) { p.width, p.height = w, h }

// typing says keys go to the filter's input.
func (p *picker) typing() bool { return p.filter.typing }

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
	p.refilter()
}

// refilter finds the rows that pass the filter, keeping the selection in
// them.
func (p *picker) refilter() {
	p.shown = p.shown[:0]
	for i := range len(p.live) + len(p.files) {
		if p.filter.matches(p.rowText(i)) {
			p.shown = append(p.shown, i)
		}
	}
	p.sel = max(min(p.sel, p.count()-1), 0)
}

// rowText is what the filter matches of row i: a tap's name and command,
// a file's name.
func (p *picker) rowText(i int) string {
	if i < len(p.live) {
		t := p.live[i]
		return t.Name + " " + strings.Join(t.Argv, " ")
	}
	return filepath.Base(p.files[i-len(p.live)].Path)
}

func (p *picker) count() int { return len(p.shown) }

// Update takes a message while the pane has focus: its keys.
func (p *picker) Update(msg tea.Msg) (intent, tea.Cmd) {
	if msg, ok := msg.(tea.KeyMsg); ok {
		return p.key(msg), nil
	}
	return intent{}, nil
}

// key handles a key while the pane has focus.
func (p *picker) key(msg tea.KeyMsg) intent {
	k := p.c.keys
	if took, changed := p.filter.key(msg); took {
		if changed {
			p.refilter()
		}
		return intent{}
	}
	switch {
	case key.Matches(msg, k.Up):
		p.sel = max(p.sel-1, 0)
	case key.Matches(msg, k.Down):
		p.sel = min(p.sel+1, max(p.count()-1, 0))
	case key.Matches(msg, k.Top):
		p.sel = 0
	case key.Matches(msg, k.Bottom):
		p.sel = max(p.count()-1, 0)
	case key.Matches(msg, k.Open) && p.sel < p.count():
		switch i := p.shown[p.sel]; {
		case i < len(p.live):
			return intent{kind: intentOpen, target: p.live[i].Socket}
		default:
			return intent{kind: intentOpen, target: p.files[i-len(p.live)].Path}
		}
	}
	return intent{}
}

// ShortHelp is the footer of the picker; back, when there are views to go
// back to (p.back).
func (p *picker) ShortHelp() []key.Binding {
	k := p.c.keys
	if p.filter.typing {
		return p.filter.ShortHelp()
	}
	keys := []key.Binding{k.Up, k.Down, k.Open, k.Filter}
	if p.filter.active() {
		keys = append(keys, k.ClearFilter)
	} else if p.back {
		keys = append(keys, k.Back)
	}
	return append(keys, k.Help, k.Quit)
}

// FullHelp is the picker's ? screen.
func (p *picker) FullHelp() [][]key.Binding {
	k := p.c.keys
	return [][]key.Binding{{k.Up, k.Down, k.Top, k.Bottom}, {k.Open, k.Filter, k.ClearFilter, k.Help, k.Quit}}
}

func (p *picker) View() string {
	s := p.c.styles
	var lines []string
	if f := p.filter.View(p.count(), len(p.live)+len(p.files), p.width); f != "" {
		lines = append(lines, f)
	}
	// The rows that pass the filter: live taps, then files.
	var live []tap.Info
	var files []sessions.SessionFile
	for _, i := range p.shown {
		if i < len(p.live) {
			live = append(live, p.live[i])
		} else {
			files = append(files, p.files[i-len(p.live)])
		}
	}
	lines = append(lines, s.Title.Render("Live taps"))
	switch {
	case len(live) == 0 && len(p.live) > 0:
		lines = append(lines, s.Dim.Render("  none matches the filter"))
	case len(live) == 0:
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
	for _, t := range live {
		lines = append(lines, mark(fmt.Sprintf("  %-20s pid %-7d %7d frames %5d errors %4d pending  %s",
			truncate(classify.EscapeString(t.Name, 60), 20), t.PID, t.Frames, t.Errors, t.Pending,
			classify.EscapeString(strings.Join(t.Argv, " "), 120))))
	}
	lines = append(lines, "", s.Title.Render("Recent sessions"))
	switch {
	case len(files) == 0 && len(p.files) > 0:
		lines = append(lines, s.Dim.Render("  none matches the filter"))
	case len(files) == 0:
		lines = append(lines, s.Dim.Render("  none recorded yet"))
	}
	for _, f := range files {
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
