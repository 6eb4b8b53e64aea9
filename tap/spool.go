package tap

import (
	"bufio"
	"io"
	"os"
	"unicode/utf8"

	"github.com/rpctap/rpctap/sessions"
)

// A spool keeps the bytes of a frame too large to hold in an unlinked
// temporary file until the frame ends. Its record is then written whole,
// so that records of the other directions never land inside it, and it
// carries what is only known at the frame's end (its header block, eof).
type spool struct {
	f   *os.File
	bw  *bufio.Writer
	err error
}

func newSpool(dir string) (*spool, error) {
	f, err := os.CreateTemp(dir, ".rpctap-frame-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return &spool{f: f, bw: bufio.NewWriterSize(f, readSize)}, nil
}

// A spoolError is a failure of the spool itself (its file could not be
// written or read back) before anything of the frame's record was
// written: the session file is as it was.
type spoolError struct{ err error }

func (e spoolError) Error() string { return e.err.Error() }
func (e spoolError) Unwrap() error { return e.err }

func (s *spool) write(p []byte) {
	if s.err == nil {
		_, s.err = s.bw.Write(p)
	}
}

// record writes rec to w with the frame's body: size bytes from off,
// with the secrets red knows masked. It closes the spool. A spoolError
// says nothing was written to w.
func (s *spool) record(w *sessions.Writer, rec sessions.FrameRecord, off, size int64, red *sessions.Redactor) error {
	defer s.close()
	if s.err == nil {
		s.err = s.bw.Flush()
	}
	if s.err != nil {
		return spoolError{s.err}
	}
	// The record says whether it was redacted, and whether its bytes are
	// text, before its bytes: look first.
	var text utf8Check
	masked := false
	if red != nil {
		scan := red.Writer(&text)
		if _, err := io.Copy(scan, io.NewSectionReader(s.f, off, size)); err != nil {
			return spoolError{err}
		}
		scan.Close()
		masked = scan.Masked()
		rec.Redacted = rec.Redacted || masked
	} else if _, err := io.Copy(&text, io.NewSectionReader(s.f, off, size)); err != nil {
		return spoolError{err}
	}
	begin := w.BeginFrame // bytes that are not UTF-8 go in frame_b64
	if text.valid() {
		begin = w.BeginTextFrame
	}
	fs, err := begin(rec)
	if err != nil {
		return err
	}
	if !masked {
		if _, err := io.Copy(fs, io.NewSectionReader(s.f, off, size)); err != nil {
			return err
		}
		return fs.Close()
	}
	mw := red.Writer(fs)
	if _, err := io.Copy(mw, io.NewSectionReader(s.f, off, size)); err != nil {
		return err
	}
	if err := mw.Close(); err != nil {
		return err
	}
	return fs.Close()
}

func (s *spool) close() { s.f.Close() }

// A utf8Check is told bytes in pieces and says whether, together, they
// are valid UTF-8.
type utf8Check struct {
	open []byte // the start of a character cut by the last Write
	bad  bool
}

func (c *utf8Check) Write(p []byte) (int, error) {
	n := len(p)
	if c.bad {
		return n, nil
	}
	if len(c.open) > 0 {
		// The cut character's first byte, and at most three more.
		k := min(len(p), utf8.UTFMax-len(c.open))
		head := append(c.open, p[:k]...)
		r, size := utf8.DecodeRune(head)
		if r == utf8.RuneError && size <= 1 {
			if !utf8.FullRune(head) {
				c.open = head
				return n, nil
			}
			c.bad = true
			return n, nil
		}
		p = p[size-len(c.open):]
		c.open = c.open[:0]
	}
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				c.open = append(c.open[:0], p[i:]...)
				p = p[:i]
			}
			break
		}
	}
	c.bad = !utf8.Valid(p)
	return n, nil
}

func (c *utf8Check) valid() bool { return !c.bad && len(c.open) == 0 }
