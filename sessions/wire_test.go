package sessions

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAppendQuotedGrowsItsBufferWhateverTheEscapes quotes text with
// escapes placed anywhere into buffers with no room to spare, and checks
// the result against encoding/json reading it back.
func TestAppendQuotedGrowsItsBufferWhateverTheEscapes(t *testing.T) {
	pieces := []string{"a", "abcdefghijk", "\x00", "\x1f", "\n", "\"", "é", "\u2028", "\xff"}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		var sb strings.Builder
		for range rng.IntN(200) {
			sb.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := sb.String()
		prefix := make([]byte, rng.IntN(4), rng.IntN(4)+4)
		got := appendString(prefix, s)
		var back string
		if err := json.Unmarshal(got[len(prefix):], &back); err != nil {
			t.Fatalf("%q quoted as %s: %v", s, got, err)
		}
		if want := strings.ReplaceAll(s, "\xff", "\uFFFD"); back != want {
			t.Fatalf("%q quoted as %s, which reads as %q", s, got, back)
		}
		strict, ok := appendQuoted([]byte(nil), []byte(s), true)
		if ok == strings.Contains(s, "\xff") {
			t.Fatalf("%q: strict quoting says ok = %v", s, ok)
		}
		if ok && string(strict) != string(got[len(prefix):]) {
			t.Fatalf("%q: strict and lenient quoting differ: %s and %s", s, strict, got)
		}
	}
}
