// Package tap is the relay: it runs the server, moves bytes both ways
// unchanged, splits them into frames for classification, records them, and
// serves live subscribers.
package tap

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/internal/earlysignal"
	"github.com/rpctap/rpctap/sessions"
)

// Options configure a tap.
type Options struct {
	Argv    []string // the server's command line
	Name    string   // a short name for people; defaults to the command's base name
	Framing classify.Framing
	Profile classify.Profile
	Timeout time.Duration // pending-request timeout (0: classify's default)
	// MethodTimeouts override Timeout for the methods they name.
	MethodTimeouts map[string]time.Duration

	Record    bool   // write a session file
	Path      string // the session file; "" picks one in the state directory
	Overwrite bool   // write over a file at Path (--force); else the session goes beside it, and Warn says so
	Redact    []string
	NoRedact  bool
	Listen    bool          // serve live subscribers on a Unix socket
	StdinWait time.Duration // opt-in: after the host closes stdin, SIGTERM when the server has not exited within this (0: never)
	TermWait  time.Duration // opt-in: after the server is signalled to stop, SIGKILL when it has not exited within this (0: never)
	Drain     time.Duration // opt-in: after the server exits, stop reading its stdout once it is silent this long (0: read it until it closes, as a host would)
	Env       []string      // the server's environment; nil: the tap's own

	// Signals are the SIGINT, SIGTERM and SIGHUP the caller catches for
	// the tap, from before Run, to be passed on to the server. nil: Run
	// catches them itself.
	Signals <-chan os.Signal

	// Intercept is a filter (in the view's filter language) of frames to
	// hold, in both directions, until a view decides them or HoldTimeout
	// passes; "" holds nothing until a view sets a filter.
	Intercept string
	// HoldTimeout is how long a frame is held at most (0:
	// DefaultHoldTimeout).
	HoldTimeout time.Duration

	// Warn receives the tap's own diagnostics (one sentence each).
	Warn func(string)

	// Calls, when set, receives every request that got its answer, as
	// the answer is recorded, in order. It is called on the recorder's
	// goroutine, which traffic waits for when it falls behind: it must
	// return at once (hand the Call to a bounded queue, or drop it).
	Calls func(Call)
}

// A Tap runs one server between a host's stdio and the server's.
type Tap struct {
	opts    Options
	hub     *hub
	dests   [3]*dest // by direction
	capture [3]*captureSet
	relays  [3]*relay
	rec     *recorder
	path    string
	started time.Time
	id      string
	cmd     *exec.Cmd
	create  func(path string) (sessionFile, error) // opens a new session file; nil: createSessionFile
	// redact masks the session's secrets (nil with NoRedact), in the
	// file and in whatever else the command shows of the session.
	redact *sessions.Redactor

	socket  string
	recDone chan struct{}
	// argv and name are the server's command line and name as rpctap
	// writes and shows them: with secrets masked.
	argv []string
	name string
	// injecting is held while a frame sent over the socket to inject is
	// received and written, so that the tap holds one such frame at a time.
	// A client that waits longer than requestTimeout for its turn is
	// refused, so one stuck injection does not hold every other one.
	injecting chan struct{}

	mu sync.Mutex // guards dests, capture, relays and noting, which Run sets up
	// noting is the recorder once it runs, for Note.
	noting *recorder

	intercept *interceptor

	vmu        sync.Mutex // guards views and viewsEnded
	views      map[*viewConn]struct{}
	viewsEnded bool
}

// Result is how the session ended.
type Result struct {
	ExitCode int    // the server's exit status, or 128+signal
	Signal   string // the signal that ended the server, if one did
	Path     string // the session file, if one was written
}

