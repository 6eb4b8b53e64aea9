package classify

import (
	"errors"
	"io"
	"strconv"
	"sync"
)

// This file holds the framing room's readers and writers: a FrameReader
// that reads whole frames from a stream with a Splitter, and the one way
// a body is given its framing for the wire (AppendFrame, FrameWriter).
// They wrap a reader or a writer their caller hands them; classify opens
// nothing itself.

// A Frame is one frame read from a stream.
type Frame struct {
	// Bytes holds the frame: header block, body and terminator. For a
	// frame larger than the reader's limit it holds only the first Limit
	// bytes; Info.Size is the full length.
	Bytes []byte
	Info  FrameInfo
}

// Truncated reports whether Bytes holds only a prefix of the frame.
func (f Frame) Truncated() bool { return int64(len(f.Bytes)) < f.Info.Size }

// Body is the frame without its framing: the line without '\n', or the LSP
// body (possibly cut, see Truncated).
func (f Frame) Body() []byte { return f.Info.Body(f.Bytes) }

// Header is the LSP header block, or nil.
func (f Frame) Header() []byte {
	if f.Info.HeaderLen == 0 {
		return nil
	}
	return f.Bytes[:min(f.Info.HeaderLen, len(f.Bytes))]
}

// FrameReader reads whole frames from a stream, holding at most Limit bytes
// of any one frame. It is for readers that want frames, not for the relay's
// forwarding path. A FrameReader is not safe for concurrent use.
type FrameReader struct {
	r     io.Reader
	sp    *Splitter
	limit int
	buf   []byte // unconsumed bytes read from r: buf[start:end]
	start int
	end   int
	eof   bool
	err   error
	frame []byte
	size  int64
}

// NewFrameReader reads frames of the given framing from r, keeping at most
// limit bytes of each (MaxParse when limit <= 0).
func NewFrameReader(r io.Reader, framing Framing, limit int) *FrameReader {
	if limit <= 0 {
		limit = MaxParse
	}
	return &FrameReader{r: r, sp: NewSplitter(framing), limit: limit, buf: make([]byte, 64<<10)}
}

// Next returns the next frame, or io.EOF after the last. The frame's bytes
// are valid until the next call.
func (fr *FrameReader) Next() (Frame, error) {
	fr.frame = fr.frame[:0]
	fr.size = 0
	for {
		n, end := fr.sp.Split(fr.buf[fr.start:fr.end], fr.eof)
		if n > 0 {
			if keep := fr.limit - len(fr.frame); keep > 0 {
				fr.frame = append(fr.frame, fr.buf[fr.start:fr.start+min(n, keep)]...)
			}
			fr.size += int64(n)
			fr.start += n
		}
		if end {
			info := fr.sp.Frame()
			return Frame{Bytes: fr.frame, Info: info}, nil
		}
		if fr.eof {
			if fr.err != nil {
				return Frame{}, fr.err
			}
			return Frame{}, io.EOF
		}
		if err := fr.fill(); err != nil {
			return Frame{}, err
		}
	}
}

// fill reads more bytes, keeping the unconsumed ones.
func (fr *FrameReader) fill() error {
	if fr.start > 0 {
		copy(fr.buf, fr.buf[fr.start:fr.end])
		fr.end -= fr.start
		fr.start = 0
	}
	if fr.end == len(fr.buf) {
		// The splitter wants more than the buffer holds without
		// consuming; it promises progress at MaxHeaderLine, so this
		// only grows up to there.
		fr.buf = append(fr.buf, make([]byte, len(fr.buf))...)
	}
	n, err := fr.r.Read(fr.buf[fr.end:])
	fr.end += n
	if err != nil {
		fr.eof = true
		if !errors.Is(err, io.EOF) {
			fr.err = err
		}
	}
	return nil
}

// AppendFrame appends body to dst with its framing and returns the
// result: for lsp, a "Content-Length: N\r\n\r\n" header block (or header,
// when it is given: the block a recorded frame came with, for the body it
// came with), then the body; for ndjson, and auto read as ndjson, the
// body and a '\n'.
func AppendFrame(dst []byte, framing Framing, body, header []byte) []byte {
	if framing != FramingLSP {
		dst = append(dst, body...)
		return append(dst, '\n')
	}
	if header != nil {
		dst = append(dst, header...)
	} else {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(body)), 10)
		dst = append(dst, "\r\n\r\n"...)
	}
	return append(dst, body...)
}

// A FrameWriter writes whole frames to a stream, one frame a call, from
// any goroutine: frames written at once never interleave.
type FrameWriter struct {
	mu      sync.Mutex
	w       io.Writer
	framing Framing
}

// NewFrameWriter writes frames of the given framing (auto is read as
// ndjson) to w.
func NewFrameWriter(w io.Writer, framing Framing) *FrameWriter {
	return &FrameWriter{w: w, framing: framing}
}

// WriteFrame writes body with its framing (see AppendFrame), in one Write.
func (fw *FrameWriter) WriteFrame(body []byte) error {
	return fw.WriteRaw(AppendFrame(make([]byte, 0, len(body)+32), fw.framing, body, nil))
}

// WriteRaw writes b as it is, with no framing added (a blank line, a
// malformed header block), in one Write.
func (fw *FrameWriter) WriteRaw(b []byte) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	_, err := fw.w.Write(b)
	return err
}
