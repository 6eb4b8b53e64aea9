package sessions

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

const (
	// readBufSize is the Reader's buffer. Longer lines are gathered in a
	// buffer of their own, so there is no limit on a line's length.
	readBufSize = 64 << 10
	// MaxKeptLine is the largest line buffer a Reader keeps between lines;
	// after a larger line its memory is given back.
	MaxKeptLine = 16 << 20
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

// NewReaderAt returns a Reader of the records of f from off, where a
// record's line begins: it looks for no header there.
func NewReaderAt(f io.ReaderAt, off int64) *Reader {
	r := NewReader(io.NewSectionReader(f, off, math.MaxInt64-off))
	r.decided = true
	return r
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
		if cap(r.line) > MaxKeptLine {
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
		if r.line = r.line[:0]; cap(r.line) > MaxKeptLine {
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
