package tui

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/source"
)

// detailPane shows one frame: pretty and highlighted, or its raw bytes; its
// findings; the answer a strict receiver owes and whether it came; its pair.
// A frame is laid out in a command, as far as a budget of lines goes, and
// kept in a small cache; the pane never shows a frame other than the one
// selected.
type detailPane struct {
	c      *common
	vp     viewport.Model
	raw    bool
	limit  int // lines of the frame laid out; More doubles it
	width  int
	height int
	want   detailKey // what the selection needs
	shown  detailKey // what the viewport holds
	// rendering: laid out in commands not yet back.
	rendering map[detailKey]bool
	cache     []detailLoadedMsg // newest last
}

// detailKey names one layout of one frame. It changes when the entry
// learns something (a pair, a timeout), as well as with the pane.
type detailKey struct {
	seq          int64
	width, limit int
	raw          bool
	codes        uint64
	status       sessions.Status
	pair         int64
	size         int64
}

// detailCache is how many layouts the pane keeps: going back to a frame
// just seen is instant, and each layout is bounded by its budget of lines.
const detailCache = 8

func newDetailPane(c *common) *detailPane {
	return &detailPane{c: c, vp: viewport.New(0, 0), limit: detailLines, rendering: map[detailKey]bool{}}
}

func (p *detailPane) SetSize(w, h int) {
	p.width, p.height = w, h
	p.vp.Width, p.vp.Height = w, h
}

// detailLoadedMsg is a frame read back from the session file and laid
// out, in a command, off the Update path.
type detailLoadedMsg struct {
	session int
	key     detailKey
	content string
}

// load asks for the entry at pos: from the cache, or from a command that
// reads and lays it out. Until that command reports, the pane says it is
// rendering the frame (or keeps showing the same frame, laid out before).
func (p *detailPane) load(session int, src *source.Source, pos int) tea.Cmd {
	if pos < 0 {
		p.want, p.shown = detailKey{}, detailKey{}
		p.vp.SetContent("")
		return nil
	}
	e := src.Index.At(pos)
	if e.Seq != p.want.seq {
		p.limit = detailLines // a new frame starts with one budget
	}
	k := detailKey{seq: e.Seq, width: p.width, limit: p.limit, raw: p.raw, codes: uint64(e.Codes),
		status: e.Status, pair: e.Pair, size: e.Size}
	if k == p.want {
		return nil
	}
	p.want = k
	for _, c := range p.cache {
		if c.key == k {
			p.show(c)
			return nil
		}
	}
	if p.rendering[k] {
		return nil
	}
	p.rendering[k] = true
	raw, width, limit, c := p.raw, p.width, p.limit, p.c
	return func() tea.Msg {
		return detailLoadedMsg{session: session, key: k, content: renderDetail(c, src, pos, raw, width, limit)}
	}
}

// apply takes a layout a command made: it is cached, and shown only when
// it is the one the selection needs (a late layout of a frame since left
// is not).
func (p *detailPane) apply(msg detailLoadedMsg) {
	delete(p.rendering, msg.key)
	if len(p.cache) == detailCache {
		p.cache = append(p.cache[:0], p.cache[1:]...)
	}
	p.cache = append(p.cache, msg)
	if msg.key == p.want {
		p.show(msg)
	}
}

func (p *detailPane) show(msg detailLoadedMsg) {
	// More of the same layout keeps the place; another frame, or the
	// other view of it, starts at the top.
	same := msg.key.seq == p.shown.seq && msg.key.raw == p.shown.raw
	p.shown = msg.key
	p.vp.SetContent(msg.content)
	if !same {
		p.vp.GotoTop()
	}
}

// more lays out twice as much of the frame.
func (p *detailPane) more() { p.limit *= 2 }

// Update takes a message of the pane's: a frame it loaded, and its keys;
// the raw and more keys come whichever pane has focus, and the root then
// loads the frame again.
func (p *detailPane) Update(msg tea.Msg) (intent, tea.Cmd) {
	switch msg := msg.(type) {
	case detailLoadedMsg:
		p.apply(msg)
	case tea.KeyMsg:
		return p.key(msg), nil
	}
	return intent{}, nil
}

// key handles a key of the pane's.
func (p *detailPane) key(msg tea.KeyMsg) intent {
	k := p.c.keys
	switch {
	case key.Matches(msg, k.ToggleRaw):
		p.raw = !p.raw
	case key.Matches(msg, k.More):
		p.more()
	case key.Matches(msg, k.Pair):
		return intent{kind: intentJumpPair}
	case key.Matches(msg, k.Up):
		p.vp.ScrollUp(1)
	case key.Matches(msg, k.Down):
		p.vp.ScrollDown(1)
	case key.Matches(msg, k.PageUp):
		p.vp.HalfPageUp()
	case key.Matches(msg, k.PageDown):
		p.vp.HalfPageDown()
	case key.Matches(msg, k.Top):
		p.vp.GotoTop()
	case key.Matches(msg, k.Bottom):
		p.vp.GotoBottom()
	case key.Matches(msg, k.Copy):
		return intent{kind: intentCopy}
	}
	return intent{}
}