// New prepares a tap; Run starts it.
func New(opts Options) (*Tap, error) {
	if len(opts.Argv) == 0 {
		return nil, errors.New("no server command: give it after --, as in: rpctap run -- my-server --stdio")
	}
	if opts.Name == "" {
		opts.Name = filepath.Base(opts.Argv[0])
	}
	if opts.Framing == 0 {
		opts.Framing = classify.FramingNDJSON
	}
	if opts.Warn == nil {
		opts.Warn = func(string) {}
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	t := &Tap{opts: opts, started: time.Now(), injecting: make(chan struct{}, 1)}
	if !opts.NoRedact {
		var err error
		if t.redact, err = sessions.NewRedactor(opts.Env, opts.Redact); err != nil {
			return nil, err
		}
	}
	var idb [8]byte
	rand.Read(idb[:])
	t.id = hex.EncodeToString(idb[:])
	ic, err := newInterceptor(t, opts.Intercept, opts.Intercept, opts.HoldTimeout)
	if err != nil {
		return nil, err
	}
	t.intercept = ic
	return t, nil
}

// ID is the session's id, as its header says.
func (t *Tap) ID() string { return t.id }

// Path is the session file the tap writes, once Run has started.
func (t *Tap) Path() string { return t.path }

// Redactor is what the tap masks the session's secrets with (nil with
// NoRedact). Whatever else a command shows or keeps of what the tap sees
// masks with it too (MaskingWriter), so that it masks the same.
func (t *Tap) Redactor() *sessions.Redactor { return t.redact }

// MaskingWriter returns a writer that masks what is written to it as the
// tap masks the server's stderr in the session, and passes it on to w;
// Close writes what it holds back (and does not close w).
func (t *Tap) MaskingWriter(w io.Writer) io.WriteCloser { return t.redact.MaskingWriter(w) }

// Run spawns the server and relays host ↔ server until the server has
// exited and its output has ended. hostIn is what the host writes (the
// server's input), hostOut what the host reads, errOut where the server's
// stderr goes. It returns the server's exit status.
//
// Run passes the host's steps on and adds none of its own (invariant 5):
// hostIn ending closes the server's stdin; hostOut failing (the host
// stopped reading) closes the tap's end of the server's stdout; SIGINT,
// SIGTERM and SIGHUP, and ctx's end as SIGTERM, go to the server's process
// group. The server's exit ends the session once its stdout has closed.
func (t *Tap) Run(ctx context.Context, hostIn io.Reader, hostOut io.WriteCloser, errOut io.Writer) (Result, error) {
	opts := t.opts
	// Signals are caught before the server starts, so that one that comes
	// at any moment is passed on; one that comes first ends the session
	// before the server is started.
	sigs := opts.Signals
	if sigs == nil {
		c := make(chan os.Signal, 4)
		signal.Notify(c, earlysignal.Passed()...)
		defer signal.Stop(c)
		sigs = c
	}
	cmd := exec.Command(serverPath(opts.Argv[0]), opts.Argv[1:]...)
	cmd.Args[0] = opts.Argv[0]
	// The server starts with the default action for every signal: a
	// caller that ignores SIGPIPE (so that a host gone away does not kill
	// the tap) must not pass that on. Notify undoes Ignore; children of a
	// process that handles a signal get the default action.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
	cmd.Env = opts.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithTap(cmd.SysProcAttr)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return Result{}, err
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		return Result{}, err
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		return Result{}, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	closeAll := func() {
		for _, f := range []*os.File{stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW} {
			f.Close()
		}
	}
	select {
	case sig := <-sigs:
		closeAll()
		return t.endUnstarted(sig.(syscall.Signal))
	default:
	}
	redact := t.redact
	reaped := make(chan struct{}) // closed once the server has been waited for
	if err := startServer(cmd, reaped); err != nil {
		closeAll()
		name := redact.MaskString(opts.Argv[0])
		return Result{ExitCode: 127}, fmt.Errorf("cannot start %s: %w%s", name, unwrapExec(err), startHint(cmd.Path, name, err))
	}
	t.cmd = cmd
	growPipe(stdinW)
	growPipe(stdoutR)
	// The host's pipes too, when they are pipes (a burst then costs the
	// host and the tap fewer wake-ups); anything else refuses, harmlessly.
	for _, end := range []any{hostIn, hostOut} {
		if f, ok := end.(*os.File); ok {
			growPipe(f)
		}
	}
	stdinR.Close()
	stdoutW.Close()
	stderrW.Close()

	if err := t.startRecorder(redact); err != nil {
		opts.Warn(err.Error())
	}
	t.mu.Lock() // Inject reads these from other goroutines
	t.dests[classify.H2S] = &dest{dir: classify.H2S, w: stdinW, note: t.rec.noteQuietly, kick: t.rec.kick}
	t.dests[classify.S2H] = &dest{dir: classify.S2H, w: hostOut, note: t.rec.noteQuietly, kick: t.rec.kick}
	t.capture[classify.S2H] = newCaptureSet()
	t.capture[classify.H2S] = newCaptureSet()
	h2s := &relay{dir: classify.H2S, src: hostIn, dst: t.dests[classify.H2S], framing: opts.Framing, captures: t.capture[classify.H2S]}
	var idle atomic.Int64 // with Drain, once the server has exited: how long a read of its output may wait
	s2h := &relay{dir: classify.S2H, src: stdoutR, dst: t.dests[classify.S2H], framing: opts.Framing, captures: t.capture[classify.S2H], idle: &idle}
	h2s.rivals, s2h.rivals = s2h.captures, h2s.captures
	t.relays[classify.H2S], t.relays[classify.S2H] = h2s, s2h
	for _, rel := range []*relay{h2s, s2h} {
		rel.hold = t.intercept.dirs[rel.dir]
		rel.hold.dst = rel.dst
	}
	t.mu.Unlock()

	var stop func()
	if opts.Listen {
		if stop, err = t.listen(); err != nil {
			opts.Warn(fmt.Sprintf("live view unavailable: %v", err))
		}
	}

	// Host → server. When the host closes stdin, the server's stdin is
	// closed.
	hostDone := make(chan struct{})
	go func() {
		h2s.run()
		stdinW.Close()
		close(hostDone)
	}()
	// Server → host. Once the host has the end of the server's stdout, or
	// has stopped reading it, the tap's end of it is closed: a server that
	// writes more gets EPIPE, as it would writing to the host directly.
	outDone := make(chan struct{})
	go func() {
		s2h.run()
		stdoutR.Close()
		hostOut.Close()
		close(outDone)
	}()
	errDone := make(chan struct{})
	go func() {
		t.relayStderr(stderrR, errOut)
		stderrR.Close() // a child that writes more gets EPIPE
		close(errDone)
	}()

	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		close(reaped)
		exited <- err
	}()

	// The session lasts until the server has exited and the host has seen
	// the end of its stdout, which a child of the server may hold open
	// after it: a host reading the server directly would wait for that
	// too. Signals go on being passed to the server's process group
	// meanwhile, so that the host stopping reaches such a child.
	var waitErr error
	var kill <-chan syscall.Signal
	hostGone, cancelled, running, out := hostDone, ctx.Done(), (<-chan error)(exited), (<-chan struct{})(outDone)
	stopping := func(sig syscall.Signal) {
		t.signalServer(sig)
		if kill == nil && opts.TermWait > 0 {
			kill = t.escalate(opts.TermWait, syscall.SIGKILL)
		}
	}
	for running != nil || out != nil {
		select {
		case waitErr = <-running:
			running = nil
			if opts.Drain > 0 {
				idle.Store(int64(opts.Drain))
				stdoutR.SetReadDeadline(time.Now().Add(opts.Drain))
			}
		case <-out:
			out = nil
		case <-hostGone:
			hostGone = nil
			if opts.StdinWait > 0 && running != nil {
				kill = t.escalate(opts.StdinWait, syscall.SIGTERM)
			}
		case sig := <-kill:
			kill = nil
			if sig == syscall.SIGTERM {
				stopping(sig)
			} else {
				t.signalServer(sig)
			}
		case sig := <-sigs:
			stopping(sig.(syscall.Signal))
		case <-cancelled:
			cancelled = nil
			stopping(syscall.SIGTERM)
		}
	}
	// The server's stderr is read to the end of what the pipe holds, and
	// not waited for beyond that: a host does not wait for the stderr of
	// a server it runs.
	stderrR.SetReadDeadline(time.Now())
	<-errDone
	res := Result{Path: t.path}
	res.ExitCode, res.Signal = exitStatus(cmd, waitErr)
	// Frames still held toward a host that is still writing (the server
	// is gone) go now, so that the file says what became of them.
	t.intercept.endSession()
	t.finish(res)
	// Live views get the last records and the exit, as far as each takes
	// them without the tap waiting: its exit never waits on an observer.
	t.endViews()
	t.hub.serving.Wait()
	if stop != nil {
		stop()
	}
	// The host may still be writing; its reader goroutine ends with the
	// process.
	return res, nil
}

