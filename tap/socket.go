package tap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/sessions"
)

// The live socket speaks JSON lines. A client sends one request line, of
// at most maxRequest bytes:
//
//	{"op":"info"}    → one line of Info, then the tap closes the connection
//	{"op":"attach","follow":true} → the session file's size as it grows:
//	                   {"size":N} lines, the last {"size":N,"end":true};
//	                   the subscriber reads the file (Info.Session) itself
//	{"op":"attach"}  → the session header, every record so far, then live
//	                   records (with "seq", "findings", "session_findings"
//	                   and "pair" added) until the session ends
//	{"op":"inject","dir":"h2s","size":N,"capture":true,"wait_ms":5000}
//	                 followed by the frame's N bytes (at most maxInjectFrame),
//	                 or with the frame in the line: "frame":"…" in place of
//	                 "size"
//	                 → {"ok":true,"id":…} or {"ok":false,"error":"…"}, and
//	                   with capture, the answer and how long it took, from
//	                   the frame's write to the answer's read:
//	                   {"reply":{…},"latency_us":N} or
//	                   {"reply":null,"error":"…"}; once wait_ms has passed
//	                   with no answer, the capture stays: a late answer is
//	                   recorded ("captured":true) and never forwarded
//	  "raw":true     the frame's bytes go on the wire exactly as given, no
//	                 framing added (several frames, a hand-made lsp header,
//	                 a line with no newline), still only at a frame
//	                 boundary, never inside a relayed frame; each frame
//	                 the receiver reads in them is recorded with src inject
//	  "force":true   with raw, bytes that leave the stream inside a frame
//	                 (a partial frame) are sent, their open end recorded
//	                 with "partial":true; without it they are refused, and
//	                 the error says why
//	  "keep":true    with capture, the tap answers {"ok":true,"id":…} only,
//	                 the frames may be any, and the answer to each whole
//	                 request among them is captured; every capture lasts
//	                 until the answer comes or the session ends, however
//	                 late: the answer is recorded ("captured":true), never
//	                 forwarded (the live view and rpctap inject send so by
//	                 default; at most maxKept wait at a time), unless the
//	                 side that never sent the request sends one with the
//	                 same id first: then the answer is its own, and a
//	                 waiting injector gets {"reply":null,"error":"…"}
//
//	{"op":"intercept","h2s":"EXPR","s2h":"EXPR"} (the filters optional)
//	                 → the connection stays open both ways, JSON lines
//	                   (see intercept.go; at most maxHeldViews at once).
//	                   The tap sends:
//	                   {"filters":{"h2s":"…","s2h":"…","hold_ms":N}} at
//	                   first and whenever they change;
//	                   {"held":{"n":N,"dir":"h2s","t":µs,"matched":true,
//	                   "hold_ms":N,"frame":"…"}} for each frame held now
//	                   and later ("frame_b64" when not UTF-8, "redacted"
//	                   when secrets are masked in it; "matched":false: it
//	                   waits behind a held frame of its direction; a frame
//	                   held while the view attaches may be told twice);
//	                   {"released":{"n":N,"dir":"h2s","how":"forwarded"}}
//	                   when it leaves the tap (how: forwarded, edited,
//	                   dropped, answered, timeout, detached, overflow,
//	                   waited, ended); {"notice":"…"}; and for each
//	                   action {"ok":true,"act":"…","n":N} or
//	                   {"ok":false,…,"error":"…"}.
//	                   The view sends actions, one line each:
//	                   {"act":"filter","h2s":"EXPR","s2h":"EXPR"} ("":
//	                   hold nothing; a direction left out stays);
//	                   {"act":"forward","n":N}, {"act":"forward","all":true},
//	                   {"act":"drop","n":N}: N's receiver never reads it;
//	                   {"act":"edit","n":N,"size":S} then S bytes: the
//	                   frame's new body, framed by the tap, recorded
//	                   src edit with the original kept;
//	                   {"act":"reply","n":N,"size":S} then S bytes: held
//	                   request N is answered with them in its receiver's
//	                   place (recorded src inject; the receiver never
//	                   reads the request). A decided frame leaves when
//	                   every frame held before it in its direction has.
//	                   When the last view that set the filters goes away,
//	                   they return to the tap's own (--intercept), and
//	                   every held frame goes on as it was.
//
// A request that is too long, not JSON, or not whole within
// requestTimeout gets {"ok":false,"error":"…"} and the connection closed.
type request struct {
	Op      string  `json:"op"`
	Follow  bool    `json:"follow"` // attach: the file's size as it grows, not records
	Dir     string  `json:"dir"`
	Frame   string  `json:"frame,omitempty"`
	Size    *int64  `json:"size,omitempty"` // inject: the frame's bytes follow the line
	Capture bool    `json:"capture"`
	WaitMs  int     `json:"wait_ms"`
	Raw     bool    `json:"raw,omitempty"`   // inject: the bytes as they are, no framing added
	Force   bool    `json:"force,omitempty"` // inject: raw bytes that end inside a frame
	Keep    bool    `json:"keep,omitempty"`  // inject: capture with no wait (see InjectOptions.Keep)
	H2S     *string `json:"h2s,omitempty"`   // intercept: the filter for frames toward the server
	S2H     *string `json:"s2h,omitempty"`   // intercept: the filter for frames toward the host
}

