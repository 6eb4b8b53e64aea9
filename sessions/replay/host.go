package replay

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// HostOptions configure PlayHost.
type HostOptions struct {
	// Ignore leaves paths out of the comparison of answers.
	Ignore sessions.Ignore
	// Timeout is how long each answer may take (default 10 s).
	Timeout time.Duration
	// Notifications compares the order of the server's notifications too.
	Notifications bool
	// Log, when not nil, is told what replay does, one line at a time.
	Log func(string)
	// Redactor masks the secrets the tap masks in its recording: a live
	// answer is compared masked (the recorded one was masked when it
	// was recorded), so that a secret neither counts as a difference nor
	// reaches the report.
	Redactor *sessions.Redactor
}

// Outcomes of a replayed request.
const (
	OutcomeSame     = "same"
	OutcomeChanged  = "changed"
	OutcomeMissing  = "missing"   // no answer within the timeout
	OutcomeNewError = "new error" // an error where the recording has a result
)

// A CallResult is what became of one recorded request replayed.
type CallResult struct {
	Line   int64  // the recorded request's line
	Method string // its method
	Name   string // the tool, prompt or resource it names (tools/call, prompts/get, resources/read)
	ID     string // its id as on the wire
	// Server says the request was the server's, answered by the host:
	// Missing then means the server never asked it.
	Server  bool
	Outcome string
	// Changes are the differences from the recorded answer (at most
	// sessions.MaxChanges).
	Changes []sessions.Change
	// Recorded and Now are the answer's latency in the recording and in
	// the replay (0 when missing); of a multi round-trip call, from its
	// first request to its final answer.
	Recorded, Now time.Duration
	// RecordedRounds and Rounds are the rounds of a multi round-trip call
	// (MCP 2026-07-28: answers input_required, then retries) in the
	// recording and in the replay; 0 for a request of no such call.
	RecordedRounds, Rounds int
}

// A HostReport is what PlayHost found.
type HostReport struct {
	Calls []CallResult
	// Counts by outcome.
	Same, Changed, Missing, NewErrors int
	// SameNotListed counts the requests answered the same that Calls
	// leaves out, past the first 10,000 (Same counts them).
	SameNotListed int
	// Retries counts the requests that retried a multi round-trip call,
	// each in the call its first request is in Calls.
	Retries int
	// Notifications, when compared: the server's notification methods in
	// the recording and now, and whether they came in the same order.
	Notifications *NotificationOrder
}

// NotificationOrder compares the server's notifications.
type NotificationOrder struct {
	Same          bool
	Recorded, Now int // how many
	// At is the position of the first difference, and Was and Is the
	// methods there ("" past the end).
	At      int
	Was, Is string
}

// Differs reports whether anything differs from the recording.
func (r *HostReport) Differs() bool {
	return r.Changed+r.Missing+r.NewErrors > 0 || r.Notifications != nil && !r.Notifications.Same
}

// PlayHost plays the recorded host of the session file at path against a
// live server: it writes the host's frames to toServer (then closes it),
// reads the server's frames from fromServer, and compares each answer with
// the recorded one. It reads the recording as a stream: memory does not
// grow with its size, only with the report. (HostConn does the same with
// no goroutine between the player and a tap.)
func PlayHost(ctx context.Context, path string, fromServer FrameSource, toServer io.WriteCloser, opts HostOptions) (*HostReport, error) {
	p, err := newPlayer(path, opts)
	if err != nil {
		return nil, err
	}
	p.to = toServer
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		p.readLive(fromServer)
	}()
	err = p.run(ctx)
	toServer.Close()
	if err != nil {
		return nil, err
	}
	select {
	case <-readDone:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.finish()
	return p.rep, nil
}

// newPlayer opens the recording at path.
func newPlayer(path string, opts HostOptions) (*player, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open the recording: %w (rpctap ls lists recent sessions)", err)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	p := &player{opts: opts, f: f, answers: map[string]liveAnswer{}, asked: map[string][][]byte{},
		requests: map[string]sent{}, serverReqs: map[string]serverReq{},
		wake: make(chan struct{}, 1), rep: &HostReport{}, live: map[string]string{}}
	p.rd = sessions.NewReader(f)
	p.hdr, _ = p.rd.Header()
	p.masked = recordedMasks(opts.Ignore, p.hdr, opts.Redactor, false)
	p.framings = p.hdr.Framings()
	p.profile, _ = classify.ParseProfile(p.hdr.ProfileOrDefault())
	return p, nil
}

