package tui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// pendingPane lists requests waiting for their answer, in both
// directions, with how long they have waited, coloured as they near the
// timeout.
type pendingPane struct {
	c      *common
	items  []classify.PendingRequest
	sel    int
	width  int
	height int
}

func newPendingPane(c *common) *pendingPane { return &pendingPane{c: c} }

func (p *pendingPane) SetSize(w, h int) { p.width, p.height = w, h }

func (p *pendingPane) sync(x *sessions.Index) {
	p.items = x.Pending()
	sort.Slice(p.items, func(i, j int) bool { return p.items[i].Seq < p.items[j].Seq })
	if p.sel >= len(p.items) {
		p.sel = len(p.items) - 1
	}
	if p.sel < 0 {
		p.sel = 0
	}
}

func (p *pendingPane) Update(msg tea.KeyMsg) intent {
	k := p.c.keys
	switch {
	case key.Matches(msg, k.Up):
		p.sel = max(p.sel-1, 0)
	case key.Matches(msg, k.Down):
		p.sel = min(p.sel+1, max(len(p.items)-1, 0))
	case key.Matches(msg, k.Open):
		if p.sel < len(p.items) {
			return intent{kind: intentJumpSeq, seq: p.items[p.sel].Seq}
		}
	}
	return intent{}
}

// ShortHelp is the footer while the pane has focus.
func (p *pendingPane) ShortHelp() []key.Binding {
	k := p.c.keys
	return []key.Binding{k.Up, k.Down, k.Open, k.Back, k.Help, k.Quit}
}

// View draws the title and the list; now is the session clock (µs since
// start). The columns give way to a narrow pane: the id drops first, and
// TIMEOUT shortens to TMO.
func (p *pendingPane) View(now time.Duration, timeout time.Duration) string {
	s := p.c.styles
	title := s.Title.Render("Pending") + s.Dim.Render(fmt.Sprintf(" (%d)", len(p.items)))
	if len(p.items) == 0 {
		return title + "\n" + s.Dim.Render("nothing pending")
	}
	var b strings.Builder
	b.WriteString(truncate(title, p.width))
	rows := max(p.height-1, 1)
	top := 0
	if p.sel >= rows {
		top = p.sel - rows + 1
	}
	seqW := 1
	for _, it := range p.items {
		seqW = max(seqW, len(fmt.Sprint(it.Seq)))
	}
	idW := 10
	if p.width < 40 {
		idW = 0
	}
	for i := top; i < len(p.items) && i < top+rows; i++ {
		it := p.items[i]
		waited := now - it.Sent
		dir := "→"
		if it.Dir == classify.S2H {
			dir = "←"
		}
		tag := ""
		st := s.Pending
		switch {
		case it.TimedOut:
			st = s.Over
			tag = " TIMEOUT"
			if p.width < 40 {
				tag = " " + compactBadges["TIMEOUT"]
			}
		case timeout > 0 && waited > timeout*3/4:
			st = s.Near
		}
		line := fmt.Sprintf("%*d %s ", seqW, it.Seq, dir)
		if idW > 0 {
			line += fmt.Sprintf("%-*s ", idW, truncate(classify.EscapeString(it.ID, 40), idW))
		}
		end := fmt.Sprintf(" %7s%s", fmtLatency(waited), tag)
		methodW := max(p.width-lipgloss.Width(line)-lipgloss.Width(end), 4)
		line += fmt.Sprintf("%-*s", methodW, truncate(classify.EscapeString(it.Method, 96), methodW)) + end
		line = st.Render(truncate(line, p.width))
		if i == p.sel {
			line = s.Selected.Render(padRight(line, p.width))
		}
		b.WriteString("\n" + line)
	}
	return b.String()
}