// Bounds on what a socket client sends: the request line, an injected
// frame (which the tap holds whole until it is written at a frame
// boundary and recorded), and how long the client may take to send
// either. One injected frame is received at a time, so these bound the
// tap's memory whatever clients send.
const (
	maxRequest     = 64 << 10
	maxInjectFrame = 64 << 20
	requestTimeout = 10 * time.Second
)

// Info describes a live tap.
type Info struct {
	ID      string    `json:"id"` // the session's id, as in its file's header
	PID     int       `json:"pid"`
	Name    string    `json:"name"`
	Argv    []string  `json:"argv"`
	Started time.Time `json:"started"`
	Session string    `json:"session,omitempty"`
	Framing string    `json:"framing"`
	Socket  string    `json:"socket"`
	Stats
}

// listen serves the live socket until stop is called. A goroutine looks
// at the socket's file every socketCheck: when it is gone (a cleaner of
// /tmp removed it, say), no view could find the tap, so the tap says so
// and listens there again.
func (t *Tap) listen() (stop func(), err error) {
	dir, err := sessions.LiveDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, strconv.Itoa(os.Getpid())+".sock")
	os.Remove(path) // a stale socket of a dead process with our pid
	ln, err := t.listenAt(path)
	if err != nil {
		return nil, err
	}
	t.socket = path
	done := make(chan struct{})
	t.accept(ln, done)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		ln = t.watchSocket(ln, path, done)
	}()
	return func() {
		close(done)
		<-watched
		ln.Close()
		os.Remove(path)
	}, nil
}

// socketCheck is how often the tap looks whether its socket file is still
// there: a stat, away from the traffic.
const socketCheck = time.Second

func (t *Tap) listenAt(path string) (*net.UnixListener, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", path, err)
	}
	os.Chmod(path, 0o600)
	return ln.(*net.UnixListener), nil
}

// accept serves ln's connections until ln is closed.
func (t *Tap) accept(ln net.Listener, done <-chan struct{}) {
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go t.serveConn(c, done)
		}
	}()
}

// watchSocket listens at path again each time its file is found gone,
// until done is closed; it returns the listener in use then.
func (t *Tap) watchSocket(ln *net.UnixListener, path string, done <-chan struct{}) *net.UnixListener {
	tick := time.NewTicker(socketCheck)
	defer tick.Stop()
	failed := false // the last attempt to listen again failed, and said so
	for {
		select {
		case <-done:
			return ln
		case <-tick.C:
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			continue
		}
		var nl *net.UnixListener
		_, err := sessions.LiveDir() // the directory may be gone too
		if err == nil {
			nl, err = t.listenAt(path)
		}
		if err != nil {
			if !failed {
				t.opts.Warn(fmt.Sprintf("the live socket %s was deleted, so rpctap ui, tail and inject cannot find this tap, and making it again failed (%v); the tap keeps relaying and tries again", path, err))
			}
			failed = true
			continue
		}
		failed = false
		t.opts.Warn(fmt.Sprintf("the live socket %s was deleted, so views could not find this tap for a moment; it listens there again", path))
		ln.SetUnlinkOnClose(false) // the path is the new listener's now
		ln.Close()
		ln = nl
		t.accept(ln, done)
	}
}

func (t *Tap) info() Info {
	t.hub.mu.Lock()
	st := t.hub.stats
	t.hub.mu.Unlock()
	return Info{ID: t.id, PID: os.Getpid(), Name: t.name, Argv: t.argv, Started: t.started, Session: t.path,
		Framing: t.opts.Framing.String(), Socket: t.socket, Stats: st}
}