// run plays the recording, then closes it; the caller closes p.to.
func (p *player) run(ctx context.Context) error {
	defer p.f.Close()
	p.timer = time.NewTimer(time.Hour)
	defer p.timer.Stop()
	err := p.play(ctx)
	if err == nil {
		err = p.flush()
	}
	p.compareQueued()
	// Requests the recording never saw answered stay missing.
	for _, s := range p.requests {
		p.addCall(s.call)
	}
	clear(p.requests)
	return err
}

// maxListedSame bounds the requests answered the same that the report
// lists one by one: past it they are only counted (HostReport.SameNotListed),
// so that memory does not grow with the recording.
const maxListedSame = 10_000

// addCall puts a request's result in the report.
func (p *player) addCall(c CallResult) {
	if c.Outcome == OutcomeSame {
		if p.listedSame >= maxListedSame {
			p.rep.SameNotListed++
			return
		}
		p.listedSame++
	}
	p.rep.Calls = append(p.rep.Calls, c)
}

type liveAnswer struct {
	frame []byte
	at    time.Time
}

type player struct {
	opts HostOptions
	f    *os.File
	rd   *sessions.Reader
	hdr  sessions.Header
	// masked is opts.Ignore with the recording's masks standing for any
	// text (recordedMasks), for the answers the recording masked.
	masked sessions.Ignore
	to     io.Writer
	// hx, when not nil, sends the host's messages over HTTP instead of
	// to (PlayHTTP), each with evHTTP, the http object of the record
	// play is at.
	hx       *httpHost
	evHTTP   []byte
	framings sessions.Framings // each direction's, as the recording says (h2s: what the player writes)
	profile  classify.Profile
	rep      *HostReport
	// detailed counts the answers whose changes are kept, listedSame
	// the requests answered the same in rep.Calls.
	detailed, listedSame int
	timer                *time.Timer

	// out holds the host's frames not written yet: those the recording
	// sent before the next answer it waited for go in one write.
	// unstamped are the keys of the requests in it, timed when written.
	out       []byte
	unstamped []string
	// gone says the server no longer reads: what follows is not sent,
	// and its answers are missing.
	gone bool
	line int // the recording's line play is at
	// The recording's requests in flight, by their ids' keys (each side
	// has its ids): the host's, replayed, and the server's.
	requests   map[string]sent
	serverReqs map[string]serverReq
	// queued are answers that differ from the recorded ones in their
	// bytes, to compare when the player next waits.
	queued []queuedAnswer
	// trips are the multi round-trip calls awaiting their next recorded
	// round, oldest first.
	trips []*roundTrip

	mu sync.Mutex
	// answers holds the live server's answers by id key until the
	// recording reaches them; asked its requests by method, in order.
	answers map[string]liveAnswer
	asked   map[string][][]byte
	// liveNotes are the live server's notification methods.
	liveNotes []string
	live      map[string]string // the live methods, interned apart from play's
	ended     bool
	free      [][]byte      // frame buffers to reuse
	wake      chan struct{} // poked when the state changes

	recNotes []string
	methods  map[string]string
}

type serverReq struct {
	line   int64
	method string
}

// sent is a recorded request replayed, waiting for its answer: its
// result is in the report once it has one.
type sent struct {
	call CallResult
	key  string
	at   time.Time
	t    int64 // its time in the recording
	// trip is the multi round-trip call the request retries (nil: none).
	trip *roundTrip
}

// A queuedAnswer is a live answer compared later with the recorded one.
type queuedAnswer struct {
	call          CallResult
	recorded, now []byte
	masked        bool // the recording masked a secret in recorded
}

func (p *player) log(format string, args ...any) {
	if p.opts.Log != nil {
		p.opts.Log(p.opts.Redactor.MaskString(fmt.Sprintf(format, args...)))
	}
}

func (p *player) intern(s string) string {
	if p.methods == nil {
		p.methods = map[string]string{}
	}
	return sessions.InternIn(p.methods, s)
}

func (p *player) poke() { poke(p.wake) }
