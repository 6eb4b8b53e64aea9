package classify

import (
	"bytes"
	"fmt"
)

// This file holds the framers: a streaming state machine that finds where
// frames end in one direction's byte stream. It never changes a byte and
// never copies one; it only says how many of the bytes it was shown belong
// to the current frame, so a tap can forward exactly what it read, frame by
// frame, with bounded memory.

// Framing names how frames are delimited on a stream.
type Framing uint8

const (
	// FramingNDJSON is one frame per line, ended by \n (MCP stdio).
	FramingNDJSON Framing = iota + 1
	// FramingLSP is a Content-Length header block, a blank line, then
	// the body (LSP, DAP).
	FramingLSP
	// FramingAuto is decided per stream from its first non-whitespace
	// bytes: "Content-Length:" or "Content-Type:" means FramingLSP,
	// anything else FramingNDJSON.
	FramingAuto
)

func (f Framing) String() string {
	switch f {
	case FramingNDJSON:
		return "ndjson"
	case FramingLSP:
		return "lsp"
	case FramingAuto:
		return "auto"
	}
	return "unknown"
}

// ParseFraming reads "ndjson", "lsp" or "auto". The empty string is the
// default, ndjson.
func ParseFraming(s string) (Framing, error) {
	switch s {
	case "ndjson", "":
		return FramingNDJSON, nil
	case "lsp":
		return FramingLSP, nil
	case "auto":
		return FramingAuto, nil
	}
	return 0, fmt.Errorf("unknown framing %q: use ndjson (one message per line, as MCP stdio), lsp (Content-Length headers, as LSP and DAP) or auto", s)
}

// MaxHeaderLine bounds an LSP header block (and so each of its lines), and
// the bytes auto framing looks at before it decides. A caller of Split must
// be able to hold at least this many unconsumed bytes: Split always makes
// progress (consumes a byte or ends a frame) when shown that many.
const MaxHeaderLine = 64 << 10

// FrameInfo describes one frame: where its parts are and what was wrong
// with its framing. The frame's bytes are Size bytes of the stream:
// HeaderLen bytes of header block, BodyLen bytes of body, TermLen bytes of
// terminator, in that order.
type FrameInfo struct {
	// Framing is the framing actually used (auto resolved).
	Framing Framing
	// Size is the whole frame's length in bytes: header, body and
	// terminator.
	Size int64
	// HeaderLen is, for lsp, the bytes of the header block including the
	// blank line (all of the frame's bytes when Bad is set); 0 for ndjson.
	HeaderLen int
	// PlainHeader says, for lsp, that the header block is exactly
	// "Content-Length: N\r\n\r\n" with N the body's length written in
	// canonical decimal, so it can be rebuilt from the body alone.
	PlainHeader bool
	// BodyLen is, for ndjson, the line without its '\n' (a '\r' before it
	// stays in the body); for lsp, the bytes after the header block.
	BodyLen int64
	// TermLen is, for ndjson, 1 when the line ended with '\n' and 0 when
	// the stream ended without one; always 0 for lsp.
	TermLen int
	// Bad says, for lsp, why the header block is malformed, as a short
	// sentence that never repeats the peer's bytes; "" when the framing
	// was fine. A caller raises finding bad-header from it.
	Bad string
	// EOF says the frame ended because the stream ended: no terminator,
	// a short body or a cut header block.
	EOF bool
}

// Body is the frame's body: frame (the frame's bytes as read, or their
// first bytes) without its header block and terminator.
func (info FrameInfo) Body(frame []byte) []byte {
	b := frame
	if info.HeaderLen > 0 {
		if info.HeaderLen >= len(b) {
			return nil
		}
		b = b[info.HeaderLen:]
	}
	if int64(len(b)) > info.BodyLen {
		b = b[:info.BodyLen]
	}
	return b
}

// FrameSpan is a frame of a complete byte stream and where it starts.
type FrameSpan struct {
	Start int64
	FrameInfo
}

// Why an lsp header block is malformed. They are fixed sentences so that a
// peer's bytes can never reach a message; only the body-cut message
// carries numbers.
const (
	frameBadEmptyStart     = "An empty line came where a header block should start."
	frameBadNotHeader      = "A header line is not of the form Name: value."
	frameBadNoLength       = "The header block has no Content-Length header."
	frameBadLengthValue    = "The Content-Length value is not a non-negative decimal integer that fits in 64 bits."
	frameBadLengthsDiffer  = "Two Content-Length headers disagree."
	frameBadLineTooLong    = "A header line is longer than 64 KiB; the frame was cut there."
	frameBadBlockTooLong   = "The header block is longer than 64 KiB; the frame was cut there."
	frameBadEOFInHeader    = "The stream ended inside a header block."
	frameBadEOFInBodyWords = "The stream ended inside a body: Content-Length declared %d bytes and %d arrived."
)

