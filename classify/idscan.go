package classify

// This file holds a frame's id read in pieces: for a frame too large to
// hold whole, what Classify would say of the whole body's kind and id, told
// from its bytes as they come.

// MaxScannedID bounds the id an IDScanner keeps: a longer one is read as
// cut, and compared with nothing (no peer writes one).
const MaxScannedID = 64 << 10

// An IDScanner reads the body of one frame a piece at a time and tells, as
// soon as the bytes so far allow, whether Classify would judge the whole
// body a response with an id, and which id: the body is one JSON object
// (valid as Valid says, nesting included), with no "method" member and an
// "id" one (the first, when it repeats; a key may be written with escapes).
// It keeps only that id (up to MaxScannedID bytes) and a fixed stack,
// whatever the size of the frame. The zero value is ready to read a body;
// an IDScanner is not safe for concurrent use.
type IDScanner struct {
	st     scanState
	depth  int                     // containers open
	arrays [maxDepth/64 + 1]uint64 // bit set: the container at that depth is an array
	lit    string                  // the literal being read
	litPos int
	hex    int // hex digits left in a \u escape

	object bool // the body is an object
	method bool // it has a "method" member
	bad    bool // it is not JSON

	inKey  bool   // the string being read is a member's key
	key    []byte // a key of the body's own members, raw, up to keyCap bytes
	keyEsc bool   // with escapes
	keyCut bool   // longer than keyCap: neither "id" nor "method"
	isID   bool   // the member whose value comes next is the first "id"

	idSeen bool // the first "id" member's value has begun
	inID   bool // the bytes read are the id's value
	id     []byte
	idCut  bool // longer than MaxScannedID
	idDone bool
}

type scanState uint8

const (
	scanValue        scanState = iota // a value is next
	scanValueOrClose                  // after '[': a value or ']'
	scanKeyOrClose                    // after '{': a key or '}'
	scanKey                           // after ',' in an object: a key
	scanColon                         // after a key: ':'
	scanAfter                         // after a value in a container: ',' or its close
	scanEnd                           // after the body's value: only space
	scanString
	scanEscape
	scanHex
	scanLiteral
	scanMinus // after '-'
	scanZero  // after a leading 0
	scanInt
	scanDot // after '.'
	scanFrac
	scanExp     // after 'e'
	scanExpSign // after 'e' and a sign
	scanExpDigits
)

// keyCap is the longest key that may spell "method" with escapes (see
// keyIs).
const keyCap = 6*len("method") + 6

// Write reads the next bytes of the body. It never fails: bytes that make
// the body something other than one JSON value are noted (see
// NotResponse).
func (s *IDScanner) Write(p []byte) (int, error) {
	for i := 0; i < len(p) && !s.bad; i++ {
		if s.st == scanString && !s.inID && !s.ownKey() {
			// A string of no interest: skip to where it may end.
			j := i
			for j < len(p) && !stringStops[p[j]] {
				j++
			}
			if i = j; i == len(p) {
				break
			}
		}
		s.step(p[i])
	}
	return len(p), nil
}

// stringStops marks the bytes that end, or are not allowed in, a string's
// plain run.
var stringStops = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// End says the body has ended.
func (s *IDScanner) End() {
	if s.bad {
		return
	}
	if s.numberEnds() {
		s.endValue()
	}
	if s.st != scanEnd {
		s.bad = true // cut short
	}
}

// NotResponse reports whether the bytes so far rule out a response with an
// id: they are not JSON, not an object, or have a "method" member; or the
// object ended with no id.
func (s *IDScanner) NotResponse() bool {
	started := s.object || s.depth > 0 || s.st > scanValue
	return s.bad || s.method || (started && !s.object) || (s.st == scanEnd && !s.idDone)
}

// ID reports whether the id has been read whole, and returns its raw
// value (nil when it is longer than MaxScannedID: no id to compare).
func (s *IDScanner) ID() (raw []byte, read bool) {
	if !s.idDone {
		return nil, false
	}
	if s.idCut {
		return nil, true
	}
	return s.id, true
}

// Response reports, after End, whether the body is a response with an id
// as Classify judges it, and returns that id's raw value (nil when it is
// longer than MaxScannedID).
func (s *IDScanner) Response() ([]byte, bool) {
	if s.st != scanEnd || s.NotResponse() {
		return nil, false
	}
	id, _ := s.ID()
	return id, true
}

// Request reports, after End, whether the body is one JSON object with a
// "method" member and an "id" one, and returns that id's raw value (nil
// when it is longer than MaxScannedID). Classify calls such a body a
// request, or an invalid one when a member is of the wrong type (a
// method that is not a string, a jsonrpc other than "2.0").
func (s *IDScanner) Request() ([]byte, bool) {
	if s.st != scanEnd || s.bad || !s.object || !s.method || !s.idDone {
		return nil, false
	}
	id, _ := s.ID()
	return id, true
}

func (s *IDScanner) fail() { s.bad = true }

// numberEnds reports whether the state is a number that may end here.
func (s *IDScanner) numberEnds() bool {
	switch s.st {
	case scanZero, scanInt, scanFrac, scanExpDigits:
		return true
	}
	return false
}

