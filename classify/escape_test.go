package classify

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

func TestEscapeNeverPassesTerminalControlThrough(t *testing.T) {
	cases := map[string]string{
		"\x1b[2J":                    `\x1b[2J`,
		"\x1b]52;c;SGVsbG8=\x07":     `\x1b]52;c;SGVsbG8=\x07`,
		"\x1b]8;;http://x\x1b\\link": `\x1b]8;;http://x\x1b\link`,
		"a\u009bb":                   `a\u009bb`,
		"\xc2":                       `\xc2`,
		"a\u202eb\u2028c\u2029d":     `a\u202eb\u2028c\u2029d`,
		"zero\u200bwidth\ufeff":      `zero\u200bwidth\ufeff`,
		"tag\U000E0041":              `tag\u{e0041}`,
		"tab\tnl\ncr\r":              `tab\tnl\ncr\r`,
		"del\x7f nul\x00":            `del\x7f nul\x00`,
		"héllo 世界 😀 \"quoted\" \\":   "héllo 世界 😀 \"quoted\" \\",
	}
	for in, want := range cases {
		if got := EscapeString(in, 0); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEscapeCutsLongTextWithItsLength(t *testing.T) {
	got := EscapeString(strings.Repeat("é", 100), 21)
	if !strings.HasPrefix(got, strings.Repeat("é", 11)+"… (200 bytes in all)") {
		t.Errorf("got %q", got)
	}
}

// A backslash the peer wrote never reads as one of Escape's own escapes, in
// plain text with no colour.
func TestEscapeShowsAPeersBackslashApartFromItsOwnEscapes(t *testing.T) {
	cases := map[string]string{
		`\x1b[2J`:           `\\x1b[2J`, // typed by the peer: six characters
		"\x1b[2J":           `\x1b[2J`,  // a real ESC
		`\u202e`:            `\\u202e`,
		"\u202e":            `\u202e`,
		`a\nb\tc\rd`:        `a\\nb\\tc\\rd`,
		`a\\x`:              `a\\\\x`,
		"\\\x1b":            `\\\x1b`,
		"\\\u202e":          `\\\u202e`,
		"\\\xff":            `\\\xff`,
		`{"a":"b\"c\/d"}`:   `{"a":"b\"c\/d"}`,
		`C:\Program Files\`: `C:\Program Files\`,
	}
	for in, want := range cases {
		if got := EscapeString(in, 0); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
	// Escape is one to one: different texts never show the same.
	seen := map[string]string{}
	for _, in := range []string{`\x1b`, "\x1b", `\\x1b`, "\\\x1b", `\\`, `\`, "\\\\\x1b", `\n`, "\n", `\\n`, "\\\n"} {
		got := EscapeString(in, 0)
		if prev, ok := seen[got]; ok {
			t.Errorf("%q and %q both show as %q", prev, in, got)
		}
		seen[got] = in
	}
}

// JSON that rpctap prints is valid UTF-8, with control, bidi and format
// characters as \u escapes, and means what it meant.
func TestAppendSafeJSONEscapesWhatATerminalMustNotSee(t *testing.T) {
	in := "{\"a\":\"x\u202ey\u009bz\x7f\u200b\ufeff\u2066\u061c\U000E0041\u2028 é世😀\",\n\t\"b\":\"\xff\x9b\"}"
	got := string(AppendSafeJSON(nil, []byte(in)))
	want := `{"a":"x\u202ey\u009bz\u007f\u200b\ufeff\u2066\u061c\udb40\udc41\u2028 é世😀",` + "\n\t" + `"b":"\ufffd\ufffd"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var a, b map[string]string
	if err := json.Unmarshal([]byte(got), &a); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(in), &b)
	if a["a"] != b["a"] {
		t.Errorf("the value changed: %q, was %q", a["a"], b["a"])
	}
	if plain := `{"a":"b\"c","d":[1,2]}`; string(AppendSafeJSON(nil, []byte(plain))) != plain {
		t.Errorf("plain JSON changed")
	}
}

// UnsafeRune's quick ranges leave out no format character.
func TestUnsafeRuneHoldsEveryFormatCharacter(t *testing.T) {
	for r := rune(0xa0); r <= unicode.MaxRune; r++ {
		if want := unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029; UnsafeRune(r) != want {
			t.Errorf("UnsafeRune(%U) = %v", r, !want)
		}
	}
}

// Every kind has a phrase for sentences, with the article its first word
// takes ("only a request can be replied to, and this frame is an invalid
// request", never "a invalid").
func TestEveryKindHasAPhraseWithItsArticle(t *testing.T) {
	for k := KindBlank; k <= KindNotification; k++ {
		p := k.Phrase()
		article, rest, _ := strings.Cut(p, " ")
		vowel := strings.ContainsRune("aeiou", rune(rest[0]))
		if p == "a frame of unknown kind" || (article == "an") != vowel || (article != "a" && article != "an") {
			t.Errorf("%s: phrase %q", k, p)
		}
	}
}

// AppendSafeJSON skips eight printable ASCII bytes at a time: a word with
// any other byte anywhere in it takes the byte path, so each byte is
// escaped as it is alone.
func TestAppendSafeJSONWordsEscapeAsBytesDo(t *testing.T) {
	for c := 0; c < 256; c++ {
		alone := string(AppendSafeJSON(nil, []byte{byte(c)}))
		for at := 0; at < 17; at++ {
			in := []byte(strings.Repeat("a", 24))
			in[at] = byte(c)
			want := strings.Repeat("a", at) + alone + strings.Repeat("a", 23-at)
			if got := string(AppendSafeJSON(nil, in)); got != want {
				t.Fatalf("byte %#x at %d: got %q, want %q", c, at, got, want)
			}
		}
	}
}
