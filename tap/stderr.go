package tap

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"

	"github.com/rpctap/rpctap/classify"
)

// relayStderr passes the server's stderr through unchanged and records it
// line by line, from the first whole line once anyone reads what the tap
// notes. A read deadline ends it: it then takes what r still holds,
// without waiting for more.
func (t *Tap) relayStderr(r *os.File, w io.Writer) {
	buf := make([]byte, readSize)
	on := false       // lines are noted
	lineStart := true // the next byte begins a line
	pass := func(n int) {
		w.Write(buf[:n])
		b := buf[:n]
		if !on && t.rec.wanted.Load() {
			if !lineStart {
				// The rest of a line begun before: the record begins
				// with the next one.
				i := bytes.IndexByte(b, '\n')
				if i < 0 {
					return
				}
				b = b[i+1:]
			}
			on = true
		}
		lineStart = buf[n-1] == '\n'
		if on && len(b) > 0 {
			t.rec.note(item{at: now(), dir: classify.Err, data: b})
		}
	}
	for {
		n, err := r.Read(buf)
		if n > 0 {
			pass(n)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			for {
				if n = readNow(r, buf); n <= 0 {
					break
				}
				pass(n)
			}
		}
		if err != nil {
			if on {
				t.rec.note(item{at: now(), dir: classify.Err, eof: true})
			}
			return
		}
	}
}

// readNow reads what f holds without waiting for more: 0 when it holds
// nothing, or at its end, or on an error.
func readNow(f *os.File, buf []byte) int {
	sc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	for {
		var rerr error
		if err := sc.Control(func(fd uintptr) { n, rerr = syscall.Read(int(fd), buf) }); err != nil {
			return 0
		}
		if rerr == syscall.EINTR {
			continue
		}
		if rerr != nil {
			return 0
		}
		return n
	}
}
