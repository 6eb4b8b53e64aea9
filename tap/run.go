package tap

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/internal/earlysignal"
)

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