// startServer starts cmd from a thread of its own that lives until
// reaped is closed (the server has been waited for): the kernel's signal
// to the server when the tap dies (dieWithTap) comes when the thread that
// started it ends, and the runtime ends a thread whose goroutine locked
// it and returned (a view's indexing in the same process does).
func startServer(cmd *exec.Cmd, reaped <-chan struct{}) error {
	started := make(chan error)
	go func() {
		runtime.LockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			<-reaped
		}
		runtime.UnlockOSThread()
	}()
	return <-started
}

// Note records a note in the session, in order with the frames the tap
// has read so far: text from rpctap itself (a demo's caption), shown by
// tail and kept in the file as a note event. A note made before the
// session starts recording, or after it ends, is not kept.
func (t *Tap) Note(text string) {
	t.mu.Lock()
	rec := t.noting
	t.mu.Unlock()
	if rec != nil {
		rec.note(item{at: now(), event: &sessions.EventRecord{Kind: sessions.EventNote, Text: text}})
	}
}

// headerTimeout is the timeout the session header names: the tap's own,
// when it is not the default (0 names none).
func headerTimeout(d time.Duration) time.Duration {
	if d <= 0 || d == classify.DefaultTimeout {
		return 0
	}
	return d
}

// finish records the session's exit and closes the recorder and the hub.
func (t *Tap) finish(res Result) {
	ev := sessions.EventRecord{Kind: sessions.EventExit, Signal: res.Signal}
	code := res.ExitCode
	ev.Code = &code
	t.rec.note(item{at: now(), event: &ev})
	t.rec.close()
	<-t.recDone
	t.hub.close()
}