// A Splitter finds the frame boundaries of one stream fed in pieces.
// Create one with NewSplitter (a zero Splitter splits ndjson). A Splitter
// is not safe for concurrent use.
type Splitter struct {
	framing Framing // in use; FramingAuto until decided
	last    FrameInfo

	// The frame being read.
	size int64 // its bytes consumed so far

	// lsp only.
	hdr       int   // header block bytes consumed so far
	lines     int   // header lines consumed so far, the blank line excluded
	length    int64 // declared Content-Length, when hasLength
	hasLength bool
	remain    int64 // body bytes still to come
	inBody    bool  // the header block is done; remain bytes of body follow
	plain     bool  // the header block so far is "Content-Length: N\r\n"
	bad       string

	// Bytes at the start of the data the next Split is given that were
	// already looked at: auto's leading whitespace, lsp's partial line.
	skipped int
	scanned int
}

// NewSplitter returns a splitter for one stream. A framing other than the
// three named ones is read as FramingNDJSON.
func NewSplitter(f Framing) *Splitter {
	switch f {
	case FramingLSP, FramingAuto:
	default:
		f = FramingNDJSON
	}
	return &Splitter{framing: f}
}

// Framing reports the framing in use: for auto, FramingAuto until decided.
func (s *Splitter) Framing() Framing { return s.framing }

// Frame describes the frame the last Split ended; valid until the next
// Split. It is the zero FrameInfo when the last Split ended no frame.
func (s *Splitter) Frame() FrameInfo { return s.last }

// HeaderRead is how many bytes of the open frame's header block the
// splitter has consumed (all of it once the body has begun); 0 for a
// newline-framed stream. With Frame().HeaderLen for a frame just ended, it
// lets a caller that holds a frame's first bytes count its body's.
func (s *Splitter) HeaderRead() int {
	if s.framing == FramingLSP {
		return s.hdr
	}
	return 0
}

// Split looks at data: the stream's bytes the splitter has not consumed
// yet. It returns n, how many leading bytes of data belong to the current
// frame (they are consumed: the next call starts with data[n:] plus
// whatever came after), and end, whether the current frame is complete
// after those n bytes. When end is false and n < len(data), the splitter
// needs more bytes before it can decide about data[n:]: the caller keeps
// them and calls again with more. atEOF says no more bytes will come: the
// splitter then consumes everything and ends the open frame; with no open
// frame and empty data it returns 0, false.
//
// One call ends at most one frame; a caller loops while end is true. A
// frame may end with n == 0 (at EOF, after its bytes came in earlier
// calls). Split makes progress whenever len(data) >= MaxHeaderLine, so a
// caller never holds more than that many unconsumed bytes.
func (s *Splitter) Split(data []byte, atEOF bool) (n int, end bool) {
	s.last = FrameInfo{}
	switch s.framing {
	case FramingLSP:
		return s.splitLSP(data, atEOF)
	case FramingAuto:
		if !s.decide(data, atEOF) {
			return 0, false
		}
		return s.Split(data, atEOF)
	}
	return s.splitNDJSON(data, atEOF)
}

// SplitAll returns the frames of a complete byte stream, as if it were fed
// to a Splitter whole with atEOF.
func SplitAll(data []byte, f Framing) []FrameSpan {
	spans, _ := split(data, f, true)
	return spans
}

// SplitOpen returns the frames of the start of a stream, as if it were
// fed to a Splitter whole, more bytes to come. open says the data ends
// inside a frame: the last span is then that open frame, up to the end of
// data, with the FrameInfo it would have if the stream ended there.
func SplitOpen(data []byte, f Framing) (spans []FrameSpan, open bool) {
	return split(data, f, false)
}

func split(data []byte, f Framing, atEOF bool) ([]FrameSpan, bool) {
	s := NewSplitter(f)
	var out []FrameSpan
	var start, pos int64
	for {
		n, end := s.Split(data[pos:], atEOF)
		pos += int64(n)
		if end {
			out = append(out, FrameSpan{Start: start, FrameInfo: s.last})
			start = pos
			continue
		}
		if atEOF && n == 0 || pos == int64(len(data)) && start == pos {
			return out, false
		}
		if !atEOF && (n == 0 || pos == int64(len(data))) {
			// The stream stays inside the frame from start: read it as
			// it would end if nothing more came.
			rest := NewSplitter(s.Framing())
			rest.Split(data[start:], true)
			return append(out, FrameSpan{Start: start, FrameInfo: rest.last}), true
		}
	}
}

