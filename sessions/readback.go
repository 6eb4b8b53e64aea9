package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// recordWindow is how much of the file a RecordReader reads at once:
// records read in file order, or close to it, cost one read a window.
const recordWindow = 1 << 20

// A RecordReader reads records of a session file back by their index
// entries. It reads the file a window at a time, so records read in file
// order (or near it) take one read for many. The Event it returns is
// valid until its next Read. It is not safe for concurrent use.
type RecordReader struct {
	*window
	// peer, when not nil, is another reader's window, looked in first:
	// two readers of the same file going through it close together (the
	// requests and their answers) then read most of it once.
	peer *window
	line []byte // the line being decoded (decoding writes over it)
	r    Reader
}

// A window is the part of the file a RecordReader read last.
type window struct {
	f      io.ReaderAt
	win    []byte // the file's bytes from winOff
	winOff int64
	winEnd bool // win reaches the end of the file
}

// NewRecordReader returns a RecordReader of the session file f.
func NewRecordReader(f io.ReaderAt) *RecordReader {
	return &RecordReader{window: &window{f: f}, r: Reader{decided: true}}
}

// LookIn makes rr look in other's window first: two readers of the same
// file going through it close together (the requests and their answers)
// then read most of it once.
func (rr *RecordReader) LookIn(other *RecordReader) { rr.peer = other.window }

// Read reads the record of entry e, as ReadRecord does.
func (rr *RecordReader) Read(e Entry) (*Event, error) {
	if e.Offset < 0 {
		return nil, fmt.Errorf("line %d was indexed without its place in the file, so it cannot be read back", e.Seq)
	}
	line, ok := rr.peer.cached(e)
	if !ok {
		var err error
		if line, err = rr.lineAt(e); err != nil {
			return nil, err
		}
	}
	if isBlank(line) {
		return nil, fmt.Errorf("line %d is past the end of the session file: is it the file that was indexed?", e.Seq)
	}
	rr.line = append(rr.line[:0], line...)
	if cap(rr.line) > MaxKeptLine {
		defer func() { rr.line = nil }()
	}
	if !rr.r.parseRecord(rr.line) {
		return nil, fmt.Errorf("line %d of the session file is not the record indexed: is it the file that was indexed?", e.Seq)
	}
	ev := &rr.r.ev
	ev.Line = int(e.Seq)
	if ev.T != e.T || ev.Kind != e.Event || (ev.IsFrame() && (ev.Dir != e.Dir || int64(len(ev.Frame)) != e.Size)) {
		return nil, fmt.Errorf("line %d of the session file is not the record indexed: is it the file that was indexed?", e.Seq)
	}
	return ev, nil
}

// cached returns the line at e.Offset when it is all in the window (a
// nil window has none).
func (rr *window) cached(e Entry) ([]byte, bool) {
	if rr == nil || e.Offset < rr.winOff || e.Offset >= rr.winOff+int64(len(rr.win)) {
		return nil, false
	}
	b := rr.win[e.Offset-rr.winOff:]
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i+1], true
	}
	return b, rr.winEnd
}

// lineAt returns the line at e.Offset, from the window when it is there,
// else from a new window read there (as large as the line needs: a record
// is its frame, escaped, at most 6 bytes a byte, and a few fields).
func (rr *window) lineAt(e Entry) ([]byte, error) {
	if line, ok := rr.cached(e); ok {
		return line, nil
	}
	n := max(recordWindow, int(min(e.Size, 1<<30))*2+512)
	for {
		if cap(rr.win) < n || cap(rr.win) > max(recordWindow, MaxKeptLine) {
			rr.win = make([]byte, n)
		}
		rr.win = rr.win[:cap(rr.win)]
		k, err := rr.f.ReadAt(rr.win, e.Offset)
		rr.win, rr.winOff, rr.winEnd = rr.win[:k], e.Offset, errors.Is(err, io.EOF)
		if i := bytes.IndexByte(rr.win, '\n'); i >= 0 {
			return rr.win[:i+1], nil
		}
		if rr.winEnd {
			return rr.win, nil
		}
		if err != nil {
			rr.win = rr.win[:0]
			return nil, fmt.Errorf("reading line %d of the session file: %w", e.Seq, err)
		}
		n *= 4
	}
}
