package filter

import (
	"bytes"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse: any expression parses or gives a *SyntaxError with a column
// inside it, without panicking; a parsed filter's String parses to an equal
// filter, which prints the same and matches the same frames.
func FuzzParse(f *testing.F) {
	for _, tc := range matchCases {
		f.Add(tc.expr)
	}
	for _, s := range []string{`"abc`, `a"b"`, `!!x`, `id:"\u0031"`, `method:"a b" "x\\y"`, "! \t", "→ dir:x", `"ab\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := Parse(expr)
		if err != nil {
			se, ok := err.(*SyntaxError)
			if !ok {
				t.Fatalf("Parse(%q) error %T, want *SyntaxError", expr, err)
			}
			if se.Column < 1 || se.Column > utf8.RuneCountInString(expr)+1 {
				t.Fatalf("Parse(%q): column %d is outside the expression", expr, se.Column)
			}
			return
		}
		s := flt.String()
		again, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not parse: %v", expr, s, err)
		}
		if !reflect.DeepEqual(flt.terms, again.terms) {
			t.Fatalf("Parse(%q) = %q, which parses to a different filter", expr, s)
		}
		if again.String() != s {
			t.Fatalf("String is not stable: %q then %q", s, again.String())
		}
		for _, c := range corpus {
			fr := c.frame
			fr.Payload = payload(c.payload)
			if flt.Match(&fr) != again.Match(&fr) {
				t.Fatalf("%q and %q disagree on %s", expr, s, c.name)
			}
		}
	})
}

// FuzzGlob: a compiled glob agrees with the same pattern as a regular
// expression (`*` any run of characters, `?` one character).
func FuzzGlob(f *testing.F) {
	for _, s := range []string{"tools/*", "*/list", "*a*", "a*b?c", "??/??", "", "*"} {
		f.Add(s, "tools/list")
		f.Add(s, "工具/调用")
	}
	f.Fuzz(func(t *testing.T, pat, s string) {
		if !utf8.ValidString(pat) || !utf8.ValidString(s) || len(pat) > 64 {
			return
		}
		var re strings.Builder
		re.WriteString(`^(?s:`)
		for _, r := range pat {
			switch r {
			case '*':
				re.WriteString(`.*`)
			case '?':
				re.WriteString(`.`)
			default:
				re.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		re.WriteString(`)$`)
		want := regexp.MustCompile(re.String()).MatchString(s)
		g := compileGlob(pat)
		if got := g.match(s); got != want {
			t.Fatalf("glob %q on %q = %v, regexp %s says %v", pat, s, got, re.String(), want)
		}
	})
}

// FuzzText: a text token finds the phrase where a plain search of folded
// text does: ASCII folding for an ASCII phrase, full case folding
// otherwise.
func FuzzText(f *testing.F) {
	f.Add("Hello Wörld", "wÖr")
	f.Add("Hello Wörld", "LLO")
	f.Add(`{"a":"K"}`, "k")
	f.Add("ſtop", "STOP")
	f.Fuzz(func(t *testing.T, hay, phrase string) {
		if !utf8.ValidString(hay) || !utf8.ValidString(phrase) {
			return
		}
		n := newNeedle(phrase)
		var want bool
		if n.lower != "" || phrase == "" {
			want = strings.Contains(asciiLower(hay), asciiLower(phrase))
		} else {
			for i := 0; i <= len(hay) && !want; i++ {
				for j := i; j <= len(hay) && !want; j++ {
					want = strings.EqualFold(hay[i:j], phrase)
				}
			}
		}
		if got := n.containedIn([]byte(hay)); got != want {
			t.Fatalf("%q in %q (payload): %v, want %v", phrase, hay, got, want)
		}
		if got := n.matchHead(&Frame{Method: hay}); got != want {
			t.Fatalf("%q in %q (method): %v, want %v", phrase, hay, got, want)
		}
		if got := bytes.Contains([]byte(hay), []byte(phrase)); got && !want {
			t.Fatalf("%q is in %q but the search missed it", phrase, hay)
		}
	})
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
