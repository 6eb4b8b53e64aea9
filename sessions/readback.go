package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// A RecordReader reads records of a session file back by their index
// entries, one read each, keeping its buffer from one to the next. The
// Event it returns is valid until its next Read. It is not safe for
// concurrent use.
type RecordReader struct {
	f   io.ReaderAt
	buf []byte
	r   Reader
}

// NewRecordReader returns a RecordReader of the session file f.
func NewRecordReader(f io.ReaderAt) *RecordReader {
	return &RecordReader{f: f, r: Reader{decided: true}}
}

// Read reads the record of entry e, as ReadRecord does.
func (rr *RecordReader) Read(e Entry) (*Event, error) {
	if e.Offset < 0 {
		return nil, fmt.Errorf("line %d was indexed without its place in the file, so it cannot be read back", e.Seq)
	}
	// A record is its frame, escaped (at most 6 bytes a byte, less in
	// base64), and a few fields: most fit the first guess.
	n := int(min(e.Size, 1<<30))*2 + 512
	var line []byte
	for {
		if cap(rr.buf) < n {
			rr.buf = make([]byte, n)
		}
		b := rr.buf[:n]
		k, err := rr.f.ReadAt(b, e.Offset)
		b = b[:k]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line = b[:i+1]
			break
		}
		if errors.Is(err, io.EOF) {
			line = b
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading line %d of the session file: %w", e.Seq, err)
		}
		n *= 4
	}
	if cap(rr.buf) > maxKeptLine {
		defer func() { rr.buf = nil }()
	}
	if isBlank(line) {
		return nil, fmt.Errorf("line %d is past the end of the session file: is it the file that was indexed?", e.Seq)
	}
	if !rr.r.parseRecord(line) {
		return nil, fmt.Errorf("line %d of the session file is not the record indexed: is it the file that was indexed?", e.Seq)
	}
	ev := &rr.r.ev
	ev.Line = int(e.Seq)
	if ev.T != e.T || ev.Kind != e.Event || (ev.IsFrame() && (ev.Dir != e.Dir || int64(len(ev.Frame)) != e.Size)) {
		return nil, fmt.Errorf("line %d of the session file is not the record indexed: is it the file that was indexed?", e.Seq)
	}
	return ev, nil
}
