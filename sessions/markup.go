package sessions

import (
	"strconv"
	"unicode/utf8"
)

// This file holds the one escaping of text for the XML and HTML rpctap
// writes (the JUnit report, the HTML export): the markup characters as
// entities, and every character XML 1.0 forbids written as a visible
// escape in classify.Escape's manner (\x01, \ufffe, \u{10ffff}), since
// XML has no way to carry one, not even as a character reference. Text
// from a peer is masked and escaped for a terminal before it comes here;
// what that leaves is valid UTF-8 apart from bytes it was not given.

// xmlForbidden reports whether XML 1.0 has no place for the character
// r: C0 controls but tab, line feed and carriage return, surrogates, and
// the noncharacters (U+FDD0 to U+FDEF, and the last two of every plane:
// U+FFFE, U+FFFF, U+1FFFE ...), which XML discourages and its parsers
// reject at U+FFFE and U+FFFF.
func xmlForbidden(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n' && r != '\r'
	case r < 0xd800:
		return false
	case r < 0xe000:
		return true
	case r >= 0xfdd0 && r <= 0xfdef:
		return true
	}
	return r&0xfffe == 0xfffe
}

// AppendMarkup appends s to dst escaped for XML 1.0 and HTML: &, <, >,
// " and ' as entities (attr: tab and line breaks too, which an attribute
// value would otherwise turn into spaces), each character XML forbids
// and each byte that is not UTF-8 as an escape. A backslash of s right
// before such an escape is doubled, as classify.Escape doubles one before
// an escape of its own, so that the text reads back without doubt.
func AppendMarkup(dst []byte, s string, attr bool) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '&':
				dst = append(dst, "&amp;"...)
			case c == '<':
				dst = append(dst, "&lt;"...)
			case c == '>':
				dst = append(dst, "&gt;"...)
			case c == '"':
				dst = append(dst, "&#34;"...)
			case c == '\'':
				dst = append(dst, "&#39;"...)
			case attr && c == '\t':
				dst = append(dst, "&#x9;"...)
			case attr && c == '\n':
				dst = append(dst, "&#xA;"...)
			case attr && c == '\r':
				dst = append(dst, "&#xD;"...)
			case xmlForbidden(rune(c)):
				dst = append(backslashBefore(dst), '\\', 'x', hex[c>>4], hex[c&15])
			default:
				dst = append(dst, c)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(backslashBefore(dst), '\\', 'x', hex[c>>4], hex[c&15])
		case xmlForbidden(r) && r > 0xffff:
			dst = append(backslashBefore(dst), `\u{`...)
			dst = append(strconv.AppendInt(dst, int64(r), 16), '}')
		case xmlForbidden(r):
			dst = append(backslashBefore(dst), '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

// backslashBefore doubles a backslash that dst ends with, alone, before
// an escape is appended: an odd run of them ends in the peer's own.
func backslashBefore(dst []byte) []byte {
	n := 0
	for n < len(dst) && dst[len(dst)-1-n] == '\\' {
		n++
	}
	if n%2 == 1 {
		dst = append(dst, '\\')
	}
	return dst
}

// MarkupText is s escaped for XML or HTML element text.
func MarkupText(s string) string { return string(AppendMarkup(nil, s, false)) }

// MarkupAttr is s escaped for an XML or HTML attribute value in quotes.
func MarkupAttr(s string) string { return string(AppendMarkup(nil, s, true)) }
