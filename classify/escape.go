package classify

import (
	"strconv"
	"unicode/utf8"
)

// Escape makes peer text safe for a terminal: control characters (tab and
// line feed included, so the text stays on one line), DEL, C1 controls,
// bidi and other format characters, U+2028 and U+2029 are shown as escapes
// (\x1b, \u202e), and bytes that are not UTF-8 as \xNN. When the text is
// longer than max bytes (max > 0) it is cut at a character boundary and a
// marker says how long it was.
func Escape(b []byte, max int) string {
	out := make([]byte, 0, min(len(b), max+32)+8)
	return string(AppendEscaped(out, b, max))
}

// AppendEscaped appends Escape(b, max) to dst.
func AppendEscaped(dst, b []byte, max int) []byte {
	const hex = "0123456789abcdef"
	start := len(dst)
	for i := 0; i < len(b); {
		if max > 0 && len(dst)-start >= max {
			dst = append(dst, "… ("...)
			dst = strconv.AppendInt(dst, int64(len(b)), 10)
			return append(dst, " bytes in all)"...)
		}
		c := b[i]
		if c >= 0x20 && c < 0x7f {
			dst = append(dst, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '\t':
				dst = append(dst, `\t`...)
			case '\n':
				dst = append(dst, `\n`...)
			case '\r':
				dst = append(dst, `\r`...)
			default:
				dst = append(dst, '\\', 'x', hex[c>>4], hex[c&15])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			dst = append(dst, '\\', 'x', hex[c>>4], hex[c&15])
		case unsafeRune(r):
			dst = append(dst, '\\', 'u')
			if r > 0xffff {
				dst = append(dst, '{')
				dst = strconv.AppendInt(dst, int64(r), 16)
				dst = append(dst, '}')
			} else {
				dst = append(dst, hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
			}
		default:
			dst = append(dst, b[i:i+size]...)
		}
		i += size
	}
	return dst
}

// EscapeString is Escape for a string.
func EscapeString(s string, max int) string { return Escape([]byte(s), max) }
