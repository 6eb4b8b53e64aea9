package tap

import (
	"context"
	"io"
	"sync"
	"time"
)

// Pipes are the host's ends of a tap run beside its caller (Start): In is
// what the host writes, Out what it reads, Err where the server's stderr
// goes, as Run takes them. After, when not nil, runs once Run has
// returned, before Done is closed: it closes what the caller's host
// reads, say.
type Pipes struct {
	In    io.Reader
	Out   io.WriteCloser
	Err   io.Writer
	After func()
}

// A Running is a tap whose session runs in a goroutine of its own, beside
// the caller that started it (a view, a demo's host, a replay).
type Running struct {
	tap  *Tap
	done chan struct{}
	res  Result // set before done is closed
	err  error

	warn     func(string) // the Warn of its options
	mu       sync.Mutex
	warnings []string
}

// Start makes a tap with opts and runs its session in a goroutine (see
// Tap.Start).
func Start(ctx context.Context, opts Options, p Pipes) (*Running, error) {
	t, err := New(opts)
	if err != nil {
		return nil, err
	}
	return t.Start(ctx, p), nil
}

// Start runs the tap's session in a goroutine: Run with p's ends, then
// p.After. What the tap warns of is kept, in order (Warnings), and still
// passed to the Warn of its options. A tap is started once, and not also
// Run.
func (t *Tap) Start(ctx context.Context, p Pipes) *Running {
	r := &Running{tap: t, done: make(chan struct{}), warn: t.opts.Warn}
	t.opts.Warn = r.Warn
	go func() {
		res, err := t.Run(ctx, p.In, p.Out, p.Err)
		if p.After != nil {
			p.After()
		}
		r.res, r.err = res, err
		close(r.done)
	}()
	return r
}

// Tap is the running tap (its ID, Note, Inject, EndHolding).
func (r *Running) Tap() *Tap { return r.tap }

// Done is closed once Run has returned and Pipes.After has run.
func (r *Running) Done() <-chan struct{} { return r.done }

// Wait waits for the session's end and says how it ended, as Run does.
func (r *Running) Wait() (Result, error) {
	<-r.done
	return r.res, r.err
}

// WaitFor waits for the session's end at most d, and reports whether it
// ended.
func (r *Running) WaitFor(d time.Duration) bool {
	select {
	case <-r.done:
		return true
	default:
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-r.done:
		return true
	case <-tm.C:
		return false
	}
}

// Warn keeps msg among what the tap warns of, in order, and passes it to
// the Warn of the tap's options, as the tap's own warnings are: what the
// host played beside the tap warns of is said with them.
func (r *Running) Warn(msg string) {
	r.mu.Lock()
	r.warnings = append(r.warnings, msg)
	r.mu.Unlock()
	r.warn(msg)
}

// Warnings are what the tap has warned of so far, with what Warn was
// given, in order. They may be
// read while the tap runs.
func (r *Running) Warnings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.warnings...)
}

// Path is the session file the session was recorded to, once Done is
// closed; "" before, and when no file was written (Result.Path).
func (r *Running) Path() string {
	select {
	case <-r.done:
		return r.res.Path
	default:
		return ""
	}
}
