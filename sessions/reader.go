package sessions

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/rpctap/rpctap/classify"
)

const (
	// readBufSize is the Reader's buffer. Longer lines are gathered in a
	// buffer of their own, so there is no limit on a line's length.
	readBufSize = 64 << 10
	// maxKeptLine is the largest line buffer a Reader keeps between lines;
	// after a larger line its memory is given back.
	maxKeptLine = 16 << 20
)

// DefaultPoll is how often a following Reader looks for more data when it
// is given no interval.
const DefaultPoll = 100 * time.Millisecond

// A Reader reads a session file line by line. It never fails on a line:
// lines it cannot read (not JSON, the wrong shape, bad base64) are skipped
// and counted, blank lines are skipped silently, and unknown fields are
// ignored, as are the derived fields kind, id and method.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	br *bufio.Reader
	// line gathers a line that does not fit br's buffer, and holds a
	// partial last line while following.
	line    []byte
	partial bool
	// lineLen is the length of the line being read; lx follows its
	// JSON once it does not fit br's buffer, and junk is set once it
	// cannot be a record (no record is anything but JSON): its bytes are
	// then counted, not kept, so a damaged file (a tail of NUL bytes
	// with no newline, as a crash can leave) costs no memory.
	lineLen int64
	lx      jsonLexer
	junk    bool
	newline bool // the last line read ended with "\n"
	lineNo  int
	skipped int
	// skippedBytes is the length of the lines skipped, their newlines
	// apart.
	skippedBytes int64
	// skippedLines are the numbers of the first lines skipped (at most
	// maxSkippedLines of them); headerFaults what was wrong with the
	// header.
	skippedLines []int
	headerFaults []string
	// pos is the input offset after the last line read; start is the
	// offset of the last line read.
	pos, start int64

	header    Header
	hasHeader bool
	decided   bool  // the first non-blank line has been read
	pending   bool  // ev holds a record read while deciding
	err       error // an error met by Header, for Next to return
	newer     error // the file is of a newer format version: every Next returns it

	ev        Event
	code      int
	frameB64  []byte
	headerB64 []byte
	origB64   []byte

	ctx   context.Context // non-nil when following
	poll  time.Duration
	timer *time.Timer
	// alive, when set, says at the end of the input whether its writer is
	// still there; once it is not, one more read takes what it wrote
	// last (final), and the end is the end.
	alive func() bool
	final bool
}

// NewReader returns a Reader of the session file r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, readBufSize)}
}

// Follow makes r read a file that is still being written: at the end of
// the input, Next waits and polls every poll (DefaultPoll when poll ≤ 0)
// for more, instead of returning io.EOF, until ctx is done; Next then
// returns ctx's error, and may be called again with a new Follow. A last
// line that has no "\n" yet is held until it is complete; it is never
// returned half. Follow is for regular files, whose reads at the end
// return io.EOF at once. It returns r.
func (r *Reader) Follow(ctx context.Context, poll time.Duration) *Reader {
	if poll <= 0 {
		poll = DefaultPoll
	}
	r.ctx, r.poll = ctx, poll
	return r
}

// Header returns the file's header line, with empty Framing and Profile
// set to their defaults. It is false when the file has no header: then
// the Header holds only the defaults (DefaultFraming, DefaultProfile).
//
// Header reads the first line if Next has not; a following Reader waits
// for it. An error met doing so is returned by the next call to Next.
func (r *Reader) Header() (Header, bool) {
	if !r.decided && r.err == nil {
		if err := r.decide(); err != nil && err != io.EOF {
			r.err = err
		}
	}
	h := r.header
	h.Framing = h.FramingOrDefault()
	h.Profile = h.ProfileOrDefault()
	return h, r.hasHeader
}

// Skipped is the number of lines read so far that could not be read as a
// record, the header aside.
func (r *Reader) Skipped() int { return r.skipped }

// SkippedBytes is how many bytes the lines counted by Skipped held.
func (r *Reader) SkippedBytes() int64 { return r.skippedBytes }

