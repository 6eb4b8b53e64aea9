package tui

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

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

// Column widths.
const (
	colSeq       = 7
	colTime      = 10
	colWall      = 12
	colKind      = 12
	colIDMin     = 8  // an id cut to this keeps its end, where ids differ
	colIDMax     = 24 // the widest an id column grows with the ids it shows
	colLat       = 8
	colSize      = 8 // FormatSize is at most eight cells
	colFlags     = 24
	colFlagsMin  = 11 // "INVALID E", or in short words "UNM TMO W"
	colMethod    = 12 // the method gets at least this before the table drops columns
	colMethodMax = 48
)

// contentWidths are the widest id and method (escaped) the table has to
// show.
type contentWidths struct{ id, method int }

// measureNew takes the ids and methods of the entries indexed since the
// last call into the content widths, a few thousand entries a lock.
func (p *trafficPane) measureNew(x *sessions.Index) {
	for n := x.Len(); p.measured < n; {
		p.measure = x.Entries(p.measure[:0], p.measured, min(p.measured+4096, n))
		for i := range p.measure {
			e := &p.measure[i]
			p.content.id = max(p.content.id, shownWidth(e.ID, colIDMax))
			p.content.method = max(p.content.method, shownWidth(e.Method, colMethodMax))
		}
		p.measured += len(p.measure)
	}
}

// shownWidth is the cells s takes escaped, up to most: printable ASCII,
// as ids and methods nearly always are, is its length, and is not
// escaped to be measured.
func shownWidth(s string, most int) int {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e || s[i] == '\\' {
			return min(lipgloss.Width(classify.EscapeString(s, most*4)), most)
		}
	}
	return min(len(s), most)
}

// columns are the table's column widths at one width; a width of 0 drops
// the column.
type columns struct {
	time, kind, id, method, lat, size, flags int
}

// layoutColumns gives each column its width: the id and the method as
// wide as the widest the table shows (cw), within bounds. When the table
// is narrow the columns give way, in turn, until the method has room:
// the flags narrow (a row's badges go to short words when the long ones
// do not fit), the size drops, the id narrows (an id cut keeps its end),
// the latency drops, the kind narrows, the id and then the time drop;
// past that the method is cut short. What is left over goes to the
// flags, at the end of the row.
func layoutColumns(width int, wall bool, cw contentWidths) columns {
	id := min(max(cw.id, len("id")), colIDMax)
	method := min(max(cw.method, colMethod), colMethodMax)
	c := columns{time: colTime, kind: colKind, id: id, lat: colLat, size: colSize, flags: colFlags}
	if wall {
		c.time = colWall
	}
	giveWay := []func(){
		func() { c.flags = colFlagsMin },
		func() { c.size = 0 },
		func() { c.id = min(c.id, colIDMin) },
		func() { c.lat = 0 },
		func() { c.kind = 8 },
		func() { c.id = 0 },   // a pair shows in the detail pane
		func() { c.time = 0 }, // as does the time
	}
	for _, step := range giveWay {
		if c.room(width) >= colMethod {
			break
		}
		step()
	}
	// The method as wide as the widest, the flags giving way for it.
	c.flags = max(min(c.flags, width-c.used()-method), colFlagsMin)
	c.method = max(min(c.room(width), method), 4)
	// What the method does not take, the flags do.
	c.flags = max(width-c.used()-c.method, c.flags)
	return c
}

// used is the width of every column but the method (and their spaces).
func (c columns) used() int {
	n := colSeq + 1 + 1 + 1 + c.kind + 1 + 1
	for _, w := range []int{c.time, c.id, c.lat, c.size} {
		if w > 0 {
			n += w + 1
		}
	}
	return n
}

// column is text left-aligned in a column w wide and its space; nothing
// for a column dropped (w 0).
func column(w int, text string) string {
	if w == 0 {
		return ""
	}
	return fmt.Sprintf("%-*s ", w, text)
}

// room is the width left for the method, the flags having theirs.
func (c columns) room(width int) int { return width - c.used() - c.flags }

// cutID fits an id, escaped, in w cells: cut, it keeps its end, where
// the ids of one peer differ ("rpctap-host-12" and "rpctap-host-13").
// Only the id's last bytes are escaped (four a cell, more than any
// character takes), so a long id costs no more than a short one to
// draw, and its cut shows the id's own end.
func cutID(id string, w int) string {
	if w <= 0 {
		return ""
	}
	cut := false
	if from := len(id) - w*4; from > 0 {
		for n := 0; n < utf8.UTFMax-1 && !utf8.RuneStart(id[from]); n++ {
			from++
		}
		id, cut = id[from:], true
	}
	s := classify.EscapeString(id, 0)
	n := lipgloss.Width(s)
	if n > w || cut && n == w {
		return ansi.TruncateLeft(s, n-w+1, "…")
	}
	if cut {
		return "…" + s
	}
	return s
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
		lat := ""
		if e.Kind == classify.KindResponse || e.Src == sessions.SrcInject && e.Pair != 0 {
			// An injected request shows its answer's latency too: the
			// answer is captured, so the pair is the whole story.
			lat = fmtLatency(e.Latency)
		}
		line += fmt.Sprintf("%*s ", c.lat, lat)
	}
	if c.size > 0 {
		line += fmt.Sprintf("%*s ", c.size, FormatSize(e.Size))
	}
	return line + p.badges(e, c.flags, plain)
}

