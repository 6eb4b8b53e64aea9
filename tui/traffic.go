package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/filter"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/source"
)

// trafficPane is the table of frames. It is virtualized: it keeps the
// positions of the entries that pass the filter and draws only the rows on
// screen.
type trafficPane struct {
	c       *common
	rows    []int32 // index positions shown, in order
	scanned int     // index entries looked at so far
	sel     int     // selected row
	top     int     // first row on screen
	follow  bool    // keep the last row selected as traffic comes
	showErr bool
	wall    bool
	flt     *filter.Filter
	// scanning is the filter a background scan is applying (a filter
	// that reads payloads: reading them is not done in Update); scanGen
	// tells the latest scan's report from older ones.
	scanning *filter.Filter
	scanGen  int
	// content is the widest id and method of the entries measured so
	// far (measured of them): the columns follow it.
	content  contentWidths
	measured int
	measure  []sessions.Entry
	width    int
	height   int

	// What it draws: the session's entries, and the view's search.
	src    *source.Source
	marked func() *search // the view's search, whose rows have a mark
}

func newTrafficPane(c *common, src *source.Source, marked func() *search) *trafficPane {
	return &trafficPane{c: c, src: src, marked: marked, follow: true, showErr: true, flt: mustParse("")}
}

// ShortHelp is the footer while the table has focus: the view's keys.
func (p *trafficPane) ShortHelp() []key.Binding { return p.c.keys.ShortHelp() }

// FullHelp is the ? screen while the table has focus: the view's keys.
func (p *trafficPane) FullHelp() [][]key.Binding { return p.c.keys.FullHelp() }

func mustParse(s string) *filter.Filter {
	f, err := filter.Parse(s)
	if err != nil {
		panic(err)
	}
	return f
}

func (p *trafficPane) SetSize(w, h int) {
	p.width, p.height = w, h
	p.clamp()
}

// visibleRows is how many table rows fit under the column header.
func (p *trafficPane) visibleRows() int { return max(p.height-1, 1) }

// sync picks up entries added to the index since the last call. New rows
// never move the selection, unless the pane follows the traffic. A filter
// that reads payloads matches new entries in the background: sync returns
// that scan's command (file reads stay out of Update).
func (p *trafficPane) sync(session int, src *source.Source) tea.Cmd {
	p.measureNew(src.Index)
	if p.scanning != nil {
		return nil // a background scan owns the rows until it reports
	}
	if p.scanned < src.Index.Len() && p.flt.NeedsPayload() {
		return p.scanFrom(session, src, p.flt, p.scanned)
	}
	p.take(src)
	return nil
}

// take matches the new entries here, by a filter that reads no payloads.
func (p *trafficPane) take(src *source.Source) {
	x := src.Index
	n := x.Len()
	for ; p.scanned < n; p.scanned++ {
		e := x.At(p.scanned)
		if p.passes(src, &e) {
			p.rows = append(p.rows, int32(p.scanned))
		}
	}
	p.settle()
}

// settle keeps the selection on the last row when following, and on screen.
func (p *trafficPane) settle() {
	if p.follow && len(p.rows) > 0 {
		p.sel = len(p.rows) - 1
	}
	p.clamp()
}

// refilter applies a new filter that reads no payloads, keeping the
// selected frame selected when it still shows.
func (p *trafficPane) refilter(src *source.Source, f *filter.Filter) {
	keep := int32(-1)
	if p.sel < len(p.rows) {
		keep = p.rows[p.sel]
	}
	p.flt = f
	p.rows = p.rows[:0]
	p.scanned = 0
	follow := p.follow
	p.follow = false
	p.take(src)
	p.follow = follow
	p.sel = 0
	for i, r := range p.rows {
		if r >= keep {
			p.sel = i
			break
		}
		p.sel = i
	}
	p.settle()
}

func (p *trafficPane) passes(src *source.Source, e *sessions.Entry) bool {
	return shows(src, p.flt, p.showErr, e)
}

// shows reports whether the table shows an entry under filter f.
func shows(src *source.Source, f *filter.Filter, showErr bool, e *sessions.Entry) bool {
	if e.Event != "" || (e.Dir == classify.Err && !showErr) {
		return false
	}
	return f.Match(filterFrame(src, e))
}

