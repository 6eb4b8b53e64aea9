package tui

import (
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// The view colours JSON with a lexer and two styles of its own, built
// with chroma's core when the first view that colours text is made:
// chroma's lexers and styles packages build every lexer and style they
// hold when the process starts, which would cost each rpctap command
// (run, tail, check) tens of milliseconds and megabytes for a view it may
// never show.

// highlightParts are the lexer and styles the highlighter is made of.
type highlightParts struct {
	json        chroma.Lexer
	dark, light *chroma.Style
}

var chromaParts = sync.OnceValue(func() highlightParts {
	return highlightParts{json: chroma.Coalesce(jsonLexer()), dark: darkStyle(), light: lightStyle()}
})

// jsonLexer tokenises JSON text (escaped as the view shows it): a string
// followed by a colon is a member name, other strings, numbers, the three
// constants and the punctuation are told apart; anything else is text, so
// a frame that is not JSON is shown as it is.
func jsonLexer() chroma.Lexer {
	return chroma.MustNewLexer(&chroma.Config{Name: "rpctap-json", NotMultiline: true, DotAll: true}, func() chroma.Rules {
		const str = `"(?:\\.|[^"\\])*"`
		return chroma.Rules{
			"root": {
				{Pattern: `\s+`, Type: chroma.Text},
				{Pattern: `(` + str + `)(\s*)(:)`, Type: chroma.ByGroups(chroma.NameTag, chroma.Text, chroma.Punctuation)},
				{Pattern: str, Type: chroma.LiteralStringDouble},
				{Pattern: `-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?`, Type: chroma.LiteralNumber},
				{Pattern: `true|false|null`, Type: chroma.KeywordConstant},
				{Pattern: `[{}\[\],:]`, Type: chroma.Punctuation},
				{Pattern: `[^\s"{}\[\],:]+|.`, Type: chroma.Text},
			},
		}
	})
}

// darkStyle is for a dark background: names green, strings yellow,
// numbers and constants violet and blue, punctuation light grey.
func darkStyle() *chroma.Style {
	return chroma.MustNewStyle("rpctap-dark", chroma.StyleEntries{
		chroma.Text:                "#e8e8e3",
		chroma.Punctuation:         "#d0d0c8",
		chroma.NameTag:             "#8fd14f",
		chroma.LiteralStringDouble: "#e0d36a",
		chroma.LiteralNumber:       "#b392f0",
		chroma.KeywordConstant:     "#6ccbe6",
	})
}

// lightStyle is for a light background, where the dark style's light
// colours would vanish: deeper blues, greens and reds.
func lightStyle() *chroma.Style {
	return chroma.MustNewStyle("rpctap-light", chroma.StyleEntries{
		chroma.Text:                "#1f2328",
		chroma.Punctuation:         "#1f2328",
		chroma.NameTag:             "#0550ae",
		chroma.LiteralStringDouble: "#0a3069",
		chroma.LiteralNumber:       "#953800",
		chroma.KeywordConstant:     "#8250df",
	})
}