// splitNDJSON is the hot path: one IndexByte per frame, no allocation.
func (s *Splitter) splitNDJSON(data []byte, atEOF bool) (int, bool) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		s.size += int64(i)
		s.last = FrameInfo{Framing: FramingNDJSON, Size: s.size + 1, BodyLen: s.size, TermLen: 1}
		s.size = 0
		return i + 1, true
	}
	s.size += int64(len(data))
	if !atEOF || s.size == 0 {
		return len(data), false
	}
	s.last = FrameInfo{Framing: FramingNDJSON, Size: s.size, BodyLen: s.size, EOF: true}
	s.size = 0
	return len(data), true
}

// decide resolves auto framing from the first non-whitespace bytes of the
// stream, looking at no more than MaxHeaderLine bytes so that the answer
// does not depend on how the stream was cut into pieces. It reports false
// when it needs more bytes.
func (s *Splitter) decide(data []byte, atEOF bool) bool {
	view := data
	if len(view) > MaxHeaderLine {
		view = view[:MaxHeaderLine]
	}
	i := s.skipped
	if i > len(view) {
		i = 0 // the caller did not hand back the bytes it kept
	}
	for i < len(view) && frameSpace(view[i]) {
		i++
	}
	s.skipped = i
	rest := view[i:]
	final := atEOF || len(data) >= MaxHeaderLine
	switch {
	case frameHasPrefixFold(rest, "content-length:"), frameHasPrefixFold(rest, "content-type:"):
		s.framing = FramingLSP
	case !final && (frameIsPrefixFold(rest, "content-length:") || frameIsPrefixFold(rest, "content-type:")):
		return false
	default:
		s.framing = FramingNDJSON
	}
	return true
}

// splitLSP reads header lines one at a time, only when complete, then
// streams the body through.
func (s *Splitter) splitLSP(data []byte, atEOF bool) (int, bool) {
	pos := 0
	for !s.inBody {
		// A block that reaches MaxHeaderLine bytes unfinished is cut
		// there (with room 0 when a whole line brought it there).
		room := MaxHeaderLine - s.hdr
		win := data[pos:]
		full := len(win) >= room
		if full {
			win = win[:room]
		}
		// The bytes of a partial line were searched in the last call;
		// searching only what came since keeps a line that trickles in a
		// byte at a time linear.
		from := min(s.scanned, len(win))
		s.scanned = 0
		i := bytes.IndexByte(win[from:], '\n')
		if i >= 0 {
			i += from
		}
		if i < 0 {
			switch {
			case full:
				s.bad = frameBadBlockTooLong
				if s.hdr == 0 {
					s.bad = frameBadLineTooLong
				}
				s.takeHeader(room)
				return pos + room, s.endLSP(false)
			case !atEOF:
				s.scanned = len(win)
				return pos, false
			case s.hdr == 0 && len(win) == 0:
				return pos, false
			}
			s.bad = frameBadEOFInHeader
			s.takeHeader(len(win))
			return len(data), s.endLSP(true)
		}
		line := win[:i+1]
		if cut, done := s.headerLine(line); done {
			return pos + cut, s.endLSP(false)
		}
		pos += len(line)
		if s.inBody && s.remain == 0 {
			return pos, s.endLSP(false)
		}
	}
	avail := int64(len(data) - pos)
	if avail >= s.remain {
		pos += int(s.remain)
		s.size += s.remain
		s.remain = 0
		return pos, s.endLSP(false)
	}
	s.size += avail
	s.remain -= avail
	if !atEOF {
		return len(data), false
	}
	s.bad = fmt.Sprintf(frameBadEOFInBodyWords, s.length, s.length-s.remain)
	return len(data), s.endLSP(true)
}