// filterFrame is what a filter sees of an entry of src; the payload is
// read back from the file only when a text token needs it.
func filterFrame(src *source.Source, e *sessions.Entry) *filter.Frame {
	seq := e.Seq
	return source.FilterFrame(e, func() []byte {
		pos, ok := src.Index.BySeq(seq)
		if !ok {
			return nil
		}
		ev, err := src.Record(pos)
		if err != nil {
			return nil
		}
		return ev.Frame
	})
}

func (p *trafficPane) clamp() {
	if p.sel >= len(p.rows) {
		p.sel = len(p.rows) - 1
	}
	if p.sel < 0 {
		p.sel = 0
	}
	h := p.visibleRows()
	if p.sel < p.top {
		p.top = p.sel
	}
	if p.sel >= p.top+h {
		p.top = p.sel - h + 1
	}
	if p.top > max(len(p.rows)-h, 0) {
		p.top = max(len(p.rows)-h, 0)
	}
	if p.top < 0 {
		p.top = 0
	}
}

// selected is the index position of the selected entry, or -1.
func (p *trafficPane) selected() int {
	if p.sel < 0 || p.sel >= len(p.rows) {
		return -1
	}
	return int(p.rows[p.sel])
}

// selectPos selects the row of an index position, when it shows.
func (p *trafficPane) selectPos(pos int) bool {
	lo, hi := 0, len(p.rows)
	for lo < hi {
		m := (lo + hi) / 2
		if int(p.rows[m]) < pos {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(p.rows) && int(p.rows[lo]) == pos {
		p.sel = lo
		p.follow = false
		p.clamp()
		return true
	}
	return false
}

// Update takes a message of the table's: the rows a background scan
// found, and its keys while it has focus.
func (p *trafficPane) Update(msg tea.Msg) (intent, tea.Cmd) {
	switch msg := msg.(type) {
	case scanDoneMsg:
		return intent{}, p.scanDone(p.src, msg)
	case tea.KeyMsg:
		return p.key(msg), nil
	}
	return intent{}, nil
}

// key handles a key while the pane has focus.
func (p *trafficPane) key(msg tea.KeyMsg) intent {
	k := p.c.keys
	switch {
	case key.Matches(msg, k.Up):
		p.move(-1)
	case key.Matches(msg, k.Down):
		p.move(1)
	case key.Matches(msg, k.PageUp):
		p.move(-p.visibleRows())
	case key.Matches(msg, k.PageDown):
		p.move(p.visibleRows())
	case key.Matches(msg, k.Top):
		p.sel = 0
		p.follow = false
	case key.Matches(msg, k.Bottom):
		p.sel = len(p.rows) - 1
		p.follow = true
	case key.Matches(msg, k.ToggleTime):
		p.wall = !p.wall
	case key.Matches(msg, k.ToggleStderr):
		p.showErr = !p.showErr
		return intent{kind: intentRefilter}
	case key.Matches(msg, k.Open):
		return intent{kind: intentFocusDetail}
	case key.Matches(msg, k.Pair):
		return intent{kind: intentJumpPair}
	case key.Matches(msg, k.NextMatch):
		return intent{kind: intentNextMatch, step: 1}
	case key.Matches(msg, k.PrevMatch):
		return intent{kind: intentNextMatch, step: -1}
	case key.Matches(msg, k.Copy):
		return intent{kind: intentCopy}
	case key.Matches(msg, k.Reply):
		return intent{kind: intentReply}
	case key.Matches(msg, k.Resend):
		return intent{kind: intentResend}
	}
	p.clamp()
	return intent{}
}

// wheel scrolls with the mouse.
func (p *trafficPane) wheel(delta int) { p.move(delta) }

func (p *trafficPane) move(d int) {
	p.sel += d
	p.follow = false
	if p.sel >= len(p.rows)-1 && d > 0 {
		p.sel = len(p.rows) - 1
	}
	p.clamp()
}

// View draws the rows on screen; rows the search marks have a * after
// their number (a mark that needs no colour).
func (p *trafficPane) View() string {
	x, started, marked := p.src.Index, p.src.Started(), p.marked()
	s := p.c.styles
	var b strings.Builder
	c := layoutColumns(p.width, p.wall, p.content)
	head := fmt.Sprintf("%*s ", colSeq, "#") + column(c.time, "time") + "  " + column(c.kind, "kind") + column(c.id, "id") + column(c.method, "method")
	if c.lat > 0 {
		head += fmt.Sprintf("%*s ", c.lat, "latency")
	}
	if c.size > 0 {
		head += fmt.Sprintf("%*s ", c.size, "size")
	}
	head += "flags"
	b.WriteString(s.Dim.Render(truncate(head, p.width)))
	h := p.visibleRows()
	for i := p.top; i < p.top+h && i < len(p.rows); i++ {
		e := x.At(int(p.rows[i]))
		b.WriteByte('\n')
		line := truncate(p.row(&e, c, started, i == p.sel, marked.has(p.rows[i])), p.width)
		switch {
		case i == p.sel:
			line = s.Selected.Render(padRight(line, p.width))
		case e.Dir == classify.Err:
			line = s.RowErr.Render(line)
		}
		b.WriteString(line)
	}
	if len(p.rows) == 0 {
		if p.flt.String() != "" && p.scanned > 0 {
			// The session has records; the filter hides every one.
			b.WriteString("\n" + s.Dim.Render("  no frame matches the filter (/ to change it)"))
		} else {
			b.WriteString("\n" + s.Dim.Render("  no frames yet"))
		}
	}
	return b.String()
}

// row draws one entry in columns c; a selected row is drawn plain so that
// its highlight runs the whole width.
func (p *trafficPane) row(e *sessions.Entry, c columns, started time.Time, plain, match bool) string {
	t := fmtRel(e.T)
	if p.wall {
		t = started.Add(time.Duration(e.T) * time.Microsecond).Local().Format("15:04:05.000")
	}
	dir := "→"
	switch e.Dir {
	case classify.S2H:
		dir = "←"
	case classify.Err:
		dir = "!"
	}
	kind := e.Kind.String()
	if e.Dir == classify.Err {
		kind = "stderr"
	}
	if e.Src == sessions.SrcInject {
		kind = "+" + kind
	}
	mark := " "
	if match {
		mark = "*"
	}
	line := fmt.Sprintf("%*d%s", colSeq, e.Seq, mark) + column(c.time, truncate(t, c.time)) + dir + " " + column(c.kind, truncate(kind, c.kind)) +
		column(c.id, cutID(e.ID, c.id)) +
		column(c.method, truncate(classify.EscapeString(e.Method, c.method*4), c.method))
	if c.lat > 0 {
		line += fmt.Sprintf("%*s ", c.lat, latencyCell(e))
	}
	if c.size > 0 {
		line += fmt.Sprintf("%*s ", c.size, FormatSize(e.Size))
	}
	return line + p.badges(e, c.flags, plain)
}

// truncate cuts s to w cells with an ellipsis; escape sequences (styles)
// are kept whole.
func truncate(s string, w int) string { return ansi.Truncate(s, w, "…") }

func padRight(s string, w int) string {
	if n := lipgloss.Width(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// scanDoneMsg carries the rows a background filter scan found among the
// entries [from, scanned).
type scanDoneMsg struct {
	session int
	gen     int
	from    int
	rows    []int32
	scanned int
}

// scanFrom returns a command that filters the entries from on in the
// background, reading payloads from the file as the filter needs them;
// from 0, its rows replace the table's.
func (p *trafficPane) scanFrom(session int, src *source.Source, f *filter.Filter, from int) tea.Cmd {
	p.scanGen++
	p.scanning = f
	p.flt = f
	gen, showErr, n := p.scanGen, p.showErr, src.Index.Len()
	return func() tea.Msg {
		var rows []int32
		for i := from; i < n; i++ {
			if e := src.Index.At(i); shows(src, f, showErr, &e) {
				rows = append(rows, int32(i))
			}
		}
		return scanDoneMsg{session: session, gen: gen, from: from, rows: rows, scanned: n}
	}
}

// scanDone takes a background scan's rows, unless another scan has begun
// since, and goes on with the entries added meanwhile.
func (p *trafficPane) scanDone(src *source.Source, msg scanDoneMsg) tea.Cmd {
	if p.scanning == nil || msg.gen != p.scanGen {
		return nil
	}
	p.scanning = nil
	if msg.from == 0 {
		p.rows, p.sel = msg.rows, 0
	} else {
		p.rows = append(p.rows, msg.rows...)
	}
	p.scanned = msg.scanned
	p.settle()
	return p.sync(msg.session, src)
}