// endUnstarted ends a session that a signal ended before its server was
// started: the session file says so, and the tap ends with 128+signal.
func (t *Tap) endUnstarted(sig syscall.Signal) (Result, error) {
	if err := t.startRecorder(t.redact); err != nil {
		t.opts.Warn(err.Error())
	}
	res := Result{ExitCode: 128 + int(sig), Signal: signalName(sig), Path: t.path}
	t.finish(res)
	return res, nil
}

// escalate returns a channel that delivers sig after d.
func (t *Tap) escalate(d time.Duration, sig syscall.Signal) <-chan syscall.Signal {
	c := make(chan syscall.Signal, 1)
	time.AfterFunc(d, func() { c <- sig })
	return c
}

// signalServer sends sig to the server's process group, so children that
// hold its pipes hear it too.
func (t *Tap) signalServer(sig syscall.Signal) {
	if t.cmd == nil || t.cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-t.cmd.Process.Pid, sig); err != nil {
		t.cmd.Process.Signal(sig)
	}
}

func exitStatus(cmd *exec.Cmd, err error) (int, string) {
	st := cmd.ProcessState
	if st == nil {
		return 1, ""
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), signalName(ws.Signal())
	}
	return st.ExitCode(), ""
}

// SignalName is the name a session file's exit record gives a signal.
func SignalName(s syscall.Signal) string { return signalName(s) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	}
	return fmt.Sprintf("signal %d", int(s))
}

// serverPath finds a command given by name alone as execvp does: when
// PATH is unset (a host may start the tap with an empty environment), in
// the default path.
func serverPath(name string) string {
	if strings.Contains(name, "/") || os.Getenv("PATH") != "" {
		return name
	}
	for _, dir := range []string{"/bin", "/usr/bin"} {
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p
		}
	}
	return name
}

// startHint says why a server's command that exists could not start, and
// what to do: a directory is no program; a file that is not executable
// wants chmod +x (name is the command as the user wrote it, masked).
func startHint(path, name string, err error) string {
	if !errors.Is(err, os.ErrPermission) {
		return ""
	}
	fi, serr := os.Stat(path)
	switch {
	case serr != nil:
		return ""
	case fi.IsDir():
		return " (it is a directory, not a program)"
	case fi.Mode()&0o111 == 0:
		return " (it is not executable: chmod +x " + name + ")"
	}
	return ""
}