// maxSkippedLines bounds the line numbers a Reader keeps of the lines it
// skipped: a file of junk costs no more memory than a good one.
const maxSkippedLines = 1000

// SkippedLines returns the 1-based numbers of the lines skipped so far, in
// order: all of them, or the first 1,000 when Skipped is more.
func (r *Reader) SkippedLines() []int { return r.skippedLines }

// A NewerVersionError is what a Reader's Next returns for a session file
// of a format version newer than this rpctap reads: it does not guess at
// what the file means.
type NewerVersionError struct{ Version int }

func (e *NewerVersionError) Error() string {
	return fmt.Sprintf("update rpctap to open this session file: it is in format version %d, from a newer rpctap, and this one reads versions up to %d (go install github.com/rpctap/rpctap/cmd/rpctap@latest)", e.Version, Version)
}

// HeaderFaults says what is wrong with the header line, one sentence a
// fault: a field of the wrong type, a format version this reader does not
// read. The Reader reads on with defaults in place of what is wrong.
func (r *Reader) HeaderFaults() []string { return r.headerFaults }

// skip counts the line just read as one it could not read.
func (r *Reader) skip() {
	r.skipped++
	if len(r.skippedLines) < maxSkippedLines {
		r.skippedLines = append(r.skippedLines, r.lineNo)
	}
	n := r.pos - r.start
	if r.newline {
		n--
	}
	r.skippedBytes += n
}

// End is the byte offset in the input just after the line Next read last.
func (r *Reader) End() int64 { return r.pos }

// Offset is the byte offset in the input of the line of the record Next
// returned last (after Header alone, of the header line).
func (r *Reader) Offset() int64 { return r.start }

// Next returns the next record, or io.EOF at the end of the file. The
// Event, and the bytes its slices point to, are reused: they are valid
// until the next call to Next.
func (r *Reader) Next() (*Event, error) {
	if r.newer != nil {
		return nil, r.newer
	}
	if r.err != nil {
		err := r.err
		r.err = nil
		return nil, err
	}
	if !r.decided {
		if err := r.decide(); err != nil {
			return nil, err
		}
	}
	if r.pending {
		r.pending = false
		return &r.ev, nil
	}
	for {
		line, err := r.readLine()
		if err != nil {
			return nil, err
		}
		r.lineNo++
		if isBlank(line) {
			continue
		}
		if r.parseRecord(line) {
			r.ev.Line = r.lineNo
			return &r.ev, nil
		}
		r.skip()
	}
}

// decide reads up to the first non-blank line and takes it as the header
// when it is one; a record there is kept for Next.
func (r *Reader) decide() error {
	for {
		line, err := r.readLine()
		if err != nil {
			return err
		}
		r.lineNo++
		if isBlank(line) {
			continue
		}
		r.decided = true
		if h, faults, ok := parseHeader(line); ok {
			r.header, r.hasHeader, r.headerFaults = h, true, faults
			if h.Version > Version {
				r.newer = &NewerVersionError{Version: h.Version}
			}
			return nil
		}
		if r.parseRecord(line) {
			r.ev.Line = r.lineNo
			r.pending = true
		} else {
			r.skip()
		}
		return nil
	}
}

// readLine returns the next line, "\n" included when there is one. The
// line is valid until the next call. A line that does not fit br's buffer
// is gathered only while it can still be a record: from the first byte
// that no JSON text has there (a NUL, say), the rest of it is read and
// counted, not kept, and readLine returns noRecord in its place.
func (r *Reader) readLine() ([]byte, error) {
	if !r.partial {
		if cap(r.line) > maxKeptLine {
			r.line = nil
		}
		r.line, r.lineLen, r.junk, r.lx = r.line[:0], 0, false, jsonLexer{}
	}
	for {
		b, err := r.br.ReadSlice('\n')
		if err == nil && r.lineLen == 0 {
			r.start, r.pos, r.newline = r.pos, r.pos+int64(len(b)), true
			return b, nil // the usual case: the line is in br's buffer
		}
		r.take(b)
		r.partial = r.lineLen > 0
		switch {
		case err == nil:
			r.partial = false
			r.start, r.pos, r.newline = r.pos, r.pos+r.lineLen, true
			return r.gathered(), nil
		case errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF && r.ctx != nil && !r.final:
			if r.alive != nil && !r.alive() {
				r.final = true
				continue
			}
			if err := r.wait(); err != nil {
				return nil, err
			}
		case err == io.EOF && r.lineLen > 0:
			r.partial = false
			r.start, r.pos, r.newline = r.pos, r.pos+r.lineLen, false
			return r.gathered(), nil // the last line, with no "\n"
		default:
			return nil, err
		}
	}
}

