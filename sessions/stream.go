package sessions

import (
	"encoding/base64"
	"fmt"
	"io"
)

// A FrameStream writes one frame record whose bytes arrive in pieces, for
// frames too large to hold: its bytes go in "frame_b64". Get one from
// Writer.BeginFrame, Write the frame's bytes, then Close it. No other record
// may be written until it is closed.
type FrameStream struct {
	w   *Writer
	enc io.WriteCloser
	err error
}

// BeginFrame starts a frame record with f's fields; f.Frame is ignored.
func (w *Writer) BeginFrame(f FrameRecord) (*FrameStream, error) {
	b, err := appendFrameFields(w.buf[:1], f)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"frame_b64":"`...)
	if err := w.writePart(b, true); err != nil {
		return nil, err
	}
	fs := &FrameStream{w: w}
	fs.enc = base64.NewEncoder(base64.StdEncoding, writerFunc(func(p []byte) (int, error) {
		if err := w.writePart(append(w.buf[:1], p...), false); err != nil {
			return 0, err
		}
		return len(p), nil
	}))
	return fs, nil
}

// Write appends frame bytes.
func (fs *FrameStream) Write(p []byte) (int, error) {
	if fs.err != nil {
		return 0, fs.err
	}
	n, err := fs.enc.Write(p)
	fs.err = err
	return n, err
}

// Close ends the record.
func (fs *FrameStream) Close() error {
	if err := fs.enc.Close(); err != nil && fs.err == nil {
		fs.err = err
	}
	if fs.err != nil {
		return fs.err
	}
	return fs.w.writePart(append(fs.w.buf[:1], "\"}\n"...), false)
}

// writePart writes part of a record from b[1:] (b[0] is spare room for the
// newline that ends a torn line). Only the first part of a record may
// start a new line.
func (w *Writer) writePart(b []byte, first bool) error {
	w.buf = b
	out := b[1:]
	if first && w.torn {
		b[0] = '\n'
		out = b
	}
	n, err := w.w.Write(out)
	if n > 0 {
		w.torn = out[n-1] != '\n'
	}
	if err != nil {
		return fmt.Errorf("writing the session file: %w", err)
	}
	if n < len(out) {
		return fmt.Errorf("writing the session file: %w", io.ErrShortWrite)
	}
	return nil
}

// LineEnded tells w that its output ends at the end of a line, whatever
// its last Write left: the owner of the output cut a record that failed
// part-way back off (or ended its line), so the next record needs no
// newline before it.
func (w *Writer) LineEnded() { w.torn = false }

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