// ShortHelp is the footer while the pane has focus.
func (p *detailPane) ShortHelp() []key.Binding {
	k := p.c.keys
	// r and m first: at 80 columns, with ? and q, the rest is cut.
	return []key.Binding{k.Up, k.Down, k.ToggleRaw, k.More, k.PageDown, k.Pair, k.Copy, k.Back, k.Help, k.Quit}
}

// FullHelp is the ? screen while the pane has focus: the view's keys.
func (p *detailPane) FullHelp() [][]key.Binding { return p.c.keys.FullHelp() }

func (p *detailPane) View() string {
	switch {
	case p.want == detailKey{}:
		return p.c.styles.Dim.Render("select a frame")
	case p.shown.seq != p.want.seq:
		return p.c.styles.Dim.Render(fmt.Sprintf("rendering #%d (%s)…", p.want.seq, FormatSize(p.want.size)))
	}
	return p.vp.View()
}

// renderDetail lays out everything known about one frame, in lines of at
// most width cells, the frame itself as far as limit lines go. It reads the
// frame back from the session file: run it in a command.
func renderDetail(c *common, src *source.Source, pos int, raw bool, width, limit int) string {
	s := c.styles
	x := src.Index
	e := x.At(pos)
	var b strings.Builder
	detailHead(&b, s, &e, src.Started())
	ev, err := src.Record(pos)
	if err != nil {
		b.WriteString(s.SevError.Render("cannot read the frame back: " + err.Error()))
		return ansi.Wrap(b.String(), max(width, 1), " ")
	}
	frame := ev.Frame
	var m classify.Message
	if e.Dir != classify.Err {
		h, _ := x.Header()
		m = h.Classify(frame, e.Dir, x.Profile())
	}
	detailHTTP(&b, s, ev.HTTP)
	detailFindings(&b, s, x, pos, &e, &m)
	b.WriteString("\n")
	// What is above is short: words wrap, and a word wider than the pane
	// is cut.
	head := ansi.Wrap(b.String(), max(width, 1), " ")
	return detailBody(c, head, ev, raw, width, limit)
}

// detailHead writes entry e's title, what is known of it, and what it
// pairs with; started is when its session started.
func detailHead(b *strings.Builder, s Styles, e *sessions.Entry, started time.Time) {
	dir := map[classify.Direction]string{classify.H2S: "host → server", classify.S2H: "server → host", classify.Err: "server stderr"}[e.Dir]
	title := fmt.Sprintf("#%d  %s  %s", e.Seq, dir, e.Kind)
	if e.Dir == classify.Err {
		title = fmt.Sprintf("#%d  %s", e.Seq, dir)
	}
	b.WriteString(s.Title.Render(title))
	b.WriteString("\n")
	meta := []string{fmt.Sprintf("t=%ss", fmtRel(e.T)), started.Add(time.Duration(e.T) * time.Microsecond).Local().Format("15:04:05.000000"), FormatSize(e.Size)}
	if e.ID != "" {
		meta = append(meta, "id "+classify.EscapeString(e.ID, 80))
	}
	if e.Method != "" {
		meta = append(meta, classify.EscapeString(e.Method, 120))
	}
	if e.Src != "" && e.Src != sessions.SrcWire {
		meta = append(meta, "injected by rpctap")
	}
	if e.Captured {
		meta = append(meta, "captured: kept from its receiver")
	}
	if e.Redacted {
		meta = append(meta, s.Badge["REDACTED"].Render("REDACTED")+" secrets masked; bytes differ from the wire")
	}
	b.WriteString(s.Dim.Render(strings.Join(meta, " · ")))
	b.WriteString("\n")
	if e.Pair != 0 {
		what := "answered by"
		if e.Kind == classify.KindResponse {
			what = "answers"
		}
		b.WriteString(fmt.Sprintf("%s #%d", what, e.Pair))
		if e.Latency > 0 {
			b.WriteString(" after " + fmtLatency(e.Latency))
		}
		b.WriteString(s.Dim.Render("  (p jumps there)"))
		b.WriteString("\n")
		detailCall(b, e)
	} else if e.Kind == classify.KindRequest && e.Status == sessions.StatusGap {
		b.WriteString(s.Near.Render("no answer in the file: it may be among the frames the file is missing") + "\n")
	} else if e.Kind == classify.KindRequest {
		b.WriteString(s.Near.Render("no answer yet") + "\n")
	}
}

