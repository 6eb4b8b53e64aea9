package classify

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// This file holds the wire details: a validating JSON scanner that skips
// values without copying them. It accepts exactly what encoding/json's Valid
// accepts (RFC 8259, nesting up to maxDepth), and on the way notices string
// content that must never reach a terminal raw.

// valType is the type of a JSON value, read from its first byte.
type valType uint8

const (
	valNone valType = iota
	valString
	valNumber
	valObject
	valArray
	valTrue
	valFalse
	valNull
)

// article names a value's type for messages: "a string", "null".
func (t valType) article() string {
	switch t {
	case valString:
		return "a string"
	case valNumber:
		return "a number"
	case valObject:
		return "an object"
	case valArray:
		return "an array"
	case valTrue, valFalse:
		return "a boolean"
	case valNull:
		return "null"
	}
	return "nothing"
}

// maxDepth is encoding/json's nesting limit; deeper input is not valid JSON
// to it, and so not to us.
const maxDepth = 10000

type scanner struct {
	data []byte
	pos  int
	// bad is set at the first syntax error; scanning stops there.
	bad bool
	// short is set when the data ended inside a value. With partial, that
	// is not a syntax error: the frame was cut at the parse limit.
	short   bool
	partial bool
	// unsafe is set when a string held characters a terminal must not
	// see raw (see unsafeRune).
	unsafe bool
	// escaped is set by scanString when the string had backslash escapes.
	escaped bool
	// stack of open containers during skipValue: bit set = array. The
	// first 256 levels live in the scanner; deeper ones, rare, in deep.
	stack [4]uint64
	deep  []uint64
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) && isSpace(s.data[s.pos]) {
		s.pos++
	}
}

// fail records a syntax error, or running out of data.
func (s *scanner) fail() {
	if s.pos >= len(s.data) {
		s.short = true
		if s.partial {
			return
		}
	}
	s.bad = true
}

func (s *scanner) stopped() bool { return s.bad || s.short }

// peekType reads the type of the value at pos without moving.
func (s *scanner) peekType() valType {
	if s.pos >= len(s.data) {
		return valNone
	}
	switch c := s.data[s.pos]; {
	case c == '"':
		return valString
	case c == '{':
		return valObject
	case c == '[':
		return valArray
	case c == 't':
		return valTrue
	case c == 'f':
		return valFalse
	case c == 'n':
		return valNull
	case c == '-' || (c >= '0' && c <= '9'):
		return valNumber
	}
	return valNone
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stringStop marks a word's bytes that end the fast path of scanString:
// a quote, a backslash, a control character, DEL, or any non-ASCII byte.
func stringStop(x uint64) uint64 {
	q := x ^ (lsb * '"')
	b := x ^ (lsb * '\\')
	d := x ^ (lsb * 0x7f)
	hasQ := (q - lsb) &^ q
	hasB := (b - lsb) &^ b
	hasD := (d - lsb) &^ d
	ctl := x - lsb*0x20 // high bit set where the byte is < 0x20 (or the borrow ran)
	return (hasQ | hasB | hasD | ctl | x) & msb
}

// scanString moves past the string starting at pos (which holds '"').
func (s *scanner) scanString() {
	s.escaped = false
	d := s.data
	i := s.pos + 1
	for {
		if len(d)-i >= 16 && stringStop(binary.LittleEndian.Uint64(d[i:])) == 0 {
			// Sixteen bytes at a time, where there is assembly for it
			// (not byte by byte through text that is not ASCII).
			n, esc := plainRun(d[i:])
			i += n
			s.escaped = s.escaped || esc
		}
		for i+8 <= len(d) {
			m := stringStop(binary.LittleEndian.Uint64(d[i:]))
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(d) {
			s.pos = i
			s.fail()
			return
		}
		c := d[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return
		case c == '\\':
			s.escaped = true
			if i+1 < len(d) && plainEscape[d[i+1]] {
				i += 2 // the common escapes, without a call
				continue
			}
			n := s.scanEscape(i)
			if n == 0 {
				return
			}
			i += n
		case c < 0x20:
			s.pos = i
			s.bad = true
			return
		case c == 0x7f:
			s.unsafe = true
			i++
		case c < 0x80:
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r != utf8.RuneError && unsafeRune(r) {
				s.unsafe = true
			}
			i += size
		}
	}
}

// plainEscape marks the letters of the two-byte escapes that need no more
// thought: the ones scanEscape takes as they are.
var plainEscape = [256]bool{'"': true, '\\': true, '/': true, 'n': true, 't': true}

// scanEscape checks the escape at d[i] == '\\' and returns its length, or 0
// after a syntax error.
func (s *scanner) scanEscape(i int) int {
	d := s.data
	if i+1 >= len(d) {
		s.pos = len(d)
		s.fail()
		return 0
	}
	switch d[i+1] {
	case '"', '\\', '/', 'n', 't':
		return 2
	case 'b', 'f', 'r':
		s.unsafe = true
		return 2
	case 'u':
		if _, ok := s.hex4(i + 2); !ok {
			return 0 // s.hex4 says where the escape went wrong
		}
		r, n, _ := DecodeEscape(d[i:])
		if unsafeRune(r) {
			s.unsafe = true
		}
		return n
	}
	s.pos = i + 1
	s.bad = true
	return 0
}

func (s *scanner) hex4(i int) (rune, bool) {
	if i+4 > len(s.data) {
		// Check what is there, so a bad digit is a syntax error even when
		// the data also ends early.
		for j := i; j < len(s.data); j++ {
			if unhex(s.data[j]) < 0 {
				s.pos = j
				s.bad = true
				return 0, false
			}
		}
		s.pos = len(s.data)
		s.fail()
		return 0, false
	}
	r, ok := hex4(s.data[i:])
	if !ok {
		s.pos = i
		s.bad = true
	}
	return r, ok
}

// unsafeRune reports characters a terminal must never be handed raw:
// C0 controls other than tab and line feed, DEL, C1 controls, format
// characters (bidi overrides, zero-width characters, tags) and the Unicode
// line and paragraph separators.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20:
		return r != '\t' && r != '\n'
	case r < 0x7f:
		return false
	case r <= 0x9f:
		return true
	case r < 0x600:
		return r == 0xad // the one format character below U+0600
	case r == 0x2028 || r == 0x2029:
		return true
	case r >= 0x2070 && r < 0xfeff:
		return false // no format characters in between
	}
	return unicode.Is(unicode.Cf, r)
}