// noRecord stands for a line that cannot be a record.
var noRecord = []byte{0}

// take adds b, a piece of the line being read, to the line, unless the
// line can no longer be a record.
func (r *Reader) take(b []byte) {
	r.lineLen += int64(len(b))
	if r.junk {
		return
	}
	if r.lx.feed(b, nil) < len(b) {
		r.junk = true
		if r.line = r.line[:0]; cap(r.line) > maxKeptLine {
			r.line = nil
		}
		return
	}
	r.line = append(r.line, b...)
}

// gathered is the line take gathered.
func (r *Reader) gathered() []byte {
	if r.junk {
		return noRecord
	}
	return r.line
}

// wait sleeps one poll interval, or until the Follow context is done.
func (r *Reader) wait() error {
	if err := r.ctx.Err(); err != nil {
		return err
	}
	if r.timer == nil {
		r.timer = time.NewTimer(r.poll)
	} else {
		r.timer.Reset(r.poll)
	}
	select {
	case <-r.ctx.Done():
		r.timer.Stop()
		return r.ctx.Err()
	case <-r.timer.C:
		return nil
	}
}

// Keys of a record, as bits, to find duplicates and check the shape.
const (
	keyT = 1 << iota
	keyDir
	keyFrame
	keyFrameB64
	keyHeader
	keyHeaderB64
	keySrc
	keyEOF
	keyRedacted
	keyEvent
	keyCode
	keySignal
	keyMissing
	keyText
	keyCaptured
	keyOffset
	keyGap
	keyPartial
	keyHeld
	keyHeldUs
	keyOriginal
	keyOriginalB64

	keysFrame = keyFrame | keyFrameB64 | keyHeader | keyHeaderB64 | keyOriginal | keyOriginalB64
)

// parseRecord decodes line into r.ev and reports whether it is a record
// of the right shape. It decodes strings in place, so it changes line.
func (r *Reader) parseRecord(s []byte) bool {
	ev := &r.ev
	*ev = Event{Src: SrcWire}
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i = skipSpace(s, i+1)
	seen := 0
	if i < len(s) && s[i] == '}' {
		i++
	} else {
		for {
			if i >= len(s) || s[i] != '"' {
				return false
			}
			key, j, ok := unquote(s, i+1)
			if !ok {
				return false
			}
			i = skipSpace(s, j)
			if i >= len(s) || s[i] != ':' {
				return false
			}
			i = skipSpace(s, i+1)
			if i, ok = r.parseField(s, i, key, &seen); !ok {
				return false
			}
			i = skipSpace(s, i)
			if i >= len(s) {
				return false
			}
			if s[i] == '}' {
				i++
				break
			}
			if s[i] != ',' {
				return false
			}
			i = skipSpace(s, i+1)
		}
	}
	if skipSpace(s, i) != len(s) || seen&keyT == 0 {
		return false
	}
	if seen&keyEvent != 0 {
		return seen&keysFrame == 0
	}
	if seen&keyDir == 0 {
		return false
	}
	frames := seen & (keyFrame | keyFrameB64)
	headers := seen & (keyHeader | keyHeaderB64)
	return frames != 0 && frames != keyFrame|keyFrameB64 && headers != keyHeader|keyHeaderB64 && seen&(keyOriginal|keyOriginalB64) != keyOriginal|keyOriginalB64
}