// detailHTTP writes what HTTP said of a frame, from its record's http
// object raw (nothing when it has none): the exchange, its request, the
// response's status and content type, the SSE event, the headers as the
// tap recorded them (secrets masked), and why the frame holds no message
// when the tap says why. All of it is the peer's text, escaped.
func detailHTTP(b *strings.Builder, s Styles, raw []byte) {
	h, ok := sessions.ParseHTTP(raw)
	if !ok {
		return
	}
	b.WriteString("\n" + s.Title.Render("HTTP") + "\n")
	line := fmt.Sprintf("exchange %d · %s %s", h.Exchange, classify.EscapeString(h.Method, 20), classify.EscapeString(h.Path, 400))
	if h.Status != 0 {
		line += fmt.Sprintf(" · status %d", h.Status)
		if t := http.StatusText(h.Status); t != "" {
			line += " " + t
		}
	}
	b.WriteString(line + "\n")
	var more []string
	if h.ContentType != "" {
		more = append(more, "content type "+classify.EscapeString(h.ContentType, 200))
	}
	if h.EventID != "" {
		more = append(more, "SSE event id "+classify.EscapeString(h.EventID, 200))
	}
	if h.Retry > 0 {
		more = append(more, fmt.Sprintf("retry %dms", h.Retry))
	}
	if len(more) > 0 {
		b.WriteString(strings.Join(more, " · ") + "\n")
	}
	for _, hd := range h.Headers {
		b.WriteString(s.Dim.Render(classify.EscapeString(hd.Name, 80)+":") + " " + classify.EscapeString(hd.Value, 400) + "\n")
	}
	if h.Error != "" {
		b.WriteString(s.Near.Render(classify.EscapeString(h.Error, 400)) + "\n")
	}
}

// detailCall says where entry e stands in a multi round-trip call.
func detailCall(b *strings.Builder, e *sessions.Entry) {
	c := e.Call
	switch {
	case c.InputRequired:
		b.WriteString("asked the host for input: the call goes on in a retry (MCP multi round-trip)\n")
	case c.Origin != 0 && e.Kind == classify.KindResponse:
		fmt.Fprintf(b, "ends the call first sent as #%d, after %s in all, in %d rounds\n", c.Origin, fmtLatency(c.CallLatency), max(c.Round, 2))
	}
	if c.Origin != 0 && e.Kind == classify.KindRequest {
		fmt.Fprintf(b, "a retry of the call first sent as #%d (MCP multi round-trip)\n", c.Origin)
	}
}

// detailFindings writes the findings of entry e, at pos in x (its own,
// its batch members', the session's), and what a strict receiver must
// answer to m, its frame.
func detailFindings(b *strings.Builder, s Styles, x *sessions.Index, pos int, e *sessions.Entry, m *classify.Message) {
	var lines []string
	for _, f := range x.Findings(pos) {
		l := findingLine(s, f.Finding)
		if f.Member >= 0 {
			l += s.Dim.Render(fmt.Sprintf(" (member %d)", f.Member))
		}
		if f.Related != 0 {
			l += s.Dim.Render(fmt.Sprintf(" (see #%d)", f.Related))
		}
		lines = append(lines, l)
	}
	if len(lines) > 0 {
		b.WriteString("\n" + s.Title.Render("Findings") + "\n")
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	if m.Answer != nil {
		b.WriteString("\n" + s.Title.Render("A strict receiver must answer") + "\n")
		b.WriteString(string(classify.AppendSafeJSON(nil, m.Answer.JSON())) + "\n")
		if e.Codes.Has(classify.CodeUnansweredInvalid) {
			b.WriteString(s.Near.Render("and the receiver did not") + "\n")
		}
	}
}

// detailBody is head, then record ev's frame laid out in lines of at most
// width cells, as far as limit lines go: pretty or raw, with a line
// saying how to see more when it does not show it all.
func detailBody(c *common, head string, ev *sessions.Event, raw bool, width, limit int) string {
	s := c.styles
	frame := ev.Frame
	var body layout
	if raw {
		// The header block (LSP framing) and the frame, escaped.
		head += s.Title.Render("Raw bytes") + s.Dim.Render(" (escaped)") + "\n"
		if ev.Header != nil {
			head += strings.Join(escapedPrefix(ev.Header, max(width, 1), limit).lines, "\n") + "\n"
		}
		body = escapedPrefix(frame, max(width, 1), limit)
	} else {
		body = prettyPrefix(frame, width, limit)
	}
	text := strings.Join(body.lines, "\n")
	if body.isJSON && !raw {
		text = c.hl.highlight(text)
	}
	if body.used < len(frame) {
		other := "raw bytes"
		if raw {
			other = "pretty view"
		}
		more := s.Near.Render(fmt.Sprintf("showing %s of %s: %s shows more, %s the %s", FormatSize(int64(max(body.used, 0))),
			FormatSize(int64(len(frame))), c.keys.More.Help().Key, c.keys.ToggleRaw.Help().Key, other))
		more = ansi.Wrap(more, max(width, 1), " ")
		head += more + "\n"
		text += "\n" + more
	}
	return head + text
}

func findingLine(s Styles, f classify.Finding) string {
	st := s.SevInfo
	switch f.Severity {
	case classify.Error:
		st = s.SevError
	case classify.Warn:
		st = s.SevWarn
	}
	return st.Render(fmt.Sprintf("%-5s %s", f.Severity, f.Code)) + "  " + f.Message
}
