package sessions

// This file holds what the redactor knows of JSON syntax: a lexer that
// follows a frame a byte at a time, however its bytes are cut, and says
// which bytes are inside strings and where the frame stops being JSON.
// The redactor masks a secret in a frame that is JSON only inside one of
// its strings (object keys included), at character boundaries, so that
// the masked frame is JSON of the same shape: "true" stays true, and a
// request stays a request.

import "github.com/rpctap/rpctap/classify"

// maxJSONDepth is the nesting classify (and encoding/json) reads: a frame
// nested deeper is not JSON to them, and so not to the lexer.
const maxJSONDepth = 10000

// States of a jsonLexer: what the next byte may be.
const (
	lxValue       uint8 = iota // a value (the first, or after ':' or an array's ',')
	lxArrayFirst               // a value or ']', after '['
	lxObjectFirst              // a key or '}', after '{'
	lxKey                      // a key, after an object's ','
	lxColon                    // ':' after a key
	lxAfter                    // ',' or the container's end, after a value in it
	lxEnd                      // only space, after the top value
	lxString                   // inside a string
	lxEscape                   // after a string's backslash
	lxHex                      // in a \u escape's digits (hex of them read)
	lxMinus                    // after a number's '-'
	lxZero                     // after a number's leading 0
	lxInt                      // in a number's integer digits
	lxDot                      // after a number's '.'
	lxFrac                     // in a number's fraction digits
	lxE                        // after a number's 'e'
	lxESign                    // after the exponent's sign
	lxExp                      // in the exponent's digits
	lxLiteral                  // in true, false or null (lit is what is left)
	lxBad                      // what came is not JSON, whatever follows
)

// A jsonLexer follows JSON syntax (RFC 8259, as classify.Valid reads it)
// over bytes fed to it in any pieces. It never says bad of bytes that
// begin a JSON text; it says bad at the first byte that no JSON text has
// there. The zero value is at the start of a text.
type jsonLexer struct {
	state uint8
	key   bool  // the string being read is an object's key
	hex   uint8 // digits of a \u escape read
	lit   string
	depth int
	// open containers, a bit a level: set is an array. The first 256
	// levels need no allocation.
	stack [4]uint64
	deep  []uint64
}

func (l *jsonLexer) bad() bool { return l.state == lxBad }

func (l *jsonLexer) inArray() bool {
	w, b := (l.depth-1)/64, uint((l.depth-1)%64)
	if w < len(l.stack) {
		return l.stack[w]&(1<<b) != 0
	}
	return l.deep[w-len(l.stack)]&(1<<b) != 0
}

// open enters a container; false past the nesting JSON allows.
func (l *jsonLexer) open(array bool) bool {
	if l.depth >= maxJSONDepth {
		return false
	}
	w, b := l.depth/64, uint(l.depth%64)
	words := l.stack[:]
	if w >= len(l.stack) {
		w -= len(l.stack)
		for len(l.deep) <= w {
			l.deep = append(l.deep, 0)
		}
		words = l.deep
	}
	if array {
		words[w] |= 1 << b
	} else {
		words[w] &^= 1 << b
	}
	l.depth++
	return true
}

// clone returns a copy of l that moves on apart from it.
func (l *jsonLexer) clone() jsonLexer {
	c := *l
	if l.deep != nil {
		c.deep = append([]uint64(nil), l.deep...)
	}
	return c
}

// valueDone is the state after a value ends.
func (l *jsonLexer) valueDone() {
	if l.depth == 0 {
		l.state = lxEnd
	} else {
		l.state = lxAfter
	}
}

func jsonSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// feed moves l over b. When in is not nil, it sets bit i of in for each
// b[i] that is inside a string (between its quotes). It returns the index
// in b of the first byte that is not JSON: -1 when l was past one before
// b, len(b) when there is none. It is long on purpose: one switch, a case
// a state, in one loop, so that the path a byte takes makes no call.
func (l *jsonLexer) feed(b []byte, in []uint64) int {
	if l.state == lxBad {
		return -1
	}
	for i := 0; i < len(b); {
		c := b[i]
		switch l.state {
		case lxString:
			// The bulk of most frames: run to the next quote,
			// backslash or control byte, eight bytes at a time.
			j := i
			for j+8 <= len(b) {
				if m := stopBytes(classify.Load64(b, j)); m != 0 {
					j += firstByte(m)
					goto stop
				}
				j += 8
			}
			for j < len(b) && b[j] >= 0x20 && b[j] != '"' && b[j] != '\\' {
				j++
			}
		stop:
			if in != nil {
				setBits(in, i, j)
			}
			i = j
			if i == len(b) {
				return len(b)
			}
			switch c = b[i]; {
			case c == '"':
				if l.key {
					l.state = lxColon
				} else {
					l.valueDone()
				}
			case c == '\\':
				l.state = lxEscape
				if in != nil {
					setBits(in, i, i+1)
				}
			default:
				l.state = lxBad
				return i
			}
			i++
			continue
		case lxEscape:
			if in != nil {
				setBits(in, i, i+1)
			}
			switch c {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				l.state = lxString
			case 'u':
				l.state, l.hex = lxHex, 0
			default:
				l.state = lxBad
				return i
			}
		case lxHex:
			if in != nil {
				setBits(in, i, i+1)
			}
			if !isHex(c) {
				l.state = lxBad
				return i
			}
			if l.hex++; l.hex == 4 {
				l.state = lxString
			}
		case lxValue, lxArrayFirst:
			switch {
			case jsonSpace(c):
			case c == ']' && l.state == lxArrayFirst:
				l.depth--
				l.valueDone()
			case !l.startValue(c):
				return i
			}
		case lxObjectFirst, lxKey:
			switch {
			case jsonSpace(c):
			case c == '}' && l.state == lxObjectFirst:
				l.depth--
				l.valueDone()
			case c == '"':
				l.state, l.key = lxString, true
			default:
				l.state = lxBad
				return i
			}
		case lxColon:
			switch {
			case jsonSpace(c):
			case c == ':':
				l.state = lxValue
			default:
				l.state = lxBad
				return i
			}
		case lxAfter:
			switch {
			case c == ',' && l.depth > 0:
				// The usual case, first: a member or element follows.
				if l.inArray() {
					l.state = lxValue
				} else {
					l.state = lxKey
				}
			case jsonSpace(c):
			case c == ',':
				if l.inArray() {
					l.state = lxValue
				} else {
					l.state = lxKey
				}
			case c == ']' && l.inArray(), c == '}' && !l.inArray():
				l.depth--
				l.valueDone()
			default:
				l.state = lxBad
				return i
			}
		case lxEnd:
			if !jsonSpace(c) {
				l.state = lxBad
				return i
			}
		case lxLiteral:
			if n := len(l.lit); len(b)-i >= n && string(b[i:i+n]) == l.lit {
				l.valueDone()
				i += n
				continue
			}
			if c != l.lit[0] {
				l.state = lxBad
				return i
			}
			if l.lit = l.lit[1:]; l.lit == "" {
				l.valueDone()
			}
		case lxMinus:
			switch {
			case c == '0':
				l.state = lxZero
			case c >= '1' && c <= '9':
				l.state = lxInt
			default:
				l.state = lxBad
				return i
			}
		case lxZero, lxInt, lxFrac, lxExp:
			switch {
			case c >= '0' && c <= '9' && l.state != lxZero:
				for i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '9' {
					i++
				}
			case c == '.' && (l.state == lxZero || l.state == lxInt):
				l.state = lxDot
			case (c == 'e' || c == 'E') && l.state != lxExp:
				l.state = lxE
			default:
				// The number ended; c is the next token's.
				l.valueDone()
				continue
			}
		case lxDot:
			if c < '0' || c > '9' {
				l.state = lxBad
				return i
			}
			l.state = lxFrac
		case lxE:
			switch {
			case c == '+' || c == '-':
				l.state = lxESign
			case c >= '0' && c <= '9':
				l.state = lxExp
			default:
				l.state = lxBad
				return i
			}
		case lxESign:
			if c < '0' || c > '9' {
				l.state = lxBad
				return i
			}
			l.state = lxExp
		}
		i++
	}
	return len(b)
}

