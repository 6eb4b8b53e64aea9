package tui

import (
	"cmp"
	"fmt"
	"slices"
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
// timeout. It keeps its list from the index's changes (a request came,
// left, timed out): with nothing new, a sync costs nothing, however many
// requests wait.
type pendingPane struct {
	c       *common
	items   []pendingItem // by line; gone ones until the end of a sync
	gen     uint64        // of the index's changes the list has
	changes []sessions.PendingChange
	sel     int
	width   int
	height  int

	// What it draws at: the session's clock and timeout.
	clock   func() time.Duration // the session's time now
	timeout func() time.Duration // the session's pending-request timeout
}

// pendingItem is one request waiting; gone, one that left during a sync.
type pendingItem struct {
	classify.PendingRequest
	gone bool
}

// newPendingPane makes the pane of a session whose clock and timeout the
// pane reads when it draws (source.Source.Clock, Timeout).
func newPendingPane(c *common, clock, timeout func() time.Duration) *pendingPane {
	return &pendingPane{c: c, clock: clock, timeout: timeout}
}

func (p *pendingPane) SetSize(w, h int) { p.width, p.height = w, h }

// sync brings the list up to date with the index, keeping the selected
// request selected (or the next one, when it left).
func (p *pendingPane) sync(x *sessions.Index) {
	selSeq := int64(-1)
	if p.sel < len(p.items) {
		selSeq = p.items[p.sel].Seq
	}
	changes, gen, all, reset := x.PendingChanges(p.gen, p.changes[:0])
	p.gen, p.changes = gen, changes
	switch {
	case reset:
		p.items = p.items[:0]
		for _, r := range all {
			p.items = append(p.items, pendingItem{PendingRequest: r})
		}
	case len(changes) == 0:
		return
	default:
		p.apply(changes)
	}
	if selSeq >= 0 {
		p.sel, _ = p.find(selSeq)
	}
	p.sel = max(min(p.sel, len(p.items)-1), 0)
}

// apply takes the index's changes in: a new request is the last (lines
// only grow), one that left goes.
func (p *pendingPane) apply(changes []sessions.PendingChange) {
	left := false
	for _, c := range changes {
		i, found := p.find(c.Request.Seq)
		switch c.Kind {
		case sessions.PendingAdded:
			if !found {
				p.items = slices.Insert(p.items, i, pendingItem{PendingRequest: c.Request})
			}
		case sessions.PendingLeft:
			if found {
				p.items[i].gone, left = true, true
			}
		case sessions.PendingTimedOut:
			if found {
				p.items[i].TimedOut = true
			}
		}
	}
	if left {
		p.items = slices.DeleteFunc(p.items, func(it pendingItem) bool { return it.gone })
	}
}

// find is the position of the request on line seq that has not left,
// or where it would go.
func (p *pendingPane) find(seq int64) (int, bool) {
	if n := len(p.items); n == 0 || p.items[n-1].Seq < seq {
		return n, false // a new request: the last
	}
	i, _ := slices.BinarySearchFunc(p.items, seq, func(it pendingItem, seq int64) int { return cmp.Compare(it.Seq, seq) })
	for ; i < len(p.items) && p.items[i].Seq == seq; i++ {
		if !p.items[i].gone {
			return i, true
		}
	}
	return i, false
}

// Update takes the pane's messages: its keys while it has focus, and
// the view's tick.
func (p *pendingPane) Update(msg tea.Msg) (intent, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return p.key(msg), nil
	case indexTickMsg:
		p.sync(msg.x)
	}
	return intent{}, nil
}

// key handles a key while the pane has focus.
func (p *pendingPane) key(msg tea.KeyMsg) intent {
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

// FullHelp is the ? screen while the pane has focus: the view's keys.
func (p *pendingPane) FullHelp() [][]key.Binding { return p.c.keys.FullHelp() }

// View draws the title and the list, at the session's clock (its time
// since start), against its timeout. The columns give way to a narrow
// pane: the id drops first, and TIMEOUT shortens to TMO.
func (p *pendingPane) View() string {
	now, timeout := p.clock(), p.timeout()
	s := p.c.styles
	title := s.Title.Render("Pending") + s.Dim.Render(fmt.Sprintf(" (%d)", len(p.items)))
	if p.height < 2 {
		return truncate(title, p.width) // a short terminal: the count only
	}
	if len(p.items) == 0 {
		empty := "nothing pending"
		if lipgloss.Width(empty) > p.width {
			empty = "none"
		}
		return truncate(title, p.width) + "\n" + truncate(s.Dim.Render(empty), p.width)
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
	// The id column is as wide as the widest id shown, leaving the
	// method its room; a cut id keeps its end.
	idW := 0
	for i := top; i < len(p.items) && i < top+rows; i++ {
		idW = max(idW, lipgloss.Width(classify.EscapeString(p.items[i].ID, colIDMax*4)))
	}
	idW = min(idW, colIDMax, max(p.width-seqW-3-len(" 00000ms TIMEOUT")-colMethod, colIDMin))
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
			line += fmt.Sprintf("%-*s ", idW, cutID(it.ID, idW))
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
