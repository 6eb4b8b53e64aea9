package tui

import (
	"fmt"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
)

// This file holds what the composer draws: the text, the lists, the
// preview and warning lines, and its help.

// listView lists the catalog's entries (with the direction each makes
// sense in and its rule) or the templates (with where each goes and its
// frame) around the selected one.
func (p *composer) listView() string {
	s := p.c.styles
	limit := max(p.height-composerLines, 1) // lines
	h := limit                              // of them, entries
	var lines []string
	total := len(p.catalog)
	if p.picking == pickTemplates {
		total = len(p.templates)
	}
	if f := p.filter.View(p.listLen(), total, p.width); f != "" {
		lines = append(lines, f)
		h = max(h-1, 1)
	}
	n := p.listLen()
	first := min(max(p.sel-h/2, 0), max(n-h, 0))
	nameW := 0
	for _, t := range p.templates {
		nameW = max(nameW, min(len(classify.EscapeString(t.Name, 80)), 36))
	}
	if n == 0 && p.filter.active() {
		lines = append(lines, s.Dim.Render("  none matches the filter"))
	}
	for j := first; j < n && len(lines) < limit; j++ {
		i := p.shown[j]
		var line string
		if p.picking == pickTemplates {
			t := p.templates[i]
			line = fmt.Sprintf("%-*s %-4s %s", nameW, truncate(classify.EscapeString(t.Name, 80), nameW), t.Dir, classify.Escape(t.Body, 400))
		} else {
			e := p.catalog[i]
			dir := "either"
			if e.Dir != inject.Either {
				dir = e.Dir.String()
			}
			line = fmt.Sprintf("%-24s %-6s %s", e.Name, dir, e.Rule)
		}
		line = truncate(line, p.width)
		if j == p.sel {
			line = s.Selected.Render(line)
		}
		lines = append(lines, line)
	}
	for len(lines) < limit {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// View draws the text area, the direction, the preview and the warning.
func (p *composer) View() string {
	s := p.c.styles
	dir := "→ to the server, as if from the host"
	if p.dir == classify.S2H {
		dir = "← to the host, as if from the server"
	}
	answer := s.Dim.Render(" · answer captured (ctrl+o)")
	if p.forward {
		answer = s.SevWarn.Render(" · answer FORWARDED to the " + inject.Sender(p.dir) + " (ctrl+o)")
	}
	top := p.editorView()
	if p.picking != pickNone {
		top = p.listView()
	}
	lines := []string{
		top,
		truncate(s.Title.Render("inject ")+dir+answer, p.width),
		truncate(p.previewLine(), p.width),
		truncate(p.warningLine(), p.width),
	}
	return lipgloss.JoinVertical(lipgloss.Left, lines...)
}

// previewLine says how the receiver reads the frames: kind, findings, the
// strict answer, the framing.
func (p *composer) previewLine() string {
	s := p.c.styles
	switch {
	case strings.TrimSpace(p.ta.Value()) == "":
		return s.Dim.Render("preview: write a frame (one per line; \\xHH is a byte)")
	case !p.ready:
		return s.Dim.Render("preview: reading the frame…")
	case p.parse != nil:
		return s.SevError.Render("✗ " + p.parse.Error())
	case len(p.preview.Frames) == 0:
		return s.Dim.Render("preview: no frame")
	}
	var parts []string
	parts = append(parts, p.preview.Kinds())
	var codes []string
	for _, r := range p.preview.Frames {
		for _, f := range r.Message.Findings {
			codes = append(codes, f.Code.String())
		}
	}
	if len(codes) > 0 {
		parts = append(parts, "findings "+strings.Join(codes, ","))
	}
	// No error is owed: a request still gets its answer, and saying it
	// "owes no answer" read as if it needed none.
	answer := "a strict " + inject.Receiver(p.dir) + " sends no error back"
	for _, r := range p.preview.Frames {
		if r.Answer != nil {
			answer = "a strict " + inject.Receiver(p.dir) + " answers " + classify.EscapeString(string(r.Answer), 80)
			break
		}
	}
	parts = append(parts, answer, p.preview.Frames[len(p.preview.Frames)-1].Framed())
	return s.Dim.Render("preview: ") + strings.Join(parts, " · ")
}

// warningLine is the feedback, the warning or a collision.
func (p *composer) warningLine() string {
	s := p.c.styles
	switch {
	case p.noteText != "":
		return s.SevWarn.Render(p.noteText)
	case p.ready && p.warning() != "":
		return s.SevWarn.Render("⚠ " + p.warning())
	case p.ready && p.reused() != "":
		return s.Dim.Render("the id " + p.reused() + " was sent already: ctrl+s sends this with a fresh one")
	case p.ready && len(p.preview.Collisions) > 0:
		return s.SevWarn.Render("⚠ " + p.preview.Collisions[0])
	}
	return ""
}

// editorView draws the text, coloured as JSON, with peer text escaped;
// the placeholder when there is none. A large text is drawn from a
// window around the cursor only, so that a key typed into a frame of
// megabytes costs no more than one into a small one.
func (p *composer) editorView() string {
	text := p.ta.Value()
	if text == "" {
		return p.ta.View()
	}
	h := max(p.height-composerLines, 1)
	li := p.ta.LineInfo()
	row, col := p.ta.Line(), li.StartColumn+li.ColumnOffset
	if len(text) > previewInline {
		win, wrow, wcol := editWindow(text, row, col, p.width, h)
		out, _ := drawEditor(highlightLines(win, p.es, nil), wrow, wcol, p.width, h, 0, p.es, p.c.styles.Selected)
		return out
	}
	if p.cells == nil || p.cellsOf != text {
		p.cells, p.cellsOf = highlightLines(text, p.es, p.lexer()), text
	}
	out, top := drawEditor(p.cells, row, col, p.width, h, p.top, p.es, p.c.styles.Selected)
	p.top = top
	return out
}

// editWindow cuts from text the lines around line row that a w×h window
// can show, and of each long line the runes around the cursor (col on
// row) or its start; it returns them with the cursor's place in them.
func editWindow(text string, row, col, w, h int) (string, int, int) {
	lines := strings.Split(text, "\n")
	first := max(row-h, 0)
	last := min(row+h, len(lines)-1)
	span := max(w, 1) * h // runes a window shows at most
	var out []string
	wrow, wcol := row-first, col
	for i := first; i <= last; i++ {
		line := lines[i]
		if len(line) <= span {
			out = append(out, line)
			continue
		}
		r := []rune(line)
		from := 0
		if i == row {
			// Whole rows before the cursor, so that wrapping keeps the
			// columns it has in the full line.
			from = max(col-span+max(w, 1), 0) / max(w, 1) * max(w, 1)
			wcol = col - from
		}
		out = append(out, string(r[from:min(from+span, len(r))]))
	}
	return strings.Join(out, "\n"), wrow, wcol
}

func (p *composer) lexer() chroma.Lexer {
	if p.c.hl == nil {
		return nil
	}
	return p.c.hl.lexer
}

// ShortHelp is the footer while the composer is open.
func (p *composer) ShortHelp() []key.Binding {
	k := p.c.keys
	switch {
	case p.picking != pickNone && p.filter.typing:
		return p.filter.ShortHelp()
	case p.picking != pickNone && p.filter.active():
		return []key.Binding{k.Up, k.Down, k.Open, k.Filter, k.ClearFilter, k.Help}
	case p.picking != pickNone:
		return []key.Binding{k.Up, k.Down, k.Open, k.ComposeClose, k.Filter, k.Help}
	}
	// ctrl+o shows on the direction line; at 80 columns the rest fit
	// but for the editor.
	return []key.Binding{k.ComposeSend, k.ComposeClose, k.ComposeDir, k.ComposeTemplates, k.ComposeCatalog, k.ComposeEditor}
}

// FullHelp is the ? screen over a list: its keys.
func (p *composer) FullHelp() [][]key.Binding {
	k := p.c.keys
	return [][]key.Binding{{k.Up, k.Down, k.Open}, {k.Filter, k.ClearFilter, k.ComposeClose, k.Interrupt}}
}