// parseField reads the value of key at s[i] into r.ev. A null value is
// taken as the field being absent.
func (r *Reader) parseField(s []byte, i int, key []byte, seen *int) (next int, ok bool) {
	if hasLiteral(s, i, "null") {
		return i + 4, true
	}
	ev := &r.ev
	var bit int
	var v []byte
	switch string(key) {
	case "t":
		bit = keyT
		ev.T, i, ok = parseInt(s, i)
	case "dir":
		bit = keyDir
		if v, i, ok = parseString(s, i); ok {
			ev.Dir, ok = parseDir(v)
		}
	case "frame":
		bit = keyFrame
		ev.Frame, i, ok = parseString(s, i)
	case "frame_b64":
		bit = keyFrameB64
		if v, i, ok = parseString(s, i); ok {
			r.frameB64, ok = decodeBase64(r.frameB64, v)
			ev.Frame = r.frameB64
		}
	case "header":
		bit = keyHeader
		ev.Header, i, ok = parseString(s, i)
	case "header_b64":
		bit = keyHeaderB64
		if v, i, ok = parseString(s, i); ok {
			r.headerB64, ok = decodeBase64(r.headerB64, v)
			ev.Header = r.headerB64
		}
	case "src":
		bit = keySrc
		if v, i, ok = parseString(s, i); ok {
			ev.Src = intern(v, SrcWire, SrcInject, SrcEdit)
		}
	case "eof":
		bit = keyEOF
		ev.EOF, i, ok = parseBool(s, i)
	case "redacted":
		bit = keyRedacted
		ev.Redacted, i, ok = parseBool(s, i)
	case "offset":
		bit = keyOffset
		ev.FileOffset, i, ok = parseInt(s, i)
	case "gap":
		bit = keyGap
		ev.Gap, i, ok = parseBool(s, i)
	case "captured":
		bit = keyCaptured
		ev.Captured, i, ok = parseBool(s, i)
	case "partial":
		bit = keyPartial
		ev.Partial, i, ok = parseBool(s, i)
	case "held":
		bit = keyHeld
		if v, i, ok = parseString(s, i); ok {
			ev.Held = intern(v, HeldForwarded, HeldEdited, HeldDropped, HeldAnswered, HeldTimeout, HeldDetached, HeldOverflow, HeldWaited, HeldEnded)
		}
	case "held_us":
		bit = keyHeldUs
		ev.HeldUs, i, ok = parseInt(s, i)
	case "original":
		bit = keyOriginal
		ev.Original, i, ok = parseString(s, i)
	case "original_b64":
		bit = keyOriginalB64
		if v, i, ok = parseString(s, i); ok {
			r.origB64, ok = decodeBase64(r.origB64, v)
			ev.Original = r.origB64
		}
	case "event":
		bit = keyEvent
		if v, i, ok = parseString(s, i); ok {
			ev.Kind = intern(v, EventStart, EventExit, EventGap, EventNote)
			ok = ev.Kind != ""
		}
	case "code":
		bit = keyCode
		var n int64
		if n, i, ok = parseInt(s, i); ok {
			r.code = int(n)
			ev.Code = &r.code
			ok = int64(r.code) == n
		}
	case "signal":
		bit = keySignal
		if v, i, ok = parseString(s, i); ok {
			ev.Signal = string(v)
		}
	case "missing":
		bit = keyMissing
		ev.Missing, i, ok = parseInt(s, i)
		ok = ok && ev.Missing >= 0
	case "text":
		bit = keyText
		if v, i, ok = parseString(s, i); ok {
			ev.Text = string(v)
		}
	default: // derived fields and fields this version does not know
		return skipValue(s, i, 0)
	}
	if !ok || *seen&bit != 0 {
		return 0, false
	}
	*seen |= bit
	return i, true
}

// parseString reads the JSON string at s[i], decoding it in place.
func parseString(s []byte, i int) (v []byte, next int, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return nil, 0, false
	}
	return unquote(s, i+1)
}

func parseDir(v []byte) (classify.Direction, bool) {
	switch string(v) {
	case "h2s":
		return classify.H2S, true
	case "s2h":
		return classify.S2H, true
	case "err":
		return classify.Err, true
	}
	return 0, false
}