// UnsafeRune reports whether r is a character Escape escapes: one a
// terminal must never be handed raw (C0 controls other than tab and line
// feed, DEL, C1 controls, bidi and other format characters, U+2028 and
// U+2029).
func UnsafeRune(r rune) bool { return unsafeRune(r) }

// scanNumber moves past a number, checking the JSON grammar.
func (s *scanner) scanNumber() {
	d := s.data
	i := s.pos
	if i < len(d) && d[i] == '-' {
		i++
	}
	if i >= len(d) {
		s.pos = i
		s.fail()
		return
	}
	switch c := d[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		s.pos = i
		s.bad = true
		return
	}
	if i < len(d) && d[i] == '.' {
		i++
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == j {
			s.pos = i
			s.fail()
			return
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		if i == j {
			s.pos = i
			s.fail()
			return
		}
	}
	s.pos = i
	if s.partial && i >= len(d) {
		s.short = true
	}
}

func (s *scanner) scanLiteral(lit string) {
	d := s.data
	for k := 0; k < len(lit); k++ {
		if s.pos+k >= len(d) {
			s.pos += k
			s.fail()
			return
		}
		if d[s.pos+k] != lit[k] {
			s.pos += k
			s.bad = true
			return
		}
	}
	s.pos += len(lit)
}

// skipScalar moves past a value that is not a container.
func (s *scanner) skipScalar(t valType) {
	switch t {
	case valString:
		s.scanString()
	case valNumber:
		s.scanNumber()
	case valTrue:
		s.scanLiteral("true")
	case valFalse:
		s.scanLiteral("false")
	case valNull:
		s.scanLiteral("null")
	default:
		s.fail()
	}
}

// skipValue moves past the value at pos and returns its type. depth is the
// nesting the value sits in. Containers are walked without recursion.
func (s *scanner) skipValue(depth int) valType {
	t := s.peekType()
	if t != valObject && t != valArray {
		s.skipScalar(t)
		return t
	}
	base := depth
	d := s.data
	// Each turn of the loop is at a value's first byte (want value), or
	// after a value inside the open container (want separator).
	open := func(isArray bool) bool {
		if depth >= maxDepth {
			s.bad = true
			return false
		}
		s.setLevel(depth, isArray)
		depth++
		return true
	}
	inArray := func() bool { return s.level(depth - 1) }

	for {
		// want value
		s.skipSpace()
		if s.pos >= len(d) {
			s.fail()
			return t
		}
		switch c := d[s.pos]; c {
		case '{':
			if !open(false) {
				return t
			}
			s.pos++
			s.skipSpace()
			if s.pos < len(d) && d[s.pos] == '}' {
				s.pos++
				depth--
				goto separator
			}
			if !s.objectKey() {
				return t
			}
			continue
		case '[':
			if !open(true) {
				return t
			}
			s.pos++
			s.skipSpace()
			if s.pos < len(d) && d[s.pos] == ']' {
				s.pos++
				depth--
				goto separator
			}
			continue
		default:
			s.skipScalar(s.peekType())
			if s.stopped() {
				return t
			}
		}
	separator:
		for {
			if depth == base {
				return t
			}
			s.skipSpace()
			if s.pos >= len(d) {
				s.fail()
				return t
			}
			c := d[s.pos]
			if c == ',' {
				s.pos++
				if !inArray() {
					s.skipSpace()
					if !s.objectKey() {
						return t
					}
				}
				break
			}
			if (c == ']' && inArray()) || (c == '}' && !inArray()) {
				s.pos++
				depth--
				continue
			}
			s.bad = true
			return t
		}
	}
}

func (s *scanner) setLevel(depth int, isArray bool) {
	w, b := depth/64, uint(depth%64)
	words := s.stack[:]
	if w >= len(words) {
		if s.deep == nil {
			s.deep = make([]uint64, maxDepth/64+1)
		}
		words = s.deep
	}
	if isArray {
		words[w] |= 1 << b
	} else {
		words[w] &^= 1 << b
	}
}

func (s *scanner) level(depth int) bool {
	w, b := depth/64, uint(depth%64)
	if w < len(s.stack) {
		return s.stack[w]&(1<<b) != 0
	}
	return s.deep[w]&(1<<b) != 0
}

// objectKey reads `"key" :` at pos (after optional space) and leaves pos at
// the value.
func (s *scanner) objectKey() bool {
	s.skipSpace()
	if s.pos >= len(s.data) {
		s.fail()
		return false
	}
	if s.data[s.pos] != '"' {
		s.bad = true
		return false
	}
	s.scanString()
	if s.stopped() {
		return false
	}
	s.skipSpace()
	if s.pos >= len(s.data) {
		s.fail()
		return false
	}
	if s.data[s.pos] != ':' {
		s.bad = true
		return false
	}
	s.pos++
	return true
}

// members walks an object's members one at a time. Start it with pos at
// '{' by calling begin; then call next until it returns false, reading key
// (the raw bytes between the quotes) and escaped, then skip or inspect the
// value at pos and call next again.
type members struct {
	started bool
	key     []byte
	escaped bool
	depth   int
}

func (m *members) begin(s *scanner, depth int) bool {
	m.started = false
	m.depth = depth
	if depth >= maxDepth {
		s.bad = true
		return false
	}
	s.pos++ // '{'
	return true
}

// next moves to the next member's value. It returns false at the end of the
// object (pos after '}') or on a syntax error.
func (m *members) next(s *scanner) bool {
	s.skipSpace()
	if s.pos >= len(s.data) {
		s.fail()
		return false
	}
	c := s.data[s.pos]
	if !m.started {
		m.started = true
		if c == '}' {
			s.pos++
			return false
		}
	} else {
		if c == '}' {
			s.pos++
			return false
		}
		if c != ',' {
			s.bad = true
			return false
		}
		s.pos++
		s.skipSpace()
	}
	if s.pos >= len(s.data) {
		s.fail()
		return false
	}
	if s.data[s.pos] != '"' {
		s.bad = true
		return false
	}
	start := s.pos + 1
	s.scanString()
	if s.stopped() {
		return false
	}
	m.key = s.data[start : s.pos-1]
	m.escaped = s.escaped
	s.skipSpace()
	if s.pos >= len(s.data) {
		s.fail()
		return false
	}
	if s.data[s.pos] != ':' {
		s.bad = true
		return false
	}
	s.pos++
	s.skipSpace()
	return true
}
