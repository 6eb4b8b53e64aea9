package sessions

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
)

// This file holds the JSON details of a record line: the small scanner
// the reader uses in place of encoding/json (keys are few and known,
// values are strings, integers and booleans, and frames must come back
// byte for byte). The writer quotes strings with classify.AppendQuoted.

// The hot loops look at eight bytes at a time: a word-at-a-time test says
// whether any of them needs attention, and which comes first.
const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// stopBytes sets the high bit of each byte of x that is '"', '\\' or a
// control character (below 0x20); bytes after the first such byte may be
// set when they should not be, so only the lowest set bit is to be
// trusted. It is zero when no byte of x is one of those.
func stopBytes(x uint64) uint64 {
	q := x ^ lo8*'"'
	bs := x ^ lo8*'\\'
	return ((x-lo8*0x20)&^x | (q-lo8)&^q | (bs-lo8)&^bs) & hi8
}

// firstByte is the index of the byte of a non-zero stopBytes mask to
// trust.
func firstByte(mask uint64) int { return bits.TrailingZeros64(mask) >> 3 }

// shortUnescape is the byte a two-character escape stands for, by the
// letter after the backslash; 0 for the rest.
var shortUnescape = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unquoteStop marks the bytes that end a plain run inside a JSON string.
var unquoteStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'] = true
	t['\\'] = true
	return t
}()

// unquote decodes, in place, the JSON string whose opening quote is at
// s[i-1]. It returns the decoded bytes (a slice of s, never nil) and the
// index after the closing quote. Decoding never makes a string longer,
// so it overwrites only bytes it has already read. Bytes of 0x80 and up
// are taken as they are; a lone surrogate escape decodes to U+FFFD, as
// encoding/json does. A raw control character, a bad escape or a missing
// closing quote make it fail.
func unquote(s []byte, i int) (v []byte, next int, ok bool) {
	start, w := i, i // read at i, write at w; w == i until the first escape
	for {
		for i+8 <= len(s) {
			x := binary.LittleEndian.Uint64(s[i:])
			m := stopBytes(x)
			if m == 0 {
				if w != i {
					// Only bytes already read are overwritten.
					binary.LittleEndian.PutUint64(s[w:], x)
				}
				i += 8
				w += 8
				continue
			}
			k := firstByte(m)
			if w != i {
				if w+8 <= i+k {
					// The store runs past the run's end, but only over
					// bytes already read, and later output covers it.
					binary.LittleEndian.PutUint64(s[w:], x)
				} else {
					copy(s[w:w+k], s[i:i+k])
				}
			}
			i += k
			w += k
			goto stop
		}
		for i < len(s) && !unquoteStop[s[i]] {
			s[w] = s[i]
			w++
			i++
		}
		if i >= len(s) {
			return nil, 0, false
		}
	stop:
		switch s[i] {
		case '"':
			return s[start:w:w], i + 1, true
		case '\\':
		default:
			return nil, 0, false // a raw control character
		}
		if i+1 >= len(s) {
			return nil, 0, false
		}
		if c := shortUnescape[s[i+1]]; c != 0 {
			s[w] = c
			w++
			i += 2
			continue
		}
		r, n, ok := classify.DecodeEscape(s[i:])
		if !ok {
			return nil, 0, false
		}
		i += n
		w += utf8.EncodeRune(s[w:], r)
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipSpace(s []byte, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// isBlank reports whether line holds nothing but JSON whitespace.
func isBlank(line []byte) bool { return skipSpace(line, 0) == len(line) }

// parseInt reads a JSON number at s[i] that must be an integer fitting an
// int64 (no fraction, no exponent).
func parseInt(s []byte, i int) (n int64, next int, ok bool) {
	neg := false
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	if i >= len(s) || s[i] < '0' || s[i] > '9' {
		return 0, 0, false
	}
	var u uint64
	if s[i] == '0' {
		i++
	} else {
		for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			d := uint64(s[i] - '0')
			if u > (math.MaxUint64-d)/10 {
				return 0, 0, false
			}
			u = u*10 + d
		}
	}
	if i < len(s) && (s[i] == '.' || s[i] == 'e' || s[i] == 'E') {
		return 0, 0, false
	}
	switch {
	case !neg && u <= math.MaxInt64:
		return int64(u), i, true
	case neg && u <= math.MaxInt64+1:
		return int64(-u), i, true // two's complement: exact down to MinInt64
	}
	return 0, 0, false
}

// parseBool reads true or false at s[i].
func parseBool(s []byte, i int) (v bool, next int, ok bool) {
	if hasLiteral(s, i, "true") {
		return true, i + 4, true
	}
	if hasLiteral(s, i, "false") {
		return false, i + 5, true
	}
	return false, 0, false
}

func hasLiteral(s []byte, i int, lit string) bool {
	return len(s)-i >= len(lit) && string(s[i:i+len(lit)]) == lit
}

// maxDepth bounds the nesting of a value the scanner skips, as
// encoding/json bounds what it decodes.
const maxDepth = 10000