// step moves the scanner over c. It is long on purpose: one switch, a case
// a state, each a few lines.
func (s *IDScanner) step(c byte) {
	if s.st >= scanMinus && !numberGoesOn(s.st, c) {
		// c is not the number's: the number ends before it.
		if !s.numberEnds() {
			s.fail()
			return
		}
		s.endValue()
	}
	if s.inID {
		if len(s.id) < MaxScannedID {
			s.id = append(s.id, c)
		} else {
			s.idCut = true
		}
	}
	switch s.st {
	case scanValue, scanValueOrClose:
		switch {
		case isSpace(c):
		case c == ']' && s.st == scanValueOrClose:
			s.close()
		default:
			s.beginValue(c)
		}
	case scanKeyOrClose, scanKey:
		switch {
		case isSpace(c):
		case c == '"':
			s.st, s.inKey = scanString, true
			s.key, s.keyEsc, s.keyCut = s.key[:0], false, false
		case c == '}' && s.st == scanKeyOrClose:
			s.close()
		default:
			s.fail()
		}
	case scanColon:
		switch {
		case isSpace(c):
		case c == ':':
			s.st = scanValue
		default:
			s.fail()
		}
	case scanAfter:
		inArray := s.arrayAt(s.depth - 1)
		switch {
		case isSpace(c):
		case c == ',' && inArray:
			s.st = scanValue
		case c == ',':
			s.st = scanKey
		case c == ']' && inArray, c == '}' && !inArray:
			s.close()
		default:
			s.fail()
		}
	case scanEnd:
		if !isSpace(c) {
			s.fail()
		}
	case scanString:
		s.keyByte(c)
		switch {
		case c == '"':
			s.endString()
		case c == '\\':
			s.st = scanEscape
		case c < 0x20:
			s.fail()
		}
	case scanEscape:
		s.keyByte(c)
		switch c {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			s.st = scanString
		case 'u':
			s.st, s.hex = scanHex, 4
		default:
			s.fail()
		}
	case scanHex:
		s.keyByte(c)
		if unhex(c) < 0 {
			s.fail()
			return
		}
		if s.hex--; s.hex == 0 {
			s.st = scanString
		}
	case scanLiteral:
		if c != s.lit[s.litPos] {
			s.fail()
			return
		}
		if s.litPos++; s.litPos == len(s.lit) {
			s.endValue()
		}
	case scanMinus:
		s.st = scanInt
		if c == '0' {
			s.st = scanZero
		}
	case scanZero, scanInt, scanFrac:
		switch {
		case c == '.':
			s.st = scanDot
		case c == 'e' || c == 'E':
			s.st = scanExp
		}
	case scanDot:
		s.st = scanFrac
	case scanExp:
		s.st = scanExpDigits
		if c == '+' || c == '-' {
			s.st = scanExpSign
		}
	case scanExpSign:
		s.st = scanExpDigits
	}
}

// numberGoesOn reports whether c continues the number whose state is st
// (at or after scanMinus).
func numberGoesOn(st scanState, c byte) bool {
	digit := c >= '0' && c <= '9'
	switch st {
	case scanMinus:
		return digit
	case scanZero:
		return c == '.' || c == 'e' || c == 'E'
	case scanInt, scanFrac:
		return digit || c == 'e' || c == 'E' || (c == '.' && st == scanInt)
	case scanDot, scanExpSign, scanExpDigits:
		return digit
	case scanExp:
		return digit || c == '+' || c == '-'
	}
	return false
}

// beginValue starts the value whose first byte is c.
func (s *IDScanner) beginValue(c byte) {
	if s.depth == 1 && s.object && s.isID {
		s.isID, s.idSeen, s.inID = false, true, true
		s.id = append(s.id[:0], c)
	}
	switch {
	case c == '{':
		if s.depth == 0 {
			s.object = true
		}
		s.open(false)
	case c == '[':
		s.open(true)
	case c == '"':
		s.st = scanString
	case c == '-':
		s.st = scanMinus
	case c == '0':
		s.st = scanZero
	case c >= '1' && c <= '9':
		s.st = scanInt
	case c == 't':
		s.st, s.lit, s.litPos = scanLiteral, "true", 1
	case c == 'f':
		s.st, s.lit, s.litPos = scanLiteral, "false", 1
	case c == 'n':
		s.st, s.lit, s.litPos = scanLiteral, "null", 1
	default:
		s.fail()
	}
}

func (s *IDScanner) open(isArray bool) {
	if s.depth >= maxDepth {
		s.fail()
		return
	}
	w, b := s.depth/64, uint(s.depth%64)
	if isArray {
		s.arrays[w] |= 1 << b
		s.st = scanValueOrClose
	} else {
		s.arrays[w] &^= 1 << b
		s.st = scanKeyOrClose
	}
	s.depth++
}

func (s *IDScanner) arrayAt(depth int) bool {
	return s.arrays[depth/64]&(1<<uint(depth%64)) != 0
}

func (s *IDScanner) close() {
	s.depth--
	s.endValue()
}

// endValue moves on after a value that has ended.
func (s *IDScanner) endValue() {
	if s.inID && s.depth == 1 {
		s.inID, s.idDone = false, true
	}
	if s.depth == 0 {
		s.st = scanEnd
	} else {
		s.st = scanAfter
	}
}

// ownKey reports whether the string being read is the key of one of the
// body's own members.
func (s *IDScanner) ownKey() bool { return s.inKey && s.depth == 1 && s.object }

// keyByte keeps a byte of a key of the body's own members.
func (s *IDScanner) keyByte(c byte) {
	if !s.ownKey() {
		return
	}
	if c == '\\' {
		s.keyEsc = true
	}
	if c == '"' && s.st == scanString {
		return // the closing quote
	}
	if len(s.key) < keyCap {
		s.key = append(s.key, c)
	} else {
		s.keyCut = true
	}
}

func (s *IDScanner) endString() {
	if !s.inKey {
		s.endValue()
		return
	}
	s.inKey = false
	s.st = scanColon
	if s.depth != 1 || !s.object || s.keyCut {
		return
	}
	switch {
	case keyIs(s.key, s.keyEsc, "method"):
		s.method = true
	case keyIs(s.key, s.keyEsc, "id"):
		s.isID = !s.idSeen
	}
}
