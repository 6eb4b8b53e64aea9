package tap

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
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
// Run passes the host's steps on and adds none of its own (the host owns the
// lifecycle): hostIn ending closes the server's stdin; hostOut failing (the
// host stopped reading) closes the tap's end of the server's stdout; SIGINT,
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
	// The server starts with the default action for every signal: a
	// caller that ignores SIGPIPE (so that a host gone away does not kill
	// the tap) must not pass that on. Notify undoes Ignore; children of a
	// process that handles a signal get the default action.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
	srv, res, err := t.spawn(sigs)
	if srv == nil {
		return res, err
	}
	// The host's pipes too, when they are pipes (a burst then costs the
	// host and the tap fewer wake-ups); anything else refuses, harmlessly.
	for _, end := range []any{hostIn, hostOut} {
		if f, ok := end.(*os.File); ok {
			growPipe(f)
		}
	}
	srv.closeChildEnds()

	if err := t.startRecorder(t.redact); err != nil {
		opts.Warn(err.Error())
	}
	h2s, s2h := t.connect(srv, hostIn, hostOut)
	stop := t.serveViews()
	ends := t.relayAll(srv, h2s, s2h, hostOut, errOut)
	waitErr := t.awaitEnd(ctx, sigs, srv, ends)
	return t.endSession(srv, ends, waitErr, stop), nil
}

// serveViews serves live views on the tap's socket, with Options.Listen;
// stop ends the socket (nil when there is none). A socket that cannot be
// made is said through Options.Warn, and the session goes on.
func (t *Tap) serveViews() (stop func()) {
	if !t.opts.Listen {
		return nil
	}
	stop, err := t.listen()
	if err != nil {
		t.opts.Warn(fmt.Sprintf("live view unavailable: %v", err))
	}
	return stop
}

// closeSession records the session's end (res), gives live views the
// last records and the exit, as far as each takes them without the tap
// waiting (its exit never waits on an observer), and stops the socket.
func (t *Tap) closeSession(res Result, stop func()) {
	t.finish(res)
	t.endViews()
	t.hub.serving.Wait()
	if stop != nil {
		stop()
	}
}

// connect makes the relays of both directions, from the host to the
// server's stdin and from the server's stdout to the host, through the
// recorder, the captures and the intercept.
func (t *Tap) connect(s *server, hostIn io.Reader, hostOut io.WriteCloser) (h2s, s2h *relay) {
	opts := t.opts
	t.mu.Lock() // Inject reads these from other goroutines
	defer t.mu.Unlock()
	t.dests[classify.H2S] = &dest{dir: classify.H2S, w: s.stdinW, note: t.rec.noteQuietly, kick: t.rec.kick, wanted: &t.rec.wanted}
	t.dests[classify.S2H] = &dest{dir: classify.S2H, w: hostOut, note: t.rec.noteQuietly, kick: t.rec.kick, wanted: &t.rec.wanted}
	for _, d := range t.dests[classify.H2S:] {
		if d != nil {
			d.on.Store(t.rec.wanted.Load()) // nothing crossed yet: a boundary
		}
	}
	t.capture[classify.S2H] = newCaptureSet()
	t.capture[classify.H2S] = newCaptureSet()
	h2s = &relay{dir: classify.H2S, src: hostIn, dst: t.dests[classify.H2S], framing: opts.Framing, captures: t.capture[classify.H2S]}
	s2h = &relay{dir: classify.S2H, src: s.stdoutR, dst: t.dests[classify.S2H], framing: opts.Framing, captures: t.capture[classify.S2H], idle: &s.idle}
	h2s.rivals, s2h.rivals = s2h.captures, h2s.captures
	t.relays[classify.H2S], t.relays[classify.S2H] = h2s, s2h
	for _, rel := range []*relay{h2s, s2h} {
		rel.spoolDir, rel.warn = t.rec.spoolDir, opts.Warn
		rel.hold = t.intercept.dirs[rel.dir]
		rel.hold.dst = rel.dst
	}
	return h2s, s2h
}

// ends say when each part of a session has ended: the host's input, the
// server's output, its stderr, and the server itself (its wait's error).
type ends struct {
	host, out, stderr chan struct{}
	exited            chan error
}

// relayAll starts the relays, the server's stderr and the wait for the
// server, each in a goroutine of its own.
func (t *Tap) relayAll(s *server, h2s, s2h *relay, hostOut io.WriteCloser, errOut io.Writer) ends {
	e := ends{host: make(chan struct{}), out: make(chan struct{}), stderr: make(chan struct{}), exited: make(chan error, 1)}
	// Host → server. When the host closes stdin, the server's stdin is
	// closed.
	go func() {
		h2s.run()
		s.stdinW.Close()
		close(e.host)
	}()
	// Server → host. Once the host has the end of the server's stdout, or
	// has stopped reading it, the tap's end of it is closed: a server that
	// writes more gets EPIPE, as it would writing to the host directly.
	go func() {
		s2h.run()
		s.stdoutR.Close()
		hostOut.Close()
		close(e.out)
	}()
	go func() {
		t.relayStderr(s.stderrR, errOut)
		s.stderrR.Close() // a child that writes more gets EPIPE
		close(e.stderr)
	}()
	go func() {
		err := s.cmd.Wait()
		close(s.reaped)
		e.exited <- err
	}()
	return e
}

// awaitEnd waits for the session's end and returns the server's wait's
// error. The session lasts until the server has exited and the host has
// seen the end of its stdout, which a child of the server may hold open
// after it: a host reading the server directly would wait for that too.
// Signals go on being passed to the server's process group meanwhile, so
// that the host stopping reaches such a child.
func (t *Tap) awaitEnd(ctx context.Context, sigs <-chan os.Signal, s *server, e ends) error {
	opts := t.opts
	var waitErr error
	var kill <-chan syscall.Signal
	hostGone, cancelled, running, out := (<-chan struct{})(e.host), ctx.Done(), (<-chan error)(e.exited), (<-chan struct{})(e.out)
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
				s.idle.Store(int64(opts.Drain))
				s.stdoutR.SetReadDeadline(time.Now().Add(opts.Drain))
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
	return waitErr
}

// endSession ends a session whose server has exited and whose output has
// ended, and says how it ended.
func (t *Tap) endSession(s *server, e ends, waitErr error, stop func()) Result {
	// The server's stderr is read to the end of what the pipe holds, and
	// not waited for beyond that: a host does not wait for the stderr of
	// a server it runs.
	s.stderrR.SetReadDeadline(time.Now())
	<-e.stderr
	res := Result{Path: t.path}
	res.ExitCode, res.Signal = exitStatus(s.cmd, waitErr)
	// Frames still held toward a host that is still writing (the server
	// is gone) go now, so that the file says what became of them.
	t.intercept.endSession()
	t.closeSession(res, stop)
	// The host may still be writing; its reader goroutine ends with the
	// process.
	return res
}
