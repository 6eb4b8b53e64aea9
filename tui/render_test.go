package tui

import (
	"strings"
	"testing"

	"github.com/alecthomas/chroma/v2"
	"github.com/muesli/termenv"
)

// The view's JSON lexer tells member names from string values, and
// numbers, constants and punctuation apart (a run of punctuation is one
// token); text that is not JSON comes
// out whole, as text.
func TestTheJSONLexerTellsTheTokensOfAFrameApart(t *testing.T) {
	text := `{"id":7, "ok" : true,"n":-1.5e3,"s":"a\u00e9\"b","none":null,"list":[1,"x",false]} not json \x1b`
	it, err := chromaParts().json.Tokenise(nil, text)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var back strings.Builder
	for tok := it(); tok != chroma.EOF; tok = it() {
		back.WriteString(tok.Value)
		if tok.Type != chroma.Text {
			got = append(got, tok.Type.String()+" "+tok.Value)
		}
	}
	if back.String() != text {
		t.Errorf("the tokens give back\n%q, not\n%q", back.String(), text)
	}
	want := []string{
		"Punctuation {", `NameTag "id"`, "Punctuation :", "LiteralNumber 7", "Punctuation ,",
		`NameTag "ok"`, "Punctuation :", "KeywordConstant true", "Punctuation ,",
		`NameTag "n"`, "Punctuation :", "LiteralNumber -1.5e3", "Punctuation ,",
		`NameTag "s"`, "Punctuation :", `LiteralStringDouble "a\u00e9\"b"`, "Punctuation ,",
		`NameTag "none"`, "Punctuation :", "KeywordConstant null", "Punctuation ,",
		`NameTag "list"`, "Punctuation :[", "LiteralNumber 1", "Punctuation ,",
		`LiteralStringDouble "x"`, "Punctuation ,", "KeywordConstant false", "Punctuation ]}",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tokens\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The highlighter colours names, strings and numbers each in a colour of
// its own, on a dark and on a light background, in every colour profile;
// with no colour it leaves the text as it is.
func TestTheHighlighterColoursEachKindOfToken(t *testing.T) {
	for _, dark := range []bool{true, false} {
		for _, p := range []termenv.Profile{termenv.TrueColor, termenv.ANSI256, termenv.ANSI} {
			h := newHighlighter(p, dark)
			name, str, num := h.highlight(`"k"`+":"), h.highlight(`"v"`), h.highlight(`12`)
			if !strings.Contains(name, "\x1b[") || !strings.Contains(str, "\x1b[") || !strings.Contains(num, "\x1b[") {
				t.Errorf("dark %v, profile %v: uncoloured: %q %q %q", dark, p, name, str, num)
			}
			if colour(name) == colour(str) || colour(str) == colour(num) {
				t.Errorf("dark %v, profile %v: name %q, string %q and number %q share a colour", dark, p, name, str, num)
			}
		}
	}
	if got := newHighlighter(termenv.Ascii, true).highlight(`{"a":1}`); got != `{"a":1}` {
		t.Errorf("no colour: %q", got)
	}
}

// colour is the first escape sequence of s.
func colour(s string) string {
	i := strings.Index(s, "\x1b[")
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(s[i:], 'm')
	return s[i : i+j+1]
}