// headerLine consumes one complete header line (with its '\n'). It reports
// done when the line ends the frame without a body, and then how many of
// the line's bytes belong to the frame.
func (s *Splitter) headerLine(line []byte) (n int, done bool) {
	text := line[:len(line)-1]
	if len(text) > 0 && text[len(text)-1] == '\r' {
		text = text[:len(text)-1]
	}
	if len(text) == 0 {
		first := s.hdr == 0
		s.takeHeader(len(line))
		switch {
		case first:
			s.bad = frameBadEmptyStart
		case s.bad != "":
		case !s.hasLength:
			s.bad = frameBadNoLength
		default:
			s.plain = s.plain && s.lines == 1 && len(line) == 2
			s.inBody = true
			s.remain = s.length
			return len(line), false
		}
		return len(line), true
	}
	colon := bytes.IndexByte(text, ':')
	if colon <= 0 || !headerToken(text[:colon]) {
		// Not a header. The frame ends with the line, or just before a
		// well-formed Content-Length header glued to its end: that is how
		// a body that followed a malformed block runs into the next
		// header, and cutting there lets the stream resynchronise at once.
		n = len(line)
		if i := resyncPoint(text); i > 0 {
			n = i
		}
		if s.bad == "" {
			s.bad = frameBadNotHeader
		}
		s.takeHeader(n)
		return n, true
	}
	plain := false
	if name := text[:colon]; len(name) == len("content-length") && frameEqualFold(name, "content-length") {
		v, ok := parseContentLength(text[colon+1:])
		switch {
		case !ok:
			if s.bad == "" {
				s.bad = frameBadLengthValue
			}
		case s.hasLength && s.length != v:
			if s.bad == "" {
				s.bad = frameBadLengthsDiffer
			}
		default:
			s.length, s.hasLength = v, true
			plain = s.lines == 0 && plainLengthLine(line)
		}
	}
	s.plain = plain
	s.lines++
	s.takeHeader(len(line))
	return len(line), false
}

// resyncPoint returns where in text, a line that is not a header, the
// first tail starts that is itself a Content-Length header with a valid
// value; 0 when there is none.
func resyncPoint(text []byte) int {
	const name = "content-length:"
	for i := 1; i+len(name) <= len(text); i++ {
		j := frameIndexFold(text[i:], name)
		if j < 0 {
			break
		}
		i += j
		if _, ok := parseContentLength(text[i+len(name):]); ok {
			return i
		}
	}
	return 0
}

func (s *Splitter) takeHeader(n int) {
	s.hdr += n
	s.size += int64(n)
}

// endLSP records the frame just ended and readies for the next one.
func (s *Splitter) endLSP(eof bool) bool {
	s.last = FrameInfo{
		Framing:     FramingLSP,
		Size:        s.size,
		HeaderLen:   s.hdr,
		PlainHeader: s.plain && s.bad == "" && s.inBody && !eof,
		BodyLen:     s.size - int64(s.hdr),
		Bad:         s.bad,
		EOF:         eof,
	}
	s.size, s.hdr, s.lines, s.length, s.remain = 0, 0, 0, 0, 0
	s.hasLength, s.inBody, s.plain, s.bad = false, false, false, ""
	return true
}

// parseContentLength reads a Content-Length value: decimal digits, with spaces
// and tabs around them, that fit in an int64.
func parseContentLength(b []byte) (int64, bool) {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if v > (1<<63-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// plainLengthLine reports whether line is exactly "Content-Length: N\r\n"
// with N in canonical decimal (no sign, no leading zero).
func plainLengthLine(line []byte) bool {
	const prefix = "Content-Length: "
	if len(line) < len(prefix)+3 || string(line[:len(prefix)]) != prefix {
		return false
	}
	digits := line[len(prefix) : len(line)-2]
	if string(line[len(line)-2:]) != "\r\n" || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// headerToken reports whether b is an HTTP header name (RFC 9110 token): JSON
// and prose are not, so garbage on an lsp stream is not read as a header.
func headerToken(b []byte) bool {
	for _, c := range b {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '!', c == '#', c == '$', c == '%', c == '&', c == '\'', c == '*',
			c == '+', c == '-', c == '.', c == '^', c == '_', c == '`', c == '|', c == '~':
		default:
			return false
		}
	}
	return true
}

func frameSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// frameHasPrefixFold reports whether b begins with lower, ASCII case ignored.
// lower must be lower case.
func frameHasPrefixFold(b []byte, lower string) bool {
	return len(b) >= len(lower) && frameEqualFold(b[:len(lower)], lower)
}

// frameIsPrefixFold reports whether b is a proper prefix of lower, ASCII case
// ignored.
func frameIsPrefixFold(b []byte, lower string) bool {
	return len(b) < len(lower) && frameEqualFold(b, lower[:len(b)])
}

// frameIndexFold returns the index of the first lower in b, ASCII case ignored,
// or -1.
func frameIndexFold(b []byte, lower string) int {
	for i := 0; i+len(lower) <= len(b); i++ {
		if b[i]|0x20 == lower[0] && frameEqualFold(b[i:i+len(lower)], lower) {
			return i
		}
	}
	return -1
}

func frameEqualFold(b []byte, lower string) bool {
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
