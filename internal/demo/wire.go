package demo

import (
	"errors"
	"io"
	"strconv"
	"sync"

	"github.com/rpctap/rpctap/classify"
)

// A frameReader reads one direction's frames with classify's splitter,
// so that the demo's peers frame exactly as the tap does.
type frameReader struct {
	r   io.Reader
	sp  *classify.Splitter
	buf []byte // buf[off:] is read and not yet consumed
	off int
	eof bool
}

func newFrameReader(r io.Reader, f classify.Framing) *frameReader {
	return &frameReader{r: r, sp: classify.NewSplitter(f), buf: make([]byte, 0, 64<<10)}
}

// next returns the next frame's body (without its framing) and what the
// splitter said of it; io.EOF when the stream ended between frames.
func (fr *frameReader) next() ([]byte, classify.FrameInfo, error) {
	var frame []byte
	for {
		n, end := fr.sp.Split(fr.buf[fr.off:], fr.eof)
		frame = append(frame, fr.buf[fr.off:fr.off+n]...)
		fr.off += n
		if end {
			info := fr.sp.Frame()
			return info.Body(frame), info, nil
		}
		if fr.eof {
			return nil, classify.FrameInfo{}, io.EOF
		}
		// More bytes are needed: keep the unconsumed ones, read on.
		fr.buf = append(fr.buf[:0], fr.buf[fr.off:]...)
		fr.off = 0
		if len(fr.buf) == cap(fr.buf) {
			fr.buf = append(fr.buf, make([]byte, len(fr.buf))...)[:len(fr.buf)]
		}
		m, err := fr.r.Read(fr.buf[len(fr.buf):cap(fr.buf)])
		fr.buf = fr.buf[:len(fr.buf)+m]
		if errors.Is(err, io.EOF) {
			fr.eof = true
		} else if err != nil {
			return nil, classify.FrameInfo{}, err
		}
	}
}

// A frameWriter writes whole frames, one at a time, from any goroutine.
type frameWriter struct {
	mu  sync.Mutex
	w   io.Writer
	lsp bool
}

// frame writes body with its framing: a line, or a Content-Length header.
func (fw *frameWriter) frame(body []byte) error {
	var b []byte
	if fw.lsp {
		b = append([]byte("Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"), body...)
	} else {
		b = append(append(make([]byte, 0, len(body)+1), body...), '\n')
	}
	return fw.raw(b)
}

// raw writes bytes as they are (a blank line, a bad header block).
func (fw *frameWriter) raw(b []byte) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	_, err := fw.w.Write(b)
	return err
}
