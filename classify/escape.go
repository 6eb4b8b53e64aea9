package classify

import (
	"encoding/binary"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Escape makes peer text safe for a terminal: control characters (tab and
// line feed included, so the text stays on one line), DEL, C1 controls,
// bidi and other format characters, U+2028 and U+2029 are shown as escapes
// (\x1b, \u202e), and bytes that are not UTF-8 as \xNN. When the text is
// longer than max bytes (max > 0) it is cut at a character boundary and a
// marker says how long it was.
//
// Escape is the one escaping of peer text for the terminal: every text
// view (the UI's list and detail, tail, check, ls) goes through it.
//
// A backslash the peer wrote is shown as \\ wherever it could be read as
// the start of one of these escapes: before t, n, r, x, u, a backslash, or
// a byte that is shown escaped. So a peer's six characters \x1b show as
// \\x1b, never as a real ESC does, and the text reads back unambiguously
// without colour: \\ is a peer's backslash, \t \n \r \xNN \uNNNN
// \u{N} are rpctap's, and any other backslash is the peer's. A peer's \"
// or \/ (common in JSON) shows as it is.
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
		if c == '\\' {
			dst = append(dst, '\\')
			if i+1 < len(b) && looksEscaped(b[i+1:]) {
				dst = append(dst, '\\')
			}
			i++
			continue
		}
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

// looksEscaped reports whether a backslash before b would read as the
// start of one of Escape's escapes: b starts with a letter of one, a
// backslash, or a byte Escape shows escaped.
func looksEscaped(b []byte) bool {
	switch c := b[0]; {
	case c == 't' || c == 'n' || c == 'r' || c == 'x' || c == 'u' || c == '\\':
		return true
	case c >= 0x20 && c < 0x7f:
		return false
	case c < utf8.RuneSelf:
		return true
	}
	r, size := utf8.DecodeRune(b)
	return r == utf8.RuneError && size <= 1 || unsafeRune(r)
}

// AppendSafeJSON appends the JSON text js to dst, rewritten so that a
// terminal can be handed it: valid UTF-8, with every character Escape
// would escape written as a JSON escape instead (\u001b, \u007f, \u009b,
// \u202e, a surrogate pair past U+FFFF), tab and line feed apart, which
// stay as they are (they lay out indented JSON). A byte that is not UTF-8
// becomes \ufffd; rpctap's JSON outputs that must keep such bytes carry
// them in base64 as well (as the session file's frame_b64 does).
//
// In valid JSON all of those characters can only be inside strings, so
// the result is valid JSON of the same value (with U+FFFD for bad bytes).
// AppendSafeJSON is the one escaping of JSON that rpctap prints: every
// --json output and the UI's JSON view go through it, so that piping them
// through jq to a terminal is as safe as the text views.
func AppendSafeJSON(dst, js []byte) []byte {
	const hex = "0123456789abcdef"
	u := func(dst []byte, r rune) []byte {
		return append(dst, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
	}
	plain := 0 // js[plain:i] is still to be copied
	for i := 0; i < len(js); {
		// Eight printable ASCII bytes at a time: most of any JSON.
		for i+8 <= len(js) && !unsafeWord(binary.LittleEndian.Uint64(js[i:])) {
			i += 8
		}
		if i >= len(js) {
			break
		}
		c := js[i]
		if c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' {
			i++
			continue
		}
		dst = append(dst, js[plain:i]...)
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRune(js[i:])
		}
		switch {
		case r == utf8.RuneError && size <= 1:
			dst = u(dst, utf8.RuneError)
		case r < utf8.RuneSelf || unsafeRune(r):
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				dst = u(u(dst, r1), r2)
			} else {
				dst = u(dst, r)
			}
		default:
			dst = append(dst, js[i:i+size]...)
		}
		i += size
		plain = i
	}
	return append(dst, js[plain:]...)
}

// unsafeWord reports whether any of the eight bytes in x is outside
// printable ASCII (below 0x20, DEL, or 0x80 and above).
func unsafeWord(x uint64) bool {
	const lo7, lo8, hi8 = 0x7f7f7f7f7f7f7f7f, 0x0101010101010101, 0x8080808080808080
	low := x & lo7
	return (x|^(low+lo8*0x60)|(low+lo8))&hi8 != 0
}

// EscapeString is Escape for a string.
func EscapeString(s string, max int) string { return Escape([]byte(s), max) }
