package classify

import "unicode/utf8"

// This file holds the JSON text helpers over the scanner of scan.go: string
// escapes decoded (DecodeEscape, unescape), and one value checked or read
// (Valid, Member, StringValue, RawID).

// hex4 reads the four hex digits at the start of b.
func hex4[S ~string | ~[]byte](b S) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for i := range 4 {
		v := unhex(b[i])
		if v < 0 {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// keyIs compares a member's key with name, decoding escapes when there are
// any (a peer may write "\u0069d" for "id").
func keyIs(key []byte, escaped bool, name string) bool {
	if !escaped {
		return string(key) == name
	}
	if len(key) > 6*len(name)+6 {
		return false
	}
	var buf [64]byte
	dec, ok := unescape(buf[:0], key)
	return ok && string(dec) == name
}

// unescape appends the decoded content of a JSON string's raw bytes (between
// the quotes) to dst. Lone surrogates become U+FFFD, as encoding/json does.
func unescape(dst, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			j := i + 1
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			dst = append(dst, raw[i:j]...)
			i = j
			continue
		}
		r, n, ok := DecodeEscape(raw[i:])
		if !ok {
			return dst, false
		}
		dst = utf8.AppendRune(dst, r)
		i += n
	}
	return dst, true
}

// DecodeEscape decodes the escape that s starts with, inside a JSON string
// (s[0] is the backslash): the character it stands for and its length. A
// \u escape of a high surrogate followed by one of a low surrogate is one
// character, twelve bytes long; a lone surrogate is U+FFFD, as
// encoding/json decodes it. ok is false for a bad or cut escape.
func DecodeEscape[S ~string | ~[]byte](s S) (r rune, n int, ok bool) {
	if len(s) < 2 || s[0] != '\\' {
		return 0, 0, false
	}
	switch c := s[1]; c {
	case '"', '\\', '/':
		return rune(c), 2, true
	case 'b':
		return '\b', 2, true
	case 'f':
		return '\f', 2, true
	case 'n':
		return '\n', 2, true
	case 'r':
		return '\r', 2, true
	case 't':
		return '\t', 2, true
	case 'u':
	default:
		return 0, 0, false
	}
	r, ok = hex4(s[2:])
	if !ok {
		return 0, 0, false
	}
	switch {
	case r >= 0xd800 && r < 0xdc00:
		if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			if lo, ok := hex4(s[8:]); ok && lo >= 0xdc00 && lo < 0xe000 {
				return 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00), 12, true
			}
		}
		return utf8.RuneError, 6, true
	case r >= 0xdc00 && r < 0xe000:
		return utf8.RuneError, 6, true
	}
	return r, 6, true
}

// Valid reports whether data is exactly one JSON value, with optional
// whitespace around it; it agrees with encoding/json's Valid.
func Valid(data []byte) bool {
	var s scanner
	s.data = data
	s.skipSpace()
	s.skipValue(0)
	if s.stopped() {
		return false
	}
	s.skipSpace()
	return s.pos == len(data)
}

// SkipValue checks that one JSON value starts at s[i], with no space
// before it, and returns the index after it; ok is false when there is
// none, or it is not valid JSON (nested deeper than encoding/json reads).
// It does not change s.
func SkipValue(s []byte, i int) (next int, ok bool) {
	sc := scanner{data: s, pos: i}
	sc.skipValue(0)
	if sc.stopped() {
		return 0, false
	}
	return sc.pos, true
}

// Member returns the raw value of the member named key in the JSON object
// obj (the first one, when the name repeats), or nil when obj is not an
// object or has no such member.
func Member(obj []byte, key string) []byte {
	var s scanner
	s.data = obj
	s.skipSpace()
	if s.pos >= len(obj) || obj[s.pos] != '{' {
		return nil
	}
	var it members
	if !it.begin(&s, 0) {
		return nil
	}
	for it.next(&s) {
		start := s.pos
		s.skipValue(1)
		if s.stopped() {
			return nil
		}
		if keyIs(it.key, it.escaped, key) {
			return obj[start:s.pos]
		}
	}
	return nil
}

// StringValue decodes a raw JSON string value; ok is false when raw is not
// a string.
func StringValue(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	dec, ok := unescape(nil, raw[1:len(raw)-1])
	return string(dec), ok
}

// RawID reads a raw JSON value as an id (for ids found inside params, such
// as a cancellation's requestId).
func RawID(raw []byte) ID {
	var s scanner
	s.data = raw
	return ID{Raw: raw, typ: s.peekType()}
}
