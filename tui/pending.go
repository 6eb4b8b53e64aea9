package tui

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
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

// View draws the list; now is the session clock (µs since start).
func (p *pendingPane) View(now time.Duration, timeout time.Duration) string {
	s := p.c.styles
	if len(p.items) == 0 {
		return s.Dim.Render("nothing pending")
	}
	var b strings.Builder
	top := 0
	if p.sel >= p.height {
		top = p.sel - p.height + 1
	}
	for i := top; i < len(p.items) && i < top+p.height; i++ {
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
		case timeout > 0 && waited > timeout*3/4:
			st = s.Near
		}
		methodW := max(p.width-6-1-10-8-len(tag)-5, 6)
		line := fmt.Sprintf("%6d %s %-10s %-*s %8s%s", it.Seq, dir, truncate(classify.EscapeString(it.ID, 40), 10),
			methodW, truncate(classify.EscapeString(it.Method, 96), methodW), fmtLatency(waited), tag)
		line = st.Render(truncate(line, p.width))
		if i == p.sel {
			line = s.Selected.Render(padRight(line, p.width))
		}
		if i > top {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
	return b.String()
}
