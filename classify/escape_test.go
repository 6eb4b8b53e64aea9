package classify

import (
	"strings"
	"testing"
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
