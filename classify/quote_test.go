package classify

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// replaceInvalid is s with each byte that is not part of valid UTF-8
// replaced by U+FFFD, as a lenient quoting writes it.
func replaceInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// TestAppendQuotedGrowsItsBufferWhateverTheEscapes quotes text with
// escapes placed anywhere into buffers with no room to spare, and checks
// the result against encoding/json reading it back.
func TestAppendQuotedGrowsItsBufferWhateverTheEscapes(t *testing.T) {
	pieces := []string{"a", "abcdefghijk", "\x00", "\x1f", "\n", "\"", "\\", "\x7f", " ", "é", "\u2028", "\u2029", "\xe2\x80", "\xff", "敏捷"}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		var sb strings.Builder
		for range rng.IntN(200) {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := sb.String()
		prefix := make([]byte, rng.IntN(4), rng.IntN(4)+4)
		got := AppendString(prefix, s)
		var back string
		if err := json.Unmarshal(got[len(prefix):], &back); err != nil {
			t.Fatalf("%q quoted as %s: %v", s, got, err)
		}
		if want := replaceInvalid(s); back != want {
			t.Fatalf("%q quoted as %s, which reads as %q", s, got, back)
		}
		strict, ok := AppendQuoted([]byte(nil), []byte(s), true)
		if ok != utf8.ValidString(s) {
			t.Fatalf("%q: strict quoting says ok = %v", s, ok)
		}
		if ok && string(strict) != string(got[len(prefix):]) {
			t.Fatalf("%q: strict and lenient quoting differ: %s and %s", s, strict, got)
		}
	}
}
