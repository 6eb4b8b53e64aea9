package tap

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// These tests drive Tap.Run in-process, with the host's side on pipes and a
// real server process (/bin/cat or a /bin/sh script), so that a session
// costs a fork and an exec and nothing else.

// generous bounds what "does not hang" means: far above what any of these
// sessions take on a busy two-core machine.
const generous = 60 * time.Second

// sink is the host's stdout (or the tap's stderr): it keeps what it is
// given and lets a test wait for it.
type sink struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	closed  bool
	changed chan struct{}
	keep    bool // false: count bytes and newlines only
	n       int64
	lines   int64
}

func newSink(keep bool) *sink { return &sink{changed: make(chan struct{}, 1), keep: keep} }

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	if s.keep {
		s.buf.Write(p)
	}
	s.n += int64(len(p))
	s.lines += int64(bytes.Count(p, []byte{'\n'}))
	s.mu.Unlock()
	s.poke()
	return len(p), nil
}

func (s *sink) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.poke()
	return nil
}

func (s *sink) poke() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *sink) bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.buf.Bytes())
}

func (s *sink) String() string { return string(s.bytes()) }

func (s *sink) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// wait waits until cond holds of the sink (called with its lock held), or
// fails the test after d.
func (s *sink) wait(t *testing.T, d time.Duration, what string, cond func(s *sink) bool) {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		ok := cond(s)
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-s.changed:
		case <-deadline.C:
			t.Fatalf("after %v still waiting for %s; have %q (closed %v)", d, what, clip(s.bytes(), 400), s.isClosed())
		}
	}
}

func (s *sink) waitFor(t *testing.T, substr string) {
	t.Helper()
	s.wait(t, generous, strconv.Quote(substr), func(s *sink) bool { return bytes.Contains(s.buf.Bytes(), []byte(substr)) })
}

func (s *sink) waitClosed(t *testing.T, d time.Duration) {
	t.Helper()
	s.wait(t, d, "EOF", func(s *sink) bool { return s.closed })
}

func clip(b []byte, n int) []byte {
	if len(b) > n {
		return append(b[:n:n], "…"...)
	}
	return b
}

// session is one Tap.Run with the host's ends in the test's hands.
type session struct {
	tap   *Tap
	in    *io.PipeWriter // the host writes here; Close is the host closing stdin
	out   *sink          // what the host reads
	err   *sink          // the server's stderr as the tap passes it on
	warns *sink          // the tap's own diagnostics, one per line
	start time.Time

	cancel context.CancelFunc
	done   chan struct{}
	res    Result
	runErr error
	ended  time.Time
}

// startSession runs a tap with opts (Record defaults to a file in a fresh
// temporary directory) and returns at once.
func startSession(t *testing.T, opts Options) *session {
	t.Helper()
	if opts.Record && opts.Path == "" {
		opts.Path = filepath.Join(t.TempDir(), "session.jsonl")
	}
	s := &session{out: newSink(true), err: newSink(true), warns: newSink(true), done: make(chan struct{})}
	if opts.Warn == nil {
		opts.Warn = func(msg string) { fmt.Fprintln(s.warns, msg) }
	}
	tp, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.tap = tp
	pr, pw := io.Pipe()
	s.in = pw
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.start = time.Now()
	go func() {
		defer close(s.done)
		s.res, s.runErr = tp.Run(ctx, pr, s.out, s.err)
		s.ended = time.Now()
	}()
	t.Cleanup(func() {
		pw.Close()
		cancel()
		select {
		case <-s.done:
		case <-time.After(generous):
			t.Errorf("the tap did not end within %v of its test", generous)
		}
	})
	return s
}

// wait waits for Run to return, failing the test after d.
func (s *session) wait(t *testing.T, d time.Duration) Result {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(d):
		t.Fatalf("Run did not return within %v", d)
	}
	if s.runErr != nil {
		t.Fatalf("Run: %v", s.runErr)
	}
	return s.res
}

// write writes to the server's stdin as the host, failing on error.
func (s *session) write(t *testing.T, b []byte) {
	t.Helper()
	if _, err := s.in.Write(b); err != nil {
		t.Fatalf("host write: %v", err)
	}
}

// sh is the argv of a /bin/sh script.
func sh(script string) []string { return []string{"/bin/sh", "-c", script} }

// readSession reads a session file whole: its header and every record,
// copied.
func readSession(t *testing.T, path string) (sessions.Header, []sessions.Event, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return readRecords(t, f)
}

func readRecords(t *testing.T, r io.Reader) (sessions.Header, []sessions.Event, int) {
	t.Helper()
	rd := sessions.NewReader(r)
	h, _ := rd.Header()
	var evs []sessions.Event
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("reading the session: %v", err)
		}
		e := *ev
		e.Frame = bytes.Clone(ev.Frame)
		e.Header = bytes.Clone(ev.Header)
		evs = append(evs, e)
	}
	return h, evs, rd.Skipped()
}

// replay rebuilds the bytes a direction's receiver read from the frames
// recorded for it: terminators and plain Content-Length headers restored,
// captured frames left out.
func replay(evs []sessions.Event, dir classify.Direction, framing classify.Framing) []byte {
	var out []byte
	for i := range evs {
		e := &evs[i]
		if !e.IsFrame() || e.Dir != dir || e.Captured {
			continue
		}
		out = appendRecorded(out, e, framing)
	}
	return out
}

func appendRecorded(out []byte, e *sessions.Event, framing classify.Framing) []byte {
	switch {
	case e.Partial: // the bytes as written
		out = append(out, e.Frame...)
	case framing == classify.FramingLSP && e.Dir != classify.Err:
		if e.Header != nil {
			out = append(out, e.Header...)
		} else {
			out = fmt.Appendf(out, "Content-Length: %d\r\n\r\n", len(e.Frame))
		}
		out = append(out, e.Frame...)
	default:
		out = append(out, e.Frame...)
		if !e.EOF {
			out = append(out, '\n')
		}
	}
	return out
}

// exitEvent returns the session's exit record.
func exitEvent(t *testing.T, evs []sessions.Event) sessions.Event {
	t.Helper()
	for _, e := range evs {
		if e.Kind == sessions.EventExit {
			return e
		}
	}
	t.Fatal("the session file has no exit record")
	return sessions.Event{}
}

// procState reads a process's state letter from /proc ("" when it is gone).
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return "?"
}

// alive reports whether pid is a running process (not gone, not a zombie).
func alive(pid int) bool {
	st := procState(pid)
	return st != "" && st != "Z" && st != "X"
}

// waitGone waits up to d for pid to end.
func waitGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !alive(pid) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return !alive(pid)
}

func killIfAlive(pid int) {
	if pid > 0 && alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// t0ctx is the context of sessions that end when their host closes stdin.
var t0ctx = context.Background()

// envSeed is RPCTAP_SEED, to repeat a random test's run (0 when unset).
func envSeed() uint64 {
	s, _ := strconv.ParseUint(os.Getenv("RPCTAP_SEED"), 10, 64)
	return s
}

func openFile(path string) (*os.File, error) { return os.Open(path) }

// t0pipe is a host stdin the test writes to.
func t0pipe() (*io.PipeReader, *io.PipeWriter) { return io.Pipe() }