// startValue takes c as the first byte of a value; false (and bad) when
// no value starts so.
func (l *jsonLexer) startValue(c byte) bool {
	switch {
	case c == '"':
		l.state, l.key = lxString, false
	case c == '{' || c == '[':
		if !l.open(c == '[') {
			l.state = lxBad
			return false
		}
		l.state = lxObjectFirst
		if c == '[' {
			l.state = lxArrayFirst
		}
	case c == 't':
		l.state, l.lit = lxLiteral, "rue"
	case c == 'f':
		l.state, l.lit = lxLiteral, "alse"
	case c == 'n':
		l.state, l.lit = lxLiteral, "ull"
	case c == '-':
		l.state = lxMinus
	case c == '0':
		l.state = lxZero
	case c >= '1' && c <= '9':
		l.state = lxInt
	default:
		l.state = lxBad
		return false
	}
	return true
}

// setBits sets bits [from, to) of in.
func setBits(in []uint64, from, to int) {
	for from < to && from%64 != 0 {
		in[from/64] |= 1 << uint(from%64)
		from++
	}
	for ; from+64 <= to; from += 64 {
		in[from/64] = ^uint64(0)
	}
	for ; from < to; from++ {
		in[from/64] |= 1 << uint(from%64)
	}
}

// A jsonView is what the lexer says of a stretch of a frame: which of its
// bytes are inside strings, and where (if anywhere) the frame stopped
// being JSON.
type jsonView struct {
	in  []uint64
	bad int // index of the first byte that is not JSON (-1: before b; len(b): none)
}

// newJSONView reads b with a copy of l, which is where the frame stands
// just before b.
func newJSONView(l *jsonLexer, b []byte) *jsonView {
	c := l.clone()
	v := &jsonView{in: make([]uint64, len(b)/64+1)}
	v.bad = c.feed(b, v.in)
	return v
}

func (v *jsonView) inString(i int) bool { return v.in[i/64]&(1<<uint(i%64)) != 0 }

// mayMask reports whether b[start:end] may be masked, b being the bytes v
// was made of: where the frame is
// JSON through its end, only when it lies inside one string with neither
// end inside an escape (a start just after the backslash that begins one
// is taken back to it by the masker); past the point where the frame is
// no JSON, anywhere.
func (v *jsonView) mayMask(b []byte, start, end int) bool {
	if v.bad < end {
		return true
	}
	for i := start; i < end; i++ {
		if !v.inString(i) {
			return false
		}
	}
	switch {
	case !v.insideEscape(b, start):
	case start > 0 && v.inString(start-1) && b[start-1] == '\\' && !v.insideEscape(b, start-1):
		// start is the letter of an escape: the mask takes its
		// backslash too.
	default:
		return false
	}
	return end == len(b) || !v.inString(end) || !v.insideEscape(b, end)
}

// insideEscape reports whether the string byte b[p] is inside an escape:
// past its backslash, before its end.
func (v *jsonView) insideEscape(b []byte, p int) bool {
	// escaping reports whether b[j] is a backslash that begins an escape.
	escaping := func(j int) bool {
		n := 0
		for j-n >= 0 && v.inString(j-n) && b[j-n] == '\\' {
			n++
		}
		return n%2 == 1
	}
	if p > 0 && v.inString(p-1) && escaping(p-1) {
		return true
	}
	// In a \u escape's digits: its backslash is 2 to 5 bytes back.
	for k := 2; k <= 5; k++ {
		j := p - k
		if j < 0 || !v.inString(j) || k > 2 && !isHex(b[j+2]) {
			return false
		}
		if b[j+1] == 'u' && escaping(j) {
			return true
		}
	}
	return false
}
