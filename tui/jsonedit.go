package tui

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/chroma/v2"
	"github.com/charmbracelet/lipgloss"
	"github.com/mattn/go-runewidth"
	"github.com/rpctap/rpctap/classify"
)

// The composer draws its text itself, over the text area that edits it:
// JSON coloured by chroma's lexer, token by token, and every rune a
// terminal must not get raw (control, bidi and other format characters,
// U+2028/U+2029) shown as an escape in a style of its own, so that text
// that came from a peer (a frame replied to or resent) stays escaped as
// it is edited.

// A cell is one rune of the text as drawn: itself, or its escape.
type cell struct {
	text  string
	width int
	style int // index in editStyles.list
}

// editStyles are the styles of the editor's cells: 0 plain, then one per
// kind of token, the escapes, the cursor.
type editStyles struct {
	list   []lipgloss.Style
	byType map[chroma.TokenType]int
	escape int
}

// newEditStyles takes its colours from the highlighter's chroma style;
// with no colour (NO_COLOR, a dumb terminal) every cell is plain.
func newEditStyles(c *common) *editStyles {
	es := &editStyles{list: []lipgloss.Style{c.styles.App}, byType: map[chroma.TokenType]int{}}
	es.escape = len(es.list)
	es.list = append(es.list, c.styles.SevWarn)
	if c.hl == nil || c.hl.style == nil {
		return es
	}
	for _, tt := range []chroma.TokenType{chroma.NameTag, chroma.LiteralString, chroma.LiteralStringDouble, chroma.LiteralNumber,
		chroma.LiteralNumberInteger, chroma.LiteralNumberFloat, chroma.Keyword, chroma.KeywordConstant, chroma.Punctuation, chroma.Error} {
		e := c.hl.style.Get(tt)
		if !e.Colour.IsSet() {
			continue
		}
		st := c.styles.App.Foreground(lipgloss.Color(e.Colour.String()))
		if e.Bold == chroma.Yes {
			st = st.Bold(true)
		}
		es.byType[tt] = len(es.list)
		es.list = append(es.list, st)
	}
	return es
}

// styleOf is the style index of a token type: its own, or its category's.
func (es *editStyles) styleOf(tt chroma.TokenType) int {
	if i, ok := es.byType[tt]; ok {
		return i
	}
	if i, ok := es.byType[tt.SubCategory()]; ok {
		return i
	}
	if i, ok := es.byType[tt.Category()]; ok {
		return i
	}
	return 0
}

// highlightLines cuts text into its lines of cells, coloured as JSON.
// Text larger than previewInline is left plain: lexing it would slow
// typing.
func highlightLines(text string, es *editStyles, lexer chroma.Lexer) [][]cell {
	lines := [][]cell{nil}
	add := func(s string, style int) {
		for _, r := range s {
			if r == '\n' {
				lines = append(lines, nil)
				continue
			}
			c := cell{text: string(r), width: runewidth.RuneWidth(r), style: style}
			if r == utf8.RuneError || classify.UnsafeRune(r) || r < 0x20 || r == 0x7f {
				c = cell{text: escapeRune(r), style: es.escape}
				c.width = len(c.text)
			}
			lines[len(lines)-1] = append(lines[len(lines)-1], c)
		}
	}
	if lexer == nil || len(text) > previewInline {
		add(text, 0)
		return lines
	}
	it, err := lexer.Tokenise(nil, text)
	if err != nil {
		add(text, 0)
		return lines
	}
	for tok := it(); tok != chroma.EOF; tok = it() {
		add(tok.Value, es.styleOf(tok.Type))
	}
	return lines
}

// escapeRune is how a rune that must not reach the terminal is shown.
func escapeRune(r rune) string {
	switch {
	case r == '\t':
		return `\t`
	case r < 0x80:
		return fmt.Sprintf(`\x%02x`, r)
	case r <= 0xffff:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\u{%x}`, r)
}

// drawEditor draws lines in a w×h window that shows the cursor (at line
// row, rune col), wrapping long lines; top is the first visual row shown
// last time, kept while the cursor stays in view. It returns the window
// and the new top.
func drawEditor(lines [][]cell, row, col, w, h, top int, es *editStyles, cursor lipgloss.Style) (string, int) {
	w, h = max(w, 1), max(h, 1)
	type vrow struct {
		cells []cell
		cur   int // index of the cursor's cell in cells, -1 when not here
	}
	var rows []vrow
	curRow := 0
	for li, line := range lines {
		cur := -1
		if li == row {
			cur = min(col, len(line))
		}
		var r vrow
		r.cur = -1
		width := 0
		for i, c := range line {
			if width+c.width > w && len(r.cells) > 0 {
				rows = append(rows, r)
				r, width = vrow{cur: -1}, 0
			}
			if i == cur {
				r.cur = len(r.cells)
				curRow = len(rows)
			}
			r.cells = append(r.cells, c)
			width += c.width
		}
		if cur == len(line) { // the cursor after the line's last rune
			if width+1 > w && len(r.cells) > 0 {
				rows = append(rows, r)
				r = vrow{cur: -1}
			}
			r.cur = len(r.cells)
			r.cells = append(r.cells, cell{text: " ", width: 1})
			curRow = len(rows)
		}
		rows = append(rows, r)
	}
	top = min(max(top, curRow-h+1), curRow)
	top = max(min(top, len(rows)-h), 0)
	var b strings.Builder
	for i := top; i < top+h; i++ {
		if i > top {
			b.WriteByte('\n')
		}
		if i >= len(rows) {
			continue
		}
		r := rows[i]
		for j := 0; j < len(r.cells); {
			if j == r.cur {
				b.WriteString(cursor.Render(r.cells[j].text))
				j++
				continue
			}
			k := j
			var run strings.Builder
			for k < len(r.cells) && k != r.cur && r.cells[k].style == r.cells[j].style {
				run.WriteString(r.cells[k].text)
				k++
			}
			b.WriteString(es.list[r.cells[j].style].Render(run.String()))
			j = k
		}
	}
	return b.String(), top
}
