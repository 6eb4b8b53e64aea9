package classify

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// The appendJSONString that quoted a byte at a time, kept as the oracle of
// the one on appendQuoted: for any text, both write the same bytes after
// any prefix. Run it with
//
//	go test -run XXX -fuzz FuzzAppendJSONStringMatchesItsOracle -fuzztime 60s ./classify
func FuzzAppendJSONStringMatchesItsOracle(f *testing.F) {
	for _, s := range []string{"", "a", `"\`, "\x00\x1f\x7f", "\n\r\t\b\f", "é", "\u2028\u2029", "\u200e\u202e\u2066", "\u0085\u00ad",
		"\xe2\x80", "\xff", "敏捷", "\U0001F600", "\U000E0001", "\ufeff", "\xed\xa0\x80", "abcdefghijklmnopqrstuvwxyz0123456789\"\\abcdefghijklmnop"} {
		f.Add(s, 0)
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, prefix int) {
		pre := bytes.Repeat([]byte{'x'}, prefix&7)
		got := appendJSONString(bytes.Clone(pre), s)
		want := oracleAppendJSONString(bytes.Clone(pre), s)
		if !bytes.Equal(got, want) {
			t.Fatalf("%q quoted as %q, oracle %q", s, got, want)
		}
	})
}

func oracleAppendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, `\ufffd`...)
		case r == 0x2028 || r == 0x2029:
			dst = append(dst, `\u202`...)
			dst = append(dst, hex[r&15])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
