package tap

import (
	"bufio"
	"io"
	"os"

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
	masked := false
	if red != nil {
		// The record says it was redacted before its bytes: look first.
		scan := red.Writer(io.Discard)
		if _, err := io.Copy(scan, io.NewSectionReader(s.f, off, size)); err != nil {
			return spoolError{err}
		}
		scan.Close()
		masked = scan.Masked()
		rec.Redacted = rec.Redacted || masked
	}
	fs, err := w.BeginFrame(rec)
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