func (t *Tap) serveConn(c net.Conn, done <-chan struct{}) {
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(requestTimeout))
	br := bufio.NewReaderSize(c, maxRequest)
	line, err := br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		refuse(c, fmt.Sprintf("the request line is longer than %d KiB; send a frame's bytes after the line, with {\"op\":\"inject\",\"size\":N,...}", maxRequest>>10))
		return
	case err != nil && len(line) == 0:
		return
	case err != nil:
		refuse(c, "the request did not end with a newline within "+requestTimeout.String())
		return
	}
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		refuse(c, "the request is not a JSON object: send {\"op\":\"info\"}, {\"op\":\"attach\"} or {\"op\":\"inject\",...}")
		return
	}
	if req.Op != "inject" {
		c.SetReadDeadline(time.Time{})
	}
	switch req.Op {
	case "info":
		reply(c, t.info())
	case "attach":
		v := t.addView(c)
		defer t.dropView(v)
		bw := bufio.NewWriterSize(v, 64<<10)
		fw := flushWriter{bw}
		switch {
		case req.Follow && t.hub.path != "":
			t.hub.serveFollow(fw, done)
		case t.hub.path != "":
			t.hub.serve(fw, done)
		default:
			t.hub.serveLive(v, done)
		}
		bw.Flush()
	case "inject":
		t.serveInject(c, br, req)
	case "intercept":
		t.serveIntercept(c, br, req)
	default:
		refuse(c, fmt.Sprintf("unknown op %q: use info, attach, inject or intercept", req.Op))
	}
}

// refuse answers a request the tap will not serve; the caller then closes
// the connection.
func refuse(c net.Conn, msg string) {
	c.SetWriteDeadline(time.Now().Add(requestTimeout))
	reply(c, map[string]any{"ok": false, "error": msg})
}

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

func reply(c net.Conn, v any) {
	b, _ := json.Marshal(v)
	c.Write(append(b, '\n'))
}

func (t *Tap) serveInject(c net.Conn, br *bufio.Reader, req request) {
	dir, err := classify.ParseDirection(req.Dir)
	if err != nil || dir == classify.Err {
		refuse(c, "dir must be h2s (to the server) or s2h (to the host)")
		return
	}
	body := []byte(req.Frame)
	if req.Size != nil {
		if body, err = t.receiveFrame(c, br, *req.Size); err != nil {
			refuse(c, err.Error())
			return
		}
	}
	c.SetReadDeadline(time.Time{})
	res, err := t.Inject(dir, body, InjectOptions{Raw: req.Raw, Force: req.Force, Capture: req.Capture, Keep: req.Capture && req.Keep})
	if req.Size != nil {
		body = nil
		<-t.injecting
	}
	if err != nil {
		reply(c, map[string]any{"ok": false, "error": err.Error()})
		return
	}
	reply(c, map[string]any{"ok": true, "id": res.ID})
	if res.Reply == nil || req.Keep {
		return
	}
	wait := time.Duration(req.WaitMs) * time.Millisecond
	if wait <= 0 {
		wait = 30 * time.Second
	}
	select {
	case ans, ok := <-res.Reply:
		if !ok {
			side := "host"
			if dir == classify.S2H {
				side = "server"
			}
			reply(c, map[string]any{"reply": nil, "error": fmt.Sprintf("no answer was kept for it: the %s sent a request of its own with this id before an answer came, so an answer with this id goes on to the %s; give the injected request an id the %s does not use (rpctap inject --method gives it one of rpctap's)", side, side, side)})
			return
		}
		body, _ := t.rec.redact.Mask(ans.Body)
		c.Write([]byte(`{"reply":`))
		if json.Valid(body) && bytes.IndexByte(body, '\n') >= 0 {
			// The reply is one line: an LSP body may hold line feeds.
			var b bytes.Buffer
			json.Compact(&b, body)
			body = b.Bytes()
		}
		if json.Valid(body) {
			c.Write(body)
		} else {
			b, _ := json.Marshal(string(body))
			c.Write(b)
		}
		c.Write([]byte(`,"latency_us":` + strconv.FormatInt(int64(res.Latency(ans)/time.Microsecond), 10) + "}\n"))
	case <-time.After(wait):
		// The capture stays: a late answer is recorded as captured, and
		// never reaches the side that did not send the request.
		reply(c, map[string]any{"reply": nil, "error": fmt.Sprintf("no answer within %s", wait)})
	}
}