// unwrapExec is why the server could not start, without its command:
// the caller names it, masked.
func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		err = ee.Err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// startRecorder opens the session file and starts the recorder. Without a
// file it still runs, for the tracker and live subscribers.
func (t *Tap) startRecorder(redact *sessions.Redactor) error {
	opts := t.opts
	t.argv, t.name = redact.MaskStrings(opts.Argv), redact.MaskString(opts.Name)
	t.hub = newHub(opts.Framing)
	// The tap follows at most 10,000 requests in flight: memory stays
	// small when a peer sends requests that are never answered.
	tr := classify.NewTracker(classify.TrackerOptions{Profile: opts.Profile, LSPFraming: opts.Framing == classify.FramingLSP, Timeout: opts.Timeout, MethodTimeouts: opts.MethodTimeouts, MaxInFlight: 10_000, MaxRemembered: 4096})
	t.rec = &recorder{stop: make(chan struct{}), started: now() - time.Since(t.started), limit: parseLimit,
		tracker: tr, redact: redact, hub: t.hub, warn: opts.Warn}
	if opts.Calls != nil {
		t.rec.calls = newCalls(opts.Calls, t.started)
	}
	// The header is encoded first, with no file yet (tee keeps it): a
	// header built here, with its id and start time, in this package's
	// format version, is never refused, and the file's own failures are
	// handled below like any other write's.
	w, err := sessions.NewWriter(tee{t.rec}, sessions.Header{ID: t.id, Started: t.started.UTC(), Argv: t.argv, Name: t.name,
		Framing: opts.Framing.String(), Profile: opts.Profile.String(), ParseLimit: parseLimit, Timeout: headerTimeout(opts.Timeout), Redact: redact.Names()})
	if err != nil {
		panic("rpctap: the session header was refused: " + err.Error())
	}
	t.rec.w = w
	t.hub.header = append([]byte(nil), t.rec.last...)
	var ferr error
	if opts.Record {
		// Views elsewhere read the file by the path the tap announces,
		// and what the tap says of a file it was given (that it is
		// there already) names it the same way: neither depends on the
		// tap's working directory.
		given := opts.Path
		if given != "" {
			if abs, err := filepath.Abs(given); err == nil {
				given = abs
			}
		}
		path, auto, err := sessions.Place(given, t.started, t.name)
		if err != nil {
			ferr = fmt.Errorf("cannot record this session: %w", err)
		} else {
			open := createSessionFile
			if t.create != nil {
				open = func(p string, _ bool) (sessionFile, error) { return t.create(p) }
			}
			// A file that is there (the last launch's) is kept, and the
			// session is recorded all the same, beside it.
			f, path, sink, err := sessions.Create(sessions.NewFile[sessionFile]{Path: path, Auto: auto, ID: t.id, Started: t.started,
				Replace: opts.Overwrite, Open: open, Warn: opts.Warn,
				Unlisted: func(err error) {
					opts.Warn(fmt.Sprintf("rpctap ls may not list this session from another environment: %v", err))
				}})
			if err != nil {
				ferr = fmt.Errorf("cannot record this session: %w", err)
			} else {
				if !sink {
					// A sink (--record /dev/null) keeps nothing to read
					// back: views are served as by a tap with no file.
					t.path = path
					t.hub.path = path
					t.rec.spoolDir = filepath.Dir(path)
				}
				t.rec.file = f
				t.rec.bw = bufio.NewWriterSize(f, 256<<10)
				if _, err := t.rec.bw.Write(t.hub.header); err != nil {
					t.rec.lost(err) // traffic goes on; the file says what is missing
				}
			}
		}
	}
	t.hub.settle = func() func() {
		t.rec.mu.Lock()
		t.rec.flush()
		return t.rec.mu.Unlock
	}
	t.hub.meter = newBusyMeter(func() time.Duration { return time.Duration(t.rec.in.waited.Load()) }, processSched)
	t.hub.clock = func() int64 { return int64((now() - t.rec.started) / time.Microsecond) }
	t.rec.seq = 1
	t.rec.flush()
	t.recDone = make(chan struct{})
	t.rec.start()
	t.mu.Lock()
	t.noting = t.rec
	t.mu.Unlock()
	go func() {
		t.rec.run()
		if t.rec.file != nil {
			if err := t.rec.file.Close(); err != nil {
				t.opts.Warn(fmt.Sprintf("cannot finish the session file: %v", err))
			}
		}
		// The last word on the file, when it lacks frames.
		if msg := t.rec.missingReport(t.path); msg != "" {
			t.opts.Warn(msg)
		}
		close(t.recDone)
	}()
	return ferr
}

// createSessionFile creates a new session file, only the user's to read;
// with overwrite, in place of one that is there.
func createSessionFile(path string, overwrite bool) (sessionFile, error) {
	f, err := sessions.CreateFile(path, overwrite)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// relayStderr passes the server's stderr through unchanged and records it
// line by line. A read deadline ends it: it then takes what r still holds,
// without waiting for more.
func (t *Tap) relayStderr(r *os.File, w io.Writer) {
	buf := make([]byte, readSize)
	pass := func(n int) {
		w.Write(buf[:n])
		t.rec.note(item{at: now(), dir: classify.Err, data: buf[:n]})
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
			t.rec.note(item{at: now(), dir: classify.Err, eof: true})
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