// compactBadges are the short words of the findings' badges, for narrow
// tables (the help screen spells them out); fateBadges has the fates'.
var compactBadges = map[string]string{
	"UNMATCHED": "UNM", "INVALID": "INV", "REDACTED": "RED", "OPAQUE": "OPQ",
	"LEAKY": "LKY", "TIMEOUT": "TMO", "LATE": "LATE",
}

// A fateBadge is how a row says one fate word (sessions.FateWords): its
// badge, and the badge's short word for a narrow table.
type fateBadge struct{ word, badge, short string }

// fateBadges say a frame's fate (sessions.Fate.Set), a badge for each of
// its words, in the order a row shows them: the tap holding it for the
// user first, the row's story. They are the fate: filter token's words:
// fate:held matches every row that says HELD, whatever became of the
// frame then. An injected frame says so by the + before its kind, with
// no badge.
var fateBadges = []fateBadge{
	{sessions.FateHeld, "HELD", "HLD"},
	{sessions.FateEdited, "EDITED", "EDT"},
	{sessions.FateDropped, "DROPPED", "DRP"},
	{sessions.FateAnswered, "ANSWERED", "ANS"},
	{sessions.FateExpired, "EXPIRED", "EXP"},
	{sessions.FateDetached, "DETACHED", "DET"},
	{sessions.FateOverflow, "OVERFLOW", "OVF"},
	{sessions.FateWaited, "WAITED", "WTD"},
	{sessions.FateEndedHeld, "ENDED", "END"},
	{sessions.FateCaptured, "CAPTURED", "CAP"},
	{sessions.FatePartial, "PARTIAL", "PRT"},
	{sessions.FateInjected, "", ""},
}

// in reports whether the fate set s holds the badge's word.
func (b fateBadge) in(s sessions.FateSet) bool {
	bit, _ := sessions.ParseFateWord(b.word)
	return s&bit != 0
}

// shortBadge is a badge's short word.
func shortBadge(long string) string {
	if short, ok := compactBadges[long]; ok {
		return short
	}
	for _, b := range fateBadges {
		if b.badge == long {
			return b.short
		}
	}
	return long
}

// badges are the flags the tool exists for, as words a glance catches, in
// at most w cells: in short words when the long ones do not fit; plain (no
// colour) for a selected row.
func (p *trafficPane) badges(e *sessions.Entry, w int, plain bool) string {
	s := p.c.styles
	names := entryBadges(e)
	words := func(short bool) []string {
		out := make([]string, 0, len(names)+1)
		for _, n := range names {
			if short {
				n = shortBadge(n)
			}
			out = append(out, n)
		}
		if m := worstMark(e.Worst); m != "" {
			out = append(out, m)
		}
		return out
	}
	ws := words(false)
	if lipgloss.Width(strings.Join(ws, " ")) > w {
		ws = words(true)
	}
	cut := lipgloss.Width(strings.Join(ws, " ")) > w
	for cut && len(ws) > 1 && lipgloss.Width(strings.Join(ws, " "))+2 > w {
		ws = ws[:len(ws)-1]
	}
	if !plain {
		sev := map[string]lipgloss.Style{"E": s.SevError, "W": s.SevWarn, "i": s.SevInfo}
		for i, word := range ws {
			if i < len(names) {
				ws[i] = s.Badge[names[i]].Render(word)
			} else {
				ws[i] = sev[word].Render(word)
			}
		}
	}
	out := strings.Join(ws, " ")
	if cut {
		out += " …"
	}
	return out
}

func worstMark(s classify.Severity) string {
	switch s {
	case classify.Error:
		return "E"
	case classify.Warn:
		return "W"
	case classify.Info:
		return "i"
	}
	return ""
}

// entryBadges names the flags an entry carries: its fate's first, then
// its findings'.
func entryBadges(e *sessions.Entry) []string {
	has := func(c classify.Code) bool { return e.Codes.Has(c) }
	var out []string
	if fate := e.Fate().Set(); fate != 0 {
		for _, b := range fateBadges {
			if b.badge != "" && b.in(fate) {
				out = append(out, b.badge)
			}
		}
	}
	if has(classify.CodeUnmatchedResponse) || has(classify.CodeDuplicateResponse) {
		out = append(out, "UNMATCHED")
	}
	if e.Kind == classify.KindInvalid || e.Kind == classify.KindNotJSON || e.Kind == classify.KindNonObject ||
		(e.Kind == classify.KindStray && e.Dir == classify.H2S) {
		out = append(out, "INVALID")
	}
	if e.Redacted || has(classify.CodeRedacted) {
		out = append(out, "REDACTED")
	}
	if has(classify.CodeOpaqueError) {
		out = append(out, "OPAQUE")
	}
	if has(classify.CodeLeakyError) {
		out = append(out, "LEAKY")
	}
	if has(classify.CodeTimeout) {
		out = append(out, "TIMEOUT")
	} else if has(classify.CodeLateResponse) {
		out = append(out, "LATE")
	}
	if has(classify.CodeFramesMissing) {
		out = append(out, "GAP") // its answer, or its request, may be among frames the file is missing
	}
	return out
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
