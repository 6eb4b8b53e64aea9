package tui

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// The composer's text is coloured as JSON by chroma's lexer: a key, a
// string value, a number and a keyword each get a colour of the style, and
// a terminal with no colour gets plain text.
func TestEditorColoursTheJSONItShows(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	c := newCommon(r)
	es := newEditStyles(c)
	lines := highlightLines(`{"key":"value","n":12,"b":true}`, es, c.hl.lexer)
	styleAt := func(sub string) int {
		i := strings.Index(`{"key":"value","n":12,"b":true}`, sub)
		return lines[0][i].style
	}
	key, val, num, kw := styleAt(`key`), styleAt(`value`), styleAt(`12`), styleAt(`true`)
	if key == 0 || val == 0 || num == 0 || kw == 0 || key == val || val == num {
		t.Errorf("styles: key %d, string %d, number %d, keyword %d; want each coloured, key, string and number apart", key, val, num, kw)
	}
	out, _ := drawEditor(lines, 0, 0, 80, 3, 0, es, c.styles.Selected)
	if !strings.Contains(out, "\x1b[") {
		t.Errorf("no colour in %q", out)
	}
	plain := newCommon(asciiRenderer())
	out, _ = drawEditor(highlightLines(`{"key":"value"}`, newEditStyles(plain), plain.hl.lexer), 0, 0, 80, 1, 0, newEditStyles(plain), plain.styles.Selected)
	if out != `{"key":"value"}` {
		t.Errorf("with no colour the text is drawn %q", out)
	}
}

// Text that came from a peer stays escaped in the composer: a frame resent
// from the list with bidi controls and a line separator in its strings
// (valid JSON) shows them as escapes, never raw.
func TestComposerShowsPeerControlCharactersEscaped(t *testing.T) {
	tm := openLiveWith(t, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"a\u202eb\u200fc\u2028d\"}")
	tm.Send(press("I"))
	waitFor(t, tm, `"method":"a\u202eb\u200fc\u2028d"`, "preview: request")
	view := finalCompose(t, tm)
	for _, raw := range []string{"\u202e", "\u200f", "\u2028"} {
		if strings.Contains(view, raw) {
			t.Errorf("the composer drew %q raw:\n%s", raw, view)
		}
	}
}

// drawEditor keeps the cursor in view: a long text scrolls, the row
// with the cursor shows.
func TestEditorScrollsToTheCursor(t *testing.T) {
	plain := newCommon(asciiRenderer())
	es := newEditStyles(plain)
	var text []string
	for i := range 30 {
		text = append(text, strings.Repeat(string(rune('a'+i%26)), 5))
	}
	lines := highlightLines(strings.Join(text, "\n"), es, nil)
	out, top := drawEditor(lines, 25, 0, 80, 4, 0, es, plain.styles.Selected)
	if top != 22 || !strings.HasSuffix(out, "zzzzz") {
		t.Errorf("with the cursor on line 25 of 30 in 4 rows: top %d, drawn %q", top, out)
	}
}

// A large text is drawn from a window around the cursor: the end of a
// line of 300,000 runes shows with the cursor at it, and the start of the
// text is not laid out at all.
func TestEditorDrawsALargeTextAroundTheCursor(t *testing.T) {
	line := `{"pad":"` + strings.Repeat("x", 300_000) + `","end":"here"}`
	win, row, col := editWindow("first line\n"+line, 1, len(line), 80, 5)
	if row != 1 || len(win) > 1000 || !strings.HasSuffix(win, `"end":"here"}`) {
		t.Fatalf("window of %d bytes, cursor row %d col %d; want the line's end, small", len(win), row, col)
	}
	plain := newCommon(asciiRenderer())
	es := newEditStyles(plain)
	out, _ := drawEditor(highlightLines(win, es, nil), row, col, 80, 5, 0, es, plain.styles.Selected)
	if !strings.Contains(out, `"end":"here"}`) {
		t.Errorf("the cursor's row does not show:\n%s", out)
	}
}
