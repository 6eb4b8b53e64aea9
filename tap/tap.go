// Package tap is the relay: it runs the server, moves bytes both ways
// unchanged, splits them into frames for classification, records them, and
// serves live subscribers.
package tap

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/rpctap/rpctap/classify"
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
	// Transport is what the session header says of how the traffic
	// crossed: "" for stdio, sessions.TransportHTTP for the HTTP tap.
	Transport string

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

	// Answers, when set, receives each request injected toward the server
	// whose answer is kept from the host with no one waiting for it
	// (InjectOptions.Keep, as the view's composer and rpctap inject send),
	// with that answer's body, as the tap reads it: on a goroutine of its
	// own, once per request, never for an answer too large to hold or one
	// given back to the host (see captureSet.release). rpctap's own host
	// reads them to carry on the calls the user composed (a multi
	// round-trip call's retry).
	Answers func(request, answer []byte)
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
	// send sends a frame injected into a Feed's session toward each
	// direction's receiver (Feed.OnInject); under mu.
	send [3]func(body []byte) error

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
