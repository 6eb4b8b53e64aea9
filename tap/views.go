package tap

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// A viewConn is a live view's connection. Once the session is over (end),
// a write to it never waits: the view gets what it has room for, and a view
// that is not reading is cut off, so that the tap's exit never waits on an
// observer. A view that follows the session file reads the rest there.
type viewConn struct {
	net.Conn
	mu     sync.Mutex
	ending bool
	// With keepRoom, send keeps reserve bytes of the socket's buffer
	// (sndbuf of them) free, where the platform says how full it is.
	raw     syscall.RawConn
	sndbuf  int
	reserve int
}

// errViewStuck says a view had no room for the end of the session.
var errViewStuck = errors.New("the view is not reading; it was cut off at the end of the session")

func (c *viewConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	ending := c.ending
	c.mu.Unlock()
	n := 0
	if !ending {
		var err error
		if n, err = c.Conn.Write(p); !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
		// The session ended while this write waited (end's deadline):
		// the rest goes out only if there is room now.
	}
	m, err := c.writeNow(p[n:], false)
	return n + m, err
}

// viewReserve is how much of a live stream's socket buffer send keeps
// free for the last word to a view that stopped reading: a note of what
// it missed and the session's last record (see hub.serveLive).
const viewReserve = 16 << 10

// keepRoom has send keep room in the socket's buffer for sendLast, where
// the platform says how much of the buffer is taken.
func (c *viewConn) keepRoom() {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	raw.Control(func(fd uintptr) {
		if _, ok := unsent(fd); !ok {
			return
		}
		if n, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF); err == nil {
			c.raw, c.sndbuf, c.reserve = raw, n, min(viewReserve, n/8)
		}
	})
}

// room is how many bytes may be written to the socket fd now, leaving
// the reserve free; -1 when the platform cannot say.
func (c *viewConn) room(fd uintptr) int {
	q, ok := unsent(fd)
	if !ok {
		return -1
	}
	free := c.sndbuf - c.reserve - q
	// The kernel counts what a socket holds with an overhead of its own
	// (a few hundred bytes a buffer, and whole pages): leave room for it.
	return free - free/16 - 1024
}

// send writes p whole to the view, waiting for it to read, with keepRoom
// only as long as the socket keeps its reserve free. Once the session
// has ended it no longer waits: it writes what fits (outside the reserve)
// and returns errViewStuck with what it wrote.
func (c *viewConn) send(p []byte) (int, error) {
	if c.raw == nil {
		return c.Write(p)
	}
	n := 0
	for n < len(p) {
		c.mu.Lock()
		ending := c.ending
		c.mu.Unlock()
		if ending {
			m, err := c.writeNow(p[n:], true)
			return n + m, err
		}
		var werr error
		err := c.raw.Write(func(fd uintptr) bool {
			room := c.room(fd)
			if room <= 0 {
				return false // wait until the view has read some
			}
			m, err := writeFd(fd, p[n:n+min(room, len(p)-n)])
			n += m
			if err == syscall.EAGAIN {
				return false
			}
			werr = err
			return true
		})
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue // the session ended (end's deadline): once more, without waiting
		}
		if err == nil {
			err = werr
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// sendLast writes p, the last word to the view, in what room there is,
// the reserve included, without waiting.
func (c *viewConn) sendLast(p []byte) (int, error) { return c.writeNow(p, false) }

// writeNow writes what of p there is room for now, without waiting
// (with capped, outside the reserve kept by keepRoom); errViewStuck when
// that is not all of it.
func (c *viewConn) writeNow(p []byte, capped bool) (int, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return 0, errViewStuck
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, err
	}
	n := 0
	var werr error
	// Control, not Write: the deadline that stopped a waiting write must
	// not stop this one, and this one must not wait.
	if err := raw.Control(func(fd uintptr) {
		q := p
		if capped && c.raw != nil {
			q = p[:max(min(c.room(fd), len(p)), 0)]
		}
		n, werr = writeFd(fd, q)
		if werr == nil && n < len(p) {
			werr = errViewStuck
		}
	}); err != nil {
		return n, err
	}
	if werr == syscall.EAGAIN {
		werr = errViewStuck
	}
	return n, werr
}

// writeFd writes p to the non-blocking fd, as far as it takes it: it
// returns at EAGAIN (with it) or an error, or when all is written.
func writeFd(fd uintptr, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := syscall.Write(int(fd), p[n:])
		if m > 0 {
			n += m
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return n, err
		case m <= 0:
			return n, io.ErrShortWrite
		}
	}
	return n, nil
}

// end makes the view's writes stop waiting, the one waiting now too.
func (c *viewConn) end() {
	c.mu.Lock()
	c.ending = true
	c.mu.Unlock()
	c.Conn.SetWriteDeadline(time.Now())
}

// addView registers a view's connection, so that endViews reaches it.
func (t *Tap) addView(c net.Conn) *viewConn {
	v := &viewConn{Conn: c}
	t.vmu.Lock()
	defer t.vmu.Unlock()
	if t.views == nil {
		t.views = map[*viewConn]struct{}{}
	}
	t.views[v] = struct{}{}
	if t.viewsEnded {
		v.end()
	}
	return v
}

func (t *Tap) dropView(v *viewConn) {
	t.vmu.Lock()
	delete(t.views, v)
	t.vmu.Unlock()
}

// endViews ends the live views' wait for the tap: from now on, each gets
// what it has room for and no more (see viewConn).
func (t *Tap) endViews() {
	t.vmu.Lock()
	defer t.vmu.Unlock()
	t.viewsEnded = true
	for v := range t.views {
		v.end()
	}
}

// flushWriter flushes after each write, so a live view sees records as they
// come; a burst still goes out in large writes because the hub writes a
// drained queue through it record by record... (bufio coalesces).
type flushWriter struct{ w *bufio.Writer }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil && f.w.Buffered() > 32<<10 {
		err = f.w.Flush()
	}
	return n, err
}

// Flush writes out what is buffered; the hub calls it when it has nothing
// more to write for now.
func (f flushWriter) Flush() error { return f.w.Flush() }
