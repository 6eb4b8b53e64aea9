package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// detailPane shows one frame: pretty and highlighted, or its raw bytes; its
// findings; the answer a strict receiver owes and whether it came; its pair.
type detailPane struct {
	c      *common
	vp     viewport.Model
	raw    bool
	seq    int64
	width  int
	height int
	// cache of the rendered frame, by (seq, width, raw)
	cacheKey string
	loading  string
	content  string
}

func newDetailPane(c *common) *detailPane {
	return &detailPane{c: c, vp: viewport.New(0, 0)}
}

func (p *detailPane) SetSize(w, h int) {
	p.width, p.height = w, h
	p.vp.Width, p.vp.Height = w, h
}

// loaded is a frame read back from the session file and rendered, in a
// command, off the Update path.
type detailLoadedMsg struct {
	session int
	key     string
	content string
}

// load returns a command that reads and renders the entry at pos, unless
// the cache already holds it.
func (p *detailPane) load(session int, src *Source, pos int) tea.Cmd {
	if pos < 0 {
		p.content, p.cacheKey = "", ""
		p.vp.SetContent("")
		return nil
	}
	e := src.Index.At(pos)
	// The key changes when the entry learns something (a pair, a timeout).
	k := fmt.Sprintf("%d/%d/%v/%x/%d/%d", e.Seq, p.width, p.raw, uint64(e.Codes), e.Status, e.Pair)
	if k == p.cacheKey || k == p.loading {
		return nil
	}
	p.loading = k
	raw, width, c := p.raw, p.width, p.c
	return func() tea.Msg {
		return detailLoadedMsg{session: session, key: k, content: renderDetail(c, src, pos, raw, width)}
	}
}

func (p *detailPane) apply(msg detailLoadedMsg) {
	if msg.key == p.cacheKey {
		return
	}
	p.cacheKey, p.content = msg.key, msg.content
	p.vp.SetContent(msg.content)
	p.vp.GotoTop()
}

func (p *detailPane) Update(msg tea.KeyMsg) intent {
	k := p.c.keys
	switch {
	case key.Matches(msg, k.ToggleRaw):
		p.raw = !p.raw
		return intent{kind: intentRefilter} // reload
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

func (p *detailPane) View() string {
	if p.content == "" {
		return p.c.styles.Dim.Render("select a frame")
	}
	return p.vp.View()
}

// renderDetail lays out everything known about one frame. It reads the
// frame back from the session file: run it in a command.
func renderDetail(c *common, src *Source, pos int, raw bool, width int) string {
	s := c.styles
	x := src.Index
	started := src.Started()
	e := x.At(pos)
	var b strings.Builder
	dir := map[classify.Direction]string{classify.H2S: "host → server", classify.S2H: "server → host", classify.Err: "server stderr"}[e.Dir]
	title := fmt.Sprintf("#%d  %s  %s", e.Seq, dir, e.Kind)
	if e.Dir == classify.Err {
		title = fmt.Sprintf("#%d  %s", e.Seq, dir)
	}
	b.WriteString(s.Title.Render(title))
	b.WriteString("\n")
	meta := []string{fmt.Sprintf("t=%ss", fmtRel(e.T)), started.Add(time.Duration(e.T) * time.Microsecond).Local().Format("15:04:05.000000"), fmtSize(e.Size) + " bytes"}
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
	} else if e.Kind == classify.KindRequest {
		b.WriteString(s.Near.Render("no answer yet") + "\n")
	}

	ev, err := src.Record(pos)
	if err != nil {
		b.WriteString(s.SevError.Render("cannot read the frame back: " + err.Error()))
		return b.String()
	}
	frame := ev.Frame
	var m classify.Message
	if e.Dir != classify.Err {
		h, _ := x.Header()
		m = h.Classify(frame, e.Dir, x.Profile())
	}
	// Findings: the frame's own, its batch members', the session's.
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
			b.WriteString(wrap(l, width) + "\n")
		}
	}
	if m.Answer != nil {
		b.WriteString("\n" + s.Title.Render("A strict receiver must answer") + "\n")
		b.WriteString(string(classify.AppendSafeJSON(nil, m.Answer.JSON())) + "\n")
		if e.Codes.Has(classify.CodeUnansweredInvalid) {
			b.WriteString(s.Near.Render("and the receiver did not") + "\n")
		}
	}
	b.WriteString("\n")
	if raw {
		b.WriteString(s.Title.Render("Raw bytes") + s.Dim.Render(" (escaped)") + "\n")
		if ev.Header != nil {
			b.WriteString(wrapHard(classify.Escape(ev.Header, 0), width) + "\n")
		}
		b.WriteString(wrapHard(classify.Escape(frame, 0), width))
	} else {
		text, isJSON := prettyFrame(frame)
		if isJSON {
			text = c.hl.highlight(text)
		}
		b.WriteString(text)
	}
	return b.String()
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

// wrap breaks a line at spaces to fit width cells.
func wrap(s string, width int) string {
	if width <= 10 {
		return s
	}
	return lipglossWrap(s, width)
}

// wrapHard breaks text every width cells (raw bytes have no spaces to
// break at).
func wrapHard(s string, width int) string {
	if width <= 0 {
		return s
	}
	r := []rune(s)
	var b strings.Builder
	for len(r) > width {
		b.WriteString(string(r[:width]))
		b.WriteByte('\n')
		r = r[width:]
	}
	b.WriteString(string(r))
	return b.String()
}

func lipglossWrap(s string, width int) string { return ansi.Wordwrap(s, width, " ") }
