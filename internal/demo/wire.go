package demo

import (
	"io"
	"strconv"
	"sync"
)

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
