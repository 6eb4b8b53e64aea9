package sessions

import "io"

// This file holds the redactor's writers: masking a frame that comes in
// pieces, and a stream of text.

// A MaskWriter masks secrets in bytes that come in pieces (a frame too
// large to hold): it holds back the last bytes of each piece that could
// begin a secret cut by the piece's end, until the next piece or Close.
type MaskWriter struct {
	r *Redactor
	w io.Writer
	// lx is where the frame stands at the start of held (nil: text,
	// masked wherever a secret is).
	lx     *jsonLexer
	held   []byte
	out    []byte
	masked bool
	err    error
}

// Writer returns a MaskWriter that passes the frame written to it on to
// w, masked as Mask masks it whole. r must not be nil.
func (r *Redactor) Writer(w io.Writer) *MaskWriter {
	return &MaskWriter{r: r, w: w, lx: &jsonLexer{}}
}

// Masked reports whether anything written so far was masked.
func (m *MaskWriter) Masked() bool { return m.masked }

func (m *MaskWriter) Write(p []byte) (int, error) {
	if m.err != nil {
		return 0, m.err
	}
	m.held = append(m.held, p...)
	m.pass(len(m.held) - (m.r.widest - 1))
	return len(p), m.err
}

// Close writes what is held back (it does not close the writer below).
func (m *MaskWriter) Close() error {
	m.pass(len(m.held))
	return m.err
}

// pass writes the held bytes before stop (with a secret that starts before
// it) and keeps the rest.
func (m *MaskWriter) pass(stop int) {
	if m.err != nil || stop <= 0 {
		return
	}
	if len(m.r.secrets) == 0 {
		_, m.err = m.w.Write(m.held)
		m.held = m.held[:0]
		return
	}
	out, next, masked := m.r.appendMasked(m.out[:0], m.held, stop, m.lx)
	if masked {
		m.masked = true
		m.out = out
		_, m.err = m.w.Write(out)
	} else {
		_, m.err = m.w.Write(m.held[:next])
	}
	if m.lx != nil {
		m.lx.feed(m.held[:next], nil)
	}
	m.held = m.held[:copy(m.held, m.held[next:])]
}

// MaskingWriter returns a writer that masks, in what is written to it,
// the secrets a tap with this environment and these --redact flags would
// mask, and passes the rest on to w: for output rpctap keeps that did not
// pass through a tap (the host's own output, which watch keeps). It holds
// back the last bytes that could begin a secret until the next write or
// Close, which writes them (and does not close w).
func MaskingWriter(env, flags []string, w io.Writer) (io.WriteCloser, error) {
	r, err := NewRedactor(env, flags)
	if err != nil {
		return nil, err
	}
	return r.MaskingWriter(w), nil
}

// MaskingWriter is the writer sessions.MaskingWriter returns, for the
// secrets r masks; a nil r (no masking) passes everything on.
func (r *Redactor) MaskingWriter(w io.Writer) io.WriteCloser {
	if r == nil || len(r.secrets) == 0 {
		return nopWriteCloser{w}
	}
	return &MaskWriter{r: r, w: w}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
