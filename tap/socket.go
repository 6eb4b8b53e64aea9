package tap

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

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
//	                   {"reply":null,"error":"…"}, or for an answer
//	                   larger than a relay holds (1 MiB), which only the
//	                   session file keeps, {"reply":null,"too_large":true,
//	                   "size":N,"latency_us":N,"error":"…"}; once wait_ms has passed
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
	t.mu.Lock()
	for _, r := range t.relays {
		if r != nil {
			st.Frames += r.unnoted.Load() // relayed while no one read them: counted, not judged
		}
	}
	t.mu.Unlock()
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

func reply(c net.Conn, v any) {
	b, _ := json.Marshal(v)
	c.Write(append(b, '\n'))
}