// intern returns the one of known that equals v, without allocating, or
// else a copy of v.
func intern(v []byte, known ...string) string {
	for _, k := range known {
		if string(v) == k {
			return k
		}
	}
	return string(v)
}

// decodeBase64 decodes standard base64 into buf, reusing its memory
// unless it is too small, or much too large to keep.
func decodeBase64(buf, src []byte) ([]byte, bool) {
	n := base64.StdEncoding.DecodedLen(len(src))
	if cap(buf) < n || buf == nil || cap(buf) > maxKeptLine && n <= maxKeptLine {
		buf = make([]byte, 0, max(n, 64))
	}
	n, err := base64.StdEncoding.Decode(buf[:n], src)
	return buf[:n], err == nil
}

// headerLine is the header's JSON, read with encoding/json (once a file).
// parseHeader reads line as a header, which it is when it is a JSON
// object whose "rpctap" is "session". A field of the wrong type is left at
// its zero value and named in faults, as is a format version other than
// Version.
func parseHeader(line []byte) (h Header, faults []string, ok bool) {
	if !bytes.Contains(line, []byte(`"rpctap"`)) {
		return Header{}, nil, false
	}
	var fields map[string]json.RawMessage
	var tag string
	if err := json.Unmarshal(line, &fields); err != nil || json.Unmarshal(fields["rpctap"], &tag) != nil || tag != "session" {
		return Header{}, nil, false
	}
	field := func(name string, dst any, want string) bool {
		raw, ok := fields[name]
		if !ok {
			return false
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			faults = append(faults, fmt.Sprintf("the header's %q is %s; it must be %s", name, jsonKind(raw), want))
			return false
		}
		return true
	}
	if !field("version", &h.Version, "an integer") {
		if _, ok := fields["version"]; !ok {
			faults = append(faults, fmt.Sprintf("the header has no format version; this rpctap reads version %d", Version))
		}
	} else if h.Version < 1 {
		faults = append(faults, fmt.Sprintf("the header says format version %d; this rpctap reads version %d, and may misread the file", h.Version, Version))
	}
	field("id", &h.ID, "a string")
	field("argv", &h.Argv, "an array of strings")
	field("name", &h.Name, "a string")
	if field("framing", &h.Framing, "a string") && h.Framing != "" {
		if _, err := classify.ParseFraming(h.Framing); err != nil {
			faults = append(faults, "the header's framing is not one rpctap knows (ndjson, lsp or auto); the file is read as ndjson")
			h.Framing = ""
		}
	}
	if field("profile", &h.Profile, "a string") && h.Profile != "" {
		if _, err := classify.ParseProfile(h.Profile); err != nil {
			faults = append(faults, "the header's profile is not one rpctap knows (auto, jsonrpc, mcp or lsp); the file is judged as auto")
			h.Profile = ""
		}
	}
	var started string
	if field("started", &started, "a string") {
		if t, err := time.Parse(time.RFC3339Nano, started); err == nil {
			h.Started = t.UTC()
		} else {
			faults = append(faults, `the header's "started" is not an RFC 3339 time; times are shown from the start of the file`)
		}
	}
	var limit int64
	if field("parse_limit", &limit, "a positive integer") {
		if limit > 0 && limit <= math.MaxInt32 {
			h.ParseLimit = int(limit)
		} else {
			faults = append(faults, `the header's "parse_limit" must be a positive integer; frames are judged with the default limit`)
		}
	}
	var timeoutMs int64
	if field("timeout_ms", &timeoutMs, "a positive integer") {
		if timeoutMs > 0 && timeoutMs <= math.MaxInt64/int64(time.Millisecond) {
			h.Timeout = time.Duration(timeoutMs) * time.Millisecond
		} else {
			faults = append(faults, `the header's "timeout_ms" must be a positive integer; requests are judged with the default timeout`)
		}
	}
	field("redact", &h.Redact, "an array of strings")
	return h, faults, true
}

// jsonKind names the kind of a JSON value ("a string", "null").
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
