package tap

import (
	"bytes"
	"fmt"
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

// slowSink is a host that takes a while to read its first write.
type slowSink struct {
	*sink
	first chan struct{}
	delay time.Duration
}

func (s *slowSink) Write(p []byte) (int, error) {
	select {
	case <-s.first:
	default:
		close(s.first)
		time.Sleep(s.delay)
	}
	return s.sink.Write(p)
}

// The host owns the lifecycle: the server exits → the host sees EOF after the
// last byte, even when the tap is slow to get to the bytes the server wrote
// just before it exited (here the host is slow to read, for longer than the
// drain period).
func TestHostGetsEveryByteTheServerWroteBeforeExitingWhenSlowToRead(t *testing.T) {
	out := &slowSink{sink: newSink(true), first: make(chan struct{}), delay: 4 * 200 * time.Millisecond}
	tp, err := New(Options{Argv: sh(`printf 'first\n'; sleep 0.1; head -c 50000 /dev/zero | tr '\0' a; echo; exit 3`), Drain: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := t0pipe()
	defer pw.Close()
	res, err := tp.Run(t0ctx, pr, out, newSink(false))
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("Run = %+v, %v; want exit status 3", res, err)
	}
	want := "first\n" + strings.Repeat("a", 50000) + "\n"
	if got := out.String(); got != want {
		t.Errorf("the host read %d bytes, want %d: what the server wrote before it exited was dropped", len(got), len(want))
	}
}

// The opt-in Drain, with a child that holds the server's stdout: the tap
// exits soon after the server does and does not wait for the child beyond
// its drain period; the host gets what the server wrote, then EOF.
func TestTapExitsPromptlyWhenTheServerExitsLeavingAChildHoldingStdout(t *testing.T) {
	const drain = 200 * time.Millisecond
	s := startSession(t, Options{Argv: sh(`sleep 30 & echo "child $!" >&2; echo bye; exit 3`), Drain: drain, Record: true})
	s.err.waitFor(t, "\n")
	var child int
	fmt.Sscanf(s.err.String(), "child %d", &child)
	defer killIfAlive(child)
	res := s.wait(t, 10*time.Second)
	took := s.ended.Sub(s.start)
	t.Logf("the tap returned %v after it started; the child is %s", took.Round(time.Millisecond), procState(child))
	if res.ExitCode != 3 {
		t.Errorf("exit status %d, want the server's 3", res.ExitCode)
	}
	if took > 2*time.Second {
		t.Errorf("the tap took %v to return: it waited for the child that holds stdout", took)
	}
	if got := s.out.String(); got != "bye\n" || !s.out.isClosed() {
		t.Errorf("the host read %q (closed %v), want \"bye\\n\" and EOF", got, s.out.isClosed())
	}
	if !alive(child) {
		t.Errorf("the child (pid %d) is gone: the tap is not meant to signal it when the server exits by itself", child)
	}
}

// The host owns the lifecycle: SIGTERM (here from the context, as the tap's
// own SIGTERM does) goes to the server's process group, so a child that holds
// its stdout hears it too, and the tap ends.
func TestSignalReachesTheServersChildrenThroughItsProcessGroup(t *testing.T) {
	s := startSession(t, Options{Argv: sh(`sleep 30 & echo "child $!" >&2; wait`), Drain: 200 * time.Millisecond, TermWait: 5 * time.Second})
	s.err.waitFor(t, "\n")
	var child int
	fmt.Sscanf(s.err.String(), "child %d", &child)
	defer killIfAlive(child)
	s.cancel()
	res := s.wait(t, 10*time.Second)
	if res.ExitCode != 128+int(syscall.SIGTERM) || res.Signal != "SIGTERM" {
		t.Errorf("Result = %+v, want 143 and SIGTERM", res)
	}
	if !waitGone(child, 5*time.Second) {
		t.Errorf("the child (pid %d) is still %s: it did not get the signal", child, procState(child))
	}
}

// The host owns the lifecycle: the host closes stdin → the server's stdin is
// closed, the server exits by itself, and the tap exits with its status after
// passing on everything it wrote.
func TestHostClosingStdinClosesTheServersStdinAndTheTapExitsWithItsStatus(t *testing.T) {
	s := startSession(t, Options{Argv: sh(`cat; echo "server saw EOF"; exit 7`), Record: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","method":"early"}`+"\n"))
	s.out.waitFor(t, "early")
	s.in.Close()
	res := s.wait(t, 10*time.Second)
	if res.ExitCode != 7 || res.Signal != "" {
		t.Errorf("Result = %+v, want exit status 7 and no signal", res)
	}
	if got, want := s.out.String(), `{"jsonrpc":"2.0","method":"early"}`+"\n"+"server saw EOF\n"; got != want || !s.out.isClosed() {
		t.Errorf("the host read %q (closed %v), want %q and EOF", got, s.out.isClosed(), want)
	}
	if took := s.ended.Sub(s.start); took > 2*time.Second { // StdinWait is 2 s
		t.Errorf("the tap took %v: it waited out the grace period for a server that had exited", took)
	}
	_, evs, _ := readSession(t, s.tap.Path())
	if e := exitEvent(t, evs); e.Code == nil || *e.Code != 7 {
		t.Errorf("exit record %+v, want code 7", e)
	}
}

// The host owns the lifecycle: a server that ignores SIGTERM is killed after
// the grace periods, and the tap reports 128+SIGKILL.
func TestServerIgnoringSigtermIsKilledAfterTheGracePeriod(t *testing.T) {
	s := startSession(t, Options{Argv: sh(`trap '' TERM; echo ready; exec sleep 30`), StdinWait: 100 * time.Millisecond, TermWait: 300 * time.Millisecond, Record: true})
	s.out.waitFor(t, "ready\n")
	closed := time.Now()
	s.in.Close() // the host goes away: SIGTERM after 100 ms, SIGKILL 300 ms later
	res := s.wait(t, 10*time.Second)
	took := s.ended.Sub(closed)
	t.Logf("the server was killed %v after the host closed stdin", took.Round(time.Millisecond))
	if res.ExitCode != 137 || res.Signal != "SIGKILL" {
		t.Errorf("Result = %+v, want 137 (128+SIGKILL)", res)
	}
	if took < 400*time.Millisecond {
		t.Errorf("killed after %v, before the grace periods (100 ms + 300 ms) ran out", took)
	}
	_, evs, _ := readSession(t, s.tap.Path())
	if e := exitEvent(t, evs); e.Code == nil || *e.Code != 137 || e.Signal != "SIGKILL" {
		t.Errorf("exit record %+v, want code 137 and signal SIGKILL", e)
	}
}

// The host owns the lifecycle: a server that crashes in the middle of a line:
// the host gets the partial line, then EOF; the file records the line with
// eof and the exit by signal.
func TestServerCrashingMidLineGivesTheHostThePartialLineAndEOF(t *testing.T) {
	for _, framing := range []classify.Framing{classify.FramingNDJSON, classify.FramingLSP} {
		t.Run(framing.String(), func(t *testing.T) {
			partial := `{"jsonrpc":"2.0","id":1,"result":{"tex`
			if framing == classify.FramingLSP {
				partial = "Content-Length: 100\r\n\r\n" + partial
			}
			s := startSession(t, Options{Argv: sh(`printf '%s' '` + partial + `'; kill -SEGV $$`), Framing: framing, Record: true})
			res := s.wait(t, 10*time.Second)
			if res.ExitCode != 128+int(syscall.SIGSEGV) || res.Signal != "SIGSEGV" {
				t.Errorf("Result = %+v, want 139 (128+SIGSEGV)", res)
			}
			if got := s.out.String(); got != partial || !s.out.isClosed() {
				t.Errorf("the host read %q (closed %v), want %q and EOF", got, s.out.isClosed(), partial)
			}
			_, evs, _ := readSession(t, s.tap.Path())
			var frames []sessions.Event
			for _, e := range evs {
				if e.IsFrame() && e.Dir == classify.S2H {
					frames = append(frames, e)
				}
			}
			if len(frames) != 1 || !frames[0].EOF || !bytes.Equal(appendRecorded(nil, &frames[0], framing), []byte(partial)) {
				t.Errorf("s2h frames recorded: %+v; want the partial frame, with eof", frames)
			}
			if e := exitEvent(t, evs); e.Code == nil || *e.Code != 139 || e.Signal != "SIGSEGV" {
				t.Errorf("exit record %+v, want code 139 and signal SIGSEGV", e)
			}
		})
	}
}

// Exit statuses pass through: the server's own, and 128+signal when a
// signal ended it.
func TestExitStatusPassesThrough(t *testing.T) {
	for _, c := range []struct {
		script string
		code   int
		signal string
	}{
		{"exit 0", 0, ""},
		{"exit 1", 1, ""},
		{"exit 42", 42, ""},
		{"exit 255", 255, ""},
		{"kill -TERM $$", 143, "SIGTERM"},
		{"kill -INT $$", 130, "SIGINT"},
		{"kill -HUP $$", 129, "SIGHUP"},
		{"kill -KILL $$", 137, "SIGKILL"},
		{"kill -USR1 $$", 138, "signal 10"},
	} {
		t.Run(strconv.Quote(c.script), func(t *testing.T) {
			s := startSession(t, Options{Argv: sh(c.script)})
			if res := s.wait(t, 10*time.Second); res.ExitCode != c.code || res.Signal != c.signal {
				t.Errorf("Result = %+v, want %d %q", res, c.code, c.signal)
			}
		})
	}
}

// A server that closes its stdout and keeps running: the host gets EOF at
// once (nothing more can come from the server); the tap keeps relaying
// the host's input to it and does not end on its own, since the server
// runs and may still be reading. It ends the usual way when the host, on
// that EOF, closes stdin: the server's stdin is closed, then (with the
// opt-in StdinWait and TermWait) SIGTERM after StdinWait, SIGKILL after
// TermWait.
func TestServerClosingStdoutButRunningGivesTheHostEOFAndEndsWhenTheHostLeaves(t *testing.T) {
	s := startSession(t, Options{Argv: sh(`echo last; exec >&-; echo "stdout closed" >&2; while read line; do echo "read $line" >&2; done; trap '' TERM; exec sleep 30`),
		StdinWait: 100 * time.Millisecond, TermWait: 200 * time.Millisecond, Record: true})
	s.out.waitClosed(t, 10*time.Second)
	if got := s.out.String(); got != "last\n" {
		t.Errorf("the host read %q, want \"last\\n\" then EOF", got)
	}
	// The server still reads what the host sends.
	s.write(t, []byte("ping\n"))
	s.err.waitFor(t, "read ping\n")
	select {
	case <-s.done:
		t.Fatal("the tap ended while the server was still running and the host still there")
	default:
	}
	closed := time.Now()
	s.in.Close()
	res := s.wait(t, 10*time.Second)
	if res.ExitCode != 137 || res.Signal != "SIGKILL" {
		t.Errorf("Result %+v, want 137: the server ignores its closed stdin and SIGTERM", res)
	}
	t.Logf("the tap ended %v after the host closed stdin", s.ended.Sub(closed).Round(time.Millisecond))
}

// The server exits → the host sees EOF after the last byte, also when a
// child of the server holds its stdout and writes to it later: the tap
// reads it until it closes, as a host reading the server directly would,
// and has no timer of its own that cuts it. Meanwhile the host's signal
// reaches the child through the server's process group, and the tap then
// exits with the server's status.
func TestChildHoldingStdoutAfterTheServerExitsIsReadUntilItCloses(t *testing.T) {
	s := startSession(t, Options{Argv: sh(`(sleep 0.5; echo late; exec sleep 30) & echo "child $!" >&2; echo early; exit 3`), Record: true})
	s.err.waitFor(t, "\n")
	var child int
	fmt.Sscanf(s.err.String(), "child %d", &child)
	defer killIfAlive(child)
	s.out.wait(t, 10*time.Second, `"late"`, func(s *sink) bool { return bytes.Contains(s.buf.Bytes(), []byte("late\n")) })
	select {
	case <-s.done:
		t.Fatal("the tap ended while a child of the server still held its stdout")
	default:
	}
	s.cancel() // the host stops: SIGTERM
	res := s.wait(t, 10*time.Second)
	if res.ExitCode != 3 || res.Signal != "" {
		t.Errorf("Result = %+v, want the server's own status 3", res)
	}
	if got := s.out.String(); got != "early\nlate\n" || !s.out.isClosed() {
		t.Errorf("the host read %q (closed %v), want \"early\\nlate\\n\" and EOF", got, s.out.isClosed())
	}
	if !waitGone(child, 5*time.Second) {
		t.Errorf("the child (pid %d) is still %s: the host's SIGTERM did not reach it", child, procState(child))
	}
	_, evs, _ := readSession(t, s.tap.Path())
	if e := exitEvent(t, evs); e.Code == nil || *e.Code != 3 {
		t.Errorf("exit record %+v, want code 3", e)
	}
}

// The host closing stdin closes the server's stdin and nothing more; a
// server that takes longer than the tap's old grace period (2 s) to answer
// its last request gets the answer through.
func TestServerAnsweringLongAfterStdinClosedIsNotStopped(t *testing.T) {
	s := startSession(t, Options{Argv: sh(`cat >/dev/null; sleep 3; echo '{"jsonrpc":"2.0","id":1,"result":{}}'`), Record: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","id":1,"method":"slow"}`+"\n"))
	s.in.Close()
	res := s.wait(t, generous)
	if res.ExitCode != 0 || res.Signal != "" {
		t.Errorf("Result = %+v, want the server's 0: the tap stopped it", res)
	}
	if got := s.out.String(); got != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" {
		t.Errorf("the host read %q, want the answer", got)
	}
}

// The host stops reading (closes its end of the tap's stdout) → the tap
// closes its end of the server's stdout, and the server sees EPIPE on its
// next write, as it would writing to the host directly.
func TestHostClosingItsStdoutClosesTheServersStdout(t *testing.T) {
	out := &closingSink{sink: newSink(true)}
	tp, err := New(Options{Argv: sh(`trap '' PIPE; echo ready; while echo tick; do sleep 0.01; done; echo "stdout closed" >&2; exit 5`)})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := t0pipe()
	defer pw.Close() // the host's stdin stays open
	errs := newSink(true)
	done := make(chan Result, 1)
	go func() {
		res, _ := tp.Run(t0ctx, pr, out, errs)
		done <- res
	}()
	out.waitFor(t, "ready\n")
	out.shut()
	select {
	case res := <-done:
		if res.ExitCode != 5 {
			t.Errorf("exit status %d, want the server's 5", res.ExitCode)
		}
	case <-time.After(generous):
		t.Fatal("the server never saw its stdout close")
	}
	if !strings.Contains(errs.String(), "stdout closed") {
		t.Errorf("the server said %q on stderr, want that its stdout closed", errs.String())
	}
}

// closingSink is a host that stops reading when shut: writes then fail
// with EPIPE, as writes to a pipe whose reader closed do.
type closingSink struct {
	*sink
	mu   sync.Mutex
	gone bool
}

func (s *closingSink) shut() { s.mu.Lock(); s.gone = true; s.mu.Unlock() }

func (s *closingSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	gone := s.gone
	s.mu.Unlock()
	if gone {
		return 0, syscall.EPIPE
	}
	return s.sink.Write(p)
}

// A signal that comes before the server is started ends the session
// cleanly: no server, 128+signal, and a session file with its header and
// exit record.
func TestSignalBeforeTheServerStartsEndsTheSessionCleanly(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	sigs <- syscall.SIGTERM
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	tp, err := New(Options{Argv: sh(`touch ` + marker), Record: true, Path: filepath.Join(dir, "s.jsonl"), Signals: sigs})
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := t0pipe()
	defer pw.Close()
	res, err := tp.Run(t0ctx, pr, newSink(false), newSink(false))
	if err != nil || res.ExitCode != 143 || res.Signal != "SIGTERM" {
		t.Fatalf("Run = %+v, %v; want 143 and SIGTERM", res, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the server was started")
	}
	h, evs, _ := readSession(t, res.Path)
	if h.ID == "" {
		t.Error("the session file has no header")
	}
	if e := exitEvent(t, evs); e.Code == nil || *e.Code != 143 || e.Signal != "SIGTERM" {
		t.Errorf("exit record %+v, want code 143 and SIGTERM", e)
	}
}

// A live view that has stopped reading (a tail stopped with SIGSTOP) does
// not hold the tap's exit: once the server has exited, the tap gives each
// view what it has room for and goes. The old tap waited 5 s for such a
// view; the exit takes milliseconds otherwise, so 4 s tells the two apart
// on a busy machine.
func TestStuckViewDoesNotHoldTheTapsExit(t *testing.T) {
	s := startListening(t)
	_, _ = attach(t) // and never read again
	// Far more than the socket's buffer: the tap's writer to the view is
	// left waiting for room.
	if err := sendNotes(s, 1, 50_000); err != nil {
		t.Fatal(err)
	}
	s.out.wait(t, generous, "every frame back", func(s *sink) bool { return s.lines >= 50_000 })
	closed := time.Now()
	s.in.Close()
	res := s.wait(t, generous)
	took := s.ended.Sub(closed)
	t.Logf("the tap ended %v after the host closed stdin, with a view that does not read", took.Round(time.Millisecond))
	if res.ExitCode != 0 {
		t.Errorf("exit status %d, want cat's 0", res.ExitCode)
	}
	if took > 4*time.Second {
		t.Errorf("the tap took %v to end after the server: it waited for a view that does not read", took)
	}
}

// A session leaves none of the server's pipes open: a child of the server
// that writes to its stderr after the session gets EPIPE, as with its
// stdout, not a pipe that the tap keeps and that fills and blocks it (and
// a process that runs taps one after another, rpctap watch or demo, does
// not keep a file per session).
func TestChildWritingStderrAfterTheSessionGetsEPIPE(t *testing.T) {
	dir := t.TempDir()
	goFile, marker := filepath.Join(dir, "go"), filepath.Join(dir, "status")
	script := fmt.Sprintf(`(exec >/dev/null; while [ ! -e %[1]s ]; do sleep 0.01; done; sh -c 'echo late >&2'; echo $? > %[2]s.tmp; mv %[2]s.tmp %[2]s) & exit 0`, goFile, marker)
	s := startSession(t, Options{Argv: sh(script)})
	s.in.Close()
	s.wait(t, 10*time.Second)
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(generous)
	for {
		b, err := os.ReadFile(marker)
		if err == nil {
			if st := strings.TrimSpace(string(b)); st == "0" {
				t.Errorf("the child wrote to its stderr after the session ended (status %s): the tap kept the pipe open", st)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the server's child never wrote its status")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