// receiveFrame reads an injected frame's size bytes, which follow the
// request line, once no other frame is being received: the caller
// releases t.injecting when done with the frame (unless an error is
// returned). The whole frame must come within requestTimeout.
func (t *Tap) receiveFrame(c net.Conn, br *bufio.Reader, size int64) ([]byte, error) {
	if size < 0 || size > maxInjectFrame {
		return nil, fmt.Errorf("the frame is %d bytes; a tap injects frames of up to %d MiB", size, maxInjectFrame>>20)
	}
	select {
	case t.injecting <- struct{}{}:
	case <-time.After(requestTimeout):
		return nil, fmt.Errorf("another injection has been in progress for over %s (its frame is still coming, or the receiver is not reading); try again later", requestTimeout)
	}
	// The whole frame must come within requestTimeout: a client that
	// sends it a byte at a time does not hold the others back for long.
	c.SetReadDeadline(time.Now().Add(requestTimeout))
	body := make([]byte, size)
	for n := 0; n < len(body); {
		m, err := br.Read(body[n:])
		n += m
		if err != nil && n < len(body) {
			<-t.injecting
			if errors.Is(err, os.ErrDeadlineExceeded) {
				err = fmt.Errorf("the frame did not come whole within %s (%d of %d bytes came)", requestTimeout, n, size)
			} else {
				err = fmt.Errorf("the frame ended after %d of %d bytes", n, size)
			}
			return nil, err
		}
	}
	return body, nil
}

// InjectResult says what happened to an injected frame.
type InjectResult struct {
	ID    string        // the id of an injected request, as on the wire
	Reply chan Captured // the answer, when capture was asked
	// Sent is when the tap wrote the frame, on the clock of
	// Captured.At.
	Sent time.Duration
	key  string
	set  *captureSet
}

// Latency is how long the answer took: from the tap's write of the
// injected frame to its read of the answer's last byte.
func (r InjectResult) Latency(ans Captured) time.Duration { return max(ans.At-r.Sent, 0) }

// cancel forgets the captures of an injection that was not sent: its
// own, and more (the other requests among its frames).
func (r InjectResult) cancel(more ...string) {
	if r.set == nil {
		return
	}
	if r.key != "" {
		r.set.drop(r.key)
	}
	for _, k := range more {
		r.set.drop(k)
	}
}

// InjectOptions say how a frame is injected.
type InjectOptions struct {
	// Raw says the bytes go on the wire exactly as given, with no framing
	// added: several frames, a hand-made lsp header, a line with no
	// newline. They are still written at a frame boundary, never inside a
	// relayed frame, and recorded as the frames the receiver reads.
	Raw bool
	// Force sends raw bytes that leave the stream inside a frame (a
	// partial frame: the next frame relayed would be read as part of
	// it); without it such bytes are refused, with the reason.
	Force bool
	// Capture keeps the receiver's answer to the injected request from
	// the other side, and hands it over on InjectResult.Reply: the
	// answer is recorded (captured) and never reaches the side that did
	// not send the request, however late it comes, whether or not anyone
	// still waits for it.
	Capture bool
	// Keep, with Capture, says no one waits for the answer: the frames
	// may be any, and the answer to each whole request among them is
	// captured. The live view and rpctap inject send so by default.
	Keep bool
}

// maxKept bounds the captures that wait for their answers, per direction:
// a peer that never answers does not grow the tap's memory past it.
const maxKept = 4096

// Inject inserts a frame into the stream towards dir's receiver at the
// next frame boundary: its body, to which the stream's framing is added,
// or with o.Raw its bytes as they are. It records it with src inject,
// and with o.Capture keeps the receiver's answer from the other side.
func (t *Tap) Inject(dir classify.Direction, body []byte, o InjectOptions) (InjectResult, error) {
	if dir != classify.H2S && dir != classify.S2H {
		return InjectResult{}, errors.New("a frame can be injected towards the server (h2s) or the host (s2h) only")
	}
	// Run sets these up; Inject may be called from any goroutine.
	t.mu.Lock()
	d, rel, other, set := t.dests[dir], t.relays[dir], t.relays[dir.Opposite()], t.capture[dir.Opposite()]
	t.mu.Unlock()
	if d == nil {
		return InjectResult{}, errors.New("the session has not started")
	}
	framing := framingOf(rel, other, t.opts.Framing)
	inj := &injection{src: sessions.SrcInject, capture: o.Capture, done: make(chan error, 1)}
	var req []byte // the frame whose answer is captured
	if o.Raw {
		if err := inj.splitRaw(body, framing, o); err != nil {
			return InjectResult{}, err
		}
		if o.Capture && !o.Keep && (len(inj.parts) != 1 || inj.parts[0].partial) {
			return InjectResult{}, errors.New("--capture waits for the answer to one request, and these raw bytes are not one whole frame; send them without --capture (the answers are still kept from the other side), or one request at a time")
		}
		req = inj.parts[0].body
	} else {
		if err := inj.frameBody(body, framing); err != nil {
			return InjectResult{}, err
		}
		req = inj.parts[0].body
	}
	var res InjectResult
	m := classify.Classify(req, dir, classify.JSONRPC)
	if m.HasID() && len(inj.parts) == 1 {
		res.ID = string(m.ID().Raw)
	}
	var kept []string // the ids captured besides res.key
	switch {
	case o.Capture && !o.Keep:
		if m.Kind != classify.KindRequest {
			return InjectResult{}, fmt.Errorf("--capture waits for the answer to a request, and this is %s, which gets no answer; send it without --capture, or make it a request with an id, as in: {\"jsonrpc\":\"2.0\",\"id\":\"rpctap-1\",\"method\":\"ping\"}", kindPhrase(m.Kind))
		}
		res.key = m.ID().Key()
		res.set = set
		var err error
		if res.Reply, err = set.add(res.key); err != nil {
			return InjectResult{}, err
		}
	case o.Capture:
		// No one waits: each whole request's answer is captured.
		res.set = set
		for i, p := range inj.parts {
			q := m
			if i > 0 {
				q = classify.Classify(p.body, dir, classify.JSONRPC)
			}
			if p.partial || q.Kind != classify.KindRequest {
				continue
			}
			ch, err := set.add(q.ID().Key())
			if err != nil {
				res.cancel(kept...)
				return InjectResult{}, err
			}
			if res.Reply == nil {
				res.key, res.Reply = q.ID().Key(), ch
			} else {
				kept = append(kept, q.ID().Key())
			}
		}
	}
	d.inject(inj)
	if err := <-inj.done; err != nil {
		res.cancel(kept...)
		return InjectResult{}, err
	}
	res.Sent = inj.sent
	return res, nil
}

