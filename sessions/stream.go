package sessions

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
)

// A FrameStream writes one frame record whose bytes arrive in pieces, for
// frames too large to hold: its bytes go in "frame" as WriteFrame writes
// them (BeginTextFrame, for bytes known to be valid UTF-8), or in
// "frame_b64" (BeginFrame). Get one from either, Write the frame's bytes,
// then Close it. No other record may be written until it is closed.
type FrameStream struct {
	w   *Writer
	enc io.WriteCloser
	err error
	// text: the bytes go in "frame"; open holds the start of a character
	// that the last Write cut, to be written with the next.
	text bool
	open []byte
}

// BeginFrame starts a frame record with f's fields; f.Frame is ignored.
// The bytes go in "frame_b64".
func (w *Writer) BeginFrame(f FrameRecord) (*FrameStream, error) {
	if err := w.beginFrame(f, "frame_b64"); err != nil {
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

// BeginTextFrame starts a frame record with f's fields, for bytes the
// caller knows are valid UTF-8: they go in "frame", escaped as WriteFrame
// escapes them, so that the record reads as if the frame had been held
// whole. A Write of bytes that are not UTF-8 fails (the record is then
// torn: the caller cuts it off, as after any failed write).
func (w *Writer) BeginTextFrame(f FrameRecord) (*FrameStream, error) {
	if err := w.beginFrame(f, "frame"); err != nil {
		return nil, err
	}
	return &FrameStream{w: w, text: true}, nil
}

func (w *Writer) beginFrame(f FrameRecord, field string) error {
	b, err := appendFrameFields(w.buf[:1], f)
	if err != nil {
		return err
	}
	b = append(b, `,"`...)
	b = append(b, field...)
	b = append(b, `":"`...)
	return w.writePart(b, true)
}

// errNotText says a text frame's bytes were not valid UTF-8.
var errNotText = errors.New("a frame streamed as text is not valid UTF-8")

// writeText writes p as the inside of a JSON string, holding back a
// character cut at its end for the next call.
func (fs *FrameStream) writeText(p []byte) error {
	if len(fs.open) > 0 {
		p = append(fs.open, p...)
		fs.open = nil
	}
	// A character cut at the end: its first byte is among the last three.
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				fs.open = append([]byte(nil), p[i:]...)
				p = p[:i]
			}
			break
		}
	}
	b, ok := classify.AppendQuoted(fs.w.buf[:1], p, true)
	if !ok {
		return errNotText
	}
	// b[1] is the opening quote, made the spare byte; the closing one
	// is left off.
	err := fs.w.writePart(b[1:len(b)-1], false)
	fs.w.buf = b
	return err
}

// Write appends frame bytes.
func (fs *FrameStream) Write(p []byte) (int, error) {
	if fs.err != nil {
		return 0, fs.err
	}
	if fs.text {
		if fs.err = fs.writeText(p); fs.err != nil {
			return 0, fs.err
		}
		return len(p), nil
	}
	n, err := fs.enc.Write(p)
	fs.err = err
	return n, err
}

// Close ends the record.
func (fs *FrameStream) Close() error {
	switch {
	case fs.text && len(fs.open) > 0 && fs.err == nil:
		fs.err = errNotText // the bytes end inside a character
	case !fs.text:
		if err := fs.enc.Close(); err != nil && fs.err == nil {
			fs.err = err
		}
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