// framingOf is the framing of the stream a relay feeds: what its own
// traffic showed, else the other direction's, else the tap's.
func framingOf(rel, other *relay, given classify.Framing) classify.Framing {
	framing := classify.Framing(rel.seen.Load())
	if framing == 0 || framing == classify.FramingAuto {
		framing = classify.Framing(other.seen.Load())
	}
	if framing == 0 {
		framing = given
	}
	return framing
}

// frameBody sets the injection to body with the stream's framing added:
// frame is the body with its framing, and the recorded body a slice of
// it, so the tap holds one copy of the frame.
func (inj *injection) frameBody(body []byte, framing classify.Framing) error {
	switch framing {
	case classify.FramingLSP:
		header := "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
		inj.frame = append(append(make([]byte, 0, len(header)+len(body)), header...), body...)
		body = inj.frame[len(header):]
	default:
		if bytes.IndexByte(body, '\n') >= 0 {
			return errors.New("the frame holds a line feed, which would split it into two frames on a newline-framed stream; remove it (JSON needs none), or send the bytes as they are with --raw")
		}
		inj.frame = append(append(make([]byte, 0, len(body)+1), body...), '\n')
		body = inj.frame[:len(body)]
	}
	inj.parts = []injectPart{{body: body}}
	return nil
}

// frameToward makes body, with its stream's framing, into a frame to
// write toward dir's receiver, recorded with src.
func (t *Tap) frameToward(dir classify.Direction, body []byte, src string) (*injection, error) {
	t.mu.Lock()
	rel, other := t.relays[dir], t.relays[dir.Opposite()]
	t.mu.Unlock()
	if rel == nil {
		return nil, errors.New("the session has not started")
	}
	inj := &injection{src: src, done: make(chan error, 1)}
	if err := inj.frameBody(body, framingOf(rel, other, t.opts.Framing)); err != nil {
		return nil, err
	}
	return inj, nil
}

// splitRaw takes raw bytes as the frames their receiver reads, each
// recorded on its own; an open last frame is refused unless forced.
func (inj *injection) splitRaw(b []byte, framing classify.Framing, o InjectOptions) error {
	if len(b) == 0 {
		return errors.New("the raw frame is empty: give the bytes to write")
	}
	pieces, partial := inject.SplitWire(b, framing)
	if partial != "" && !o.Force {
		return fmt.Errorf("refused a partial frame: %s (rpctap inject --raw --force sends it; in the composer, a second ctrl+s)", strings.TrimSuffix(partial, "."))
	}
	inj.frame = b
	for _, p := range pieces {
		part := injectPart{body: p.Body()}
		switch {
		case p.Open:
			part = injectPart{body: p.Bytes, partial: true}
		case p.Info.HeaderLen > 0 && !p.Info.PlainHeader:
			part.header = p.Header()
		}
		inj.parts = append(inj.parts, part)
	}
	return nil
}

// kindPhrase names a kind of frame with its article, for sentences.
func kindPhrase(k classify.Kind) string {
	if k == classify.KindBatch {
		return "a batch (capture one request at a time)"
	}
	return k.Phrase()
}
