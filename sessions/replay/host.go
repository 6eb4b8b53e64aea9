package replay

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
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
	// the replay (0 when missing).
	Recorded, Now time.Duration
}

// A HostReport is what PlayHost found.
type HostReport struct {
	Calls []CallResult
	// Counts by outcome.
	Same, Changed, Missing, NewErrors int
	// SameNotListed counts the requests answered the same that Calls
	// leaves out, past the first 10,000 (Same counts them).
	SameNotListed int
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
	masked   sessions.Ignore
	to       io.Writer
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

// play walks the recording and sends the host's part.
func (p *player) play(ctx context.Context) error {
	profile := p.profile
	for {
		ev, err := p.rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the recording: %w", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.line = ev.Line
		if p.framings.Note(ev) {
			if profile == classify.Auto {
				profile = classify.LSP
			}
		}
		if ev.Kind == sessions.EventExit {
			return nil
		}
		frame, header, ok := sessions.ServerSide(ev)
		if !ok {
			continue
		}
		m := p.hdr.Classify(frame, ev.Dir, profile)
		if ev.Dir == classify.S2H {
			if err := p.recordedServer(ctx, ev, &m); err != nil {
				return err
			}
			continue
		}
		// The host's frame.
		switch m.Kind {
		case classify.KindResponse:
			// The host answered a server request: answer the live one.
			if err := p.recordedAnswer(ctx, ev, &m); err != nil {
				return err
			}
			continue
		case classify.KindRequest:
			p.sending(ev, &m)
		case classify.KindBatch:
			for i := range m.Members {
				if m.Members[i].Kind == classify.KindRequest {
					p.sending(ev, &m.Members[i])
				}
			}
		}
		if err := p.send(frame, header); err != nil {
			return err
		}
	}
}

// sending notes a host request about to be sent.
func (p *player) sending(ev *sessions.Event, m *classify.Message) {
	if !m.HasID() {
		return
	}
	key := m.ID().Key()
	c := CallResult{Line: int64(ev.Line), Method: p.intern(m.Method()), Name: sessions.CallName(m.Method(), m.Frame), ID: string(m.ID().Raw), Outcome: OutcomeMissing}
	if old, ok := p.requests[key]; ok {
		p.addCall(old.call) // an id used again before its answer: the first is never answered
	}
	p.requests[key] = sent{call: c, key: key, t: ev.T}
	p.unstamped = append(p.unstamped, key)
}

// recordedServer handles a server frame of the recording: an answer is
// waited for and compared, the rest noted. A batch is taken member by
// member, as the tracker pairs them.
func (p *player) recordedServer(ctx context.Context, ev *sessions.Event, m *classify.Message) error {
	switch m.Kind {
	case classify.KindNotification:
		if p.opts.Notifications {
			p.recNotes = append(p.recNotes, p.intern(m.Method()))
		}
	case classify.KindRequest:
		if m.HasID() {
			p.serverReqs[m.ID().Key()] = serverReq{line: int64(ev.Line), method: m.Method()}
		}
	case classify.KindResponse:
		if !m.HasID() {
			return nil
		}
		key := m.ID().Key()
		if _, ok := p.requests[key]; ok {
			// Written (and timed) before its answer is waited for.
			if err := p.flush(); err != nil {
				return err
			}
			s := p.requests[key]
			delete(p.requests, key)
			return p.await(ctx, s, ev.T, m.Frame, ev.Redacted)
		}
	case classify.KindBatch:
		for i := range m.Members {
			if err := p.recordedServer(ctx, ev, &m.Members[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordedAnswer handles the host's answer to a server request.
func (p *player) recordedAnswer(ctx context.Context, ev *sessions.Event, m *classify.Message) error {
	if !m.HasID() {
		return nil
	}
	key := m.ID().Key()
	r, ok := p.serverReqs[key]
	if !ok {
		return nil
	}
	delete(p.serverReqs, key)
	return p.answerServer(ctx, r.method, r.line, ev)
}

// send queues a host frame for the next write.
func (p *player) send(body, header []byte) error {
	p.out = appendFramed(p.out, p.framings.Of(classify.H2S), body, header)
	if len(p.out) >= 64<<10 {
		return p.flush()
	}
	return nil
}

// flush writes the queued frames in one write, and times the requests
// among them from now.
func (p *player) flush() error {
	if len(p.out) == 0 {
		return nil
	}
	var err error
	if !p.gone {
		_, err = p.to.Write(p.out)
	}
	p.out = p.out[:0]
	now := time.Now()
	for _, key := range p.unstamped {
		if s, ok := p.requests[key]; ok {
			s.at = now
			p.requests[key] = s
		}
	}
	p.unstamped = p.unstamped[:0]
	if err != nil {
		p.gone = true
		p.log("the server no longer reads its input (%v): what the recording has after line %d is not sent", err, p.line)
	}
	return nil
}

// waitFor waits until cond (called with p.mu held) holds, the live
// server's output has ended, or the deadline passes. What was queued is
// written first, and queued answers are compared while the server works.
func (p *player) waitFor(ctx context.Context, deadline time.Time, cond func() bool) (bool, error) {
	if err := p.flush(); err != nil {
		return false, err
	}
	armed := false
	defer func() {
		if armed {
			p.timer.Stop()
		}
	}()
	for {
		p.mu.Lock()
		ok, ended := cond(), p.ended
		p.mu.Unlock()
		if ok || ended {
			return ok, nil
		}
		if len(p.queued) > 0 {
			p.compareQueued()
			continue
		}
		if !armed {
			p.timer.Reset(time.Until(deadline))
			armed = true
		}
		select {
		case <-p.wake:
		case <-p.timer.C:
			armed = false
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// await waits for the live answer to a replayed request and compares it
// with the recorded one, frame, recorded at t (masked says the recording
// masked a secret in it).
func (p *player) await(ctx context.Context, s sent, t int64, frame []byte, masked bool) error {
	c := &s.call
	defer func() {
		if c != nil {
			p.addCall(*c)
		}
	}()
	c.Recorded = time.Duration(t-s.t) * time.Microsecond
	var got liveAnswer
	ok, err := p.waitFor(ctx, s.at.Add(p.opts.Timeout), func() bool {
		var ok bool
		if got, ok = p.answers[s.key]; ok {
			delete(p.answers, s.key)
		}
		return ok
	})
	if err != nil {
		return err
	}
	if !ok {
		p.mu.Lock()
		ended := p.ended
		p.mu.Unlock()
		if ended {
			p.log("line %d %s: no answer: the server's output has ended", c.Line, esc(c.Method))
		} else {
			p.log("line %d %s: no answer within %v", c.Line, esc(c.Method), p.opts.Timeout)
		}
		return nil
	}
	c.Now = got.at.Sub(s.at)
	c.Outcome = OutcomeSame
	if bytes.Equal(frame, got.frame) {
		p.release(got.frame)
		return nil
	}
	p.queued = append(p.queued, queuedAnswer{call: *c, recorded: bytes.Clone(frame), now: got.frame, masked: masked})
	c = nil // in the report once compared
	return nil
}

// compareQueued compares the answers that differ in their bytes.
func (p *player) compareQueued() {
	for i := range p.queued {
		q := &p.queued[i]
		p.compare(&q.call, q.recorded, q.now, q.masked)
		p.release(q.now)
		p.addCall(q.call)
	}
	clear(p.queued)
	p.queued = p.queued[:0]
}

// compare compares a live answer with the recorded one, whose bytes
// differ. Both are masked as replay masks (the recording may have been
// made with secrets it did not mask); a secret the recording masked
// (masked) stands for any value.
func (p *player) compare(c *CallResult, recorded, now []byte, masked bool) {
	recorded, _ = p.opts.Redactor.Mask(recorded)
	now, _ = p.opts.Redactor.Mask(now)
	if bytes.Equal(recorded, now) {
		return
	}
	ig := p.opts.Ignore
	if masked {
		ig = p.masked
	}
	ha, okA := ig.Hash(recorded)
	hb, okB := ig.Hash(now)
	if okA && okB && ha == hb {
		return
	}
	if p.detailed < sessions.MaxDetailed || masked {
		changes := ig.Diff(recorded, now, sessions.MaxChanges)
		if len(changes) == 0 {
			return // equal once decoded (a number written otherwise, a list in another order, a masked secret)
		}
		if p.detailed < sessions.MaxDetailed {
			c.Changes = changes
			p.detailed++
		}
	}
	c.Outcome = OutcomeChanged
	recErr := classify.Member(recorded, "error") != nil
	nowErr := classify.Member(now, "error") != nil
	if nowErr && !recErr {
		c.Outcome = OutcomeNewError
	}
	p.log("line %d %s: %s", c.Line, esc(c.Method), c.Outcome)
}

// release gives a live frame's buffer back for reuse.
func (p *player) release(b []byte) {
	p.mu.Lock()
	if len(p.free) < 256 {
		p.free = append(p.free, b[:0])
	}
	p.mu.Unlock()
}

// answerServer sends the recorded host's answer to the live server's
// request of the same method (the first not answered yet).
func (p *player) answerServer(ctx context.Context, method string, line int64, ev *sessions.Event) error {
	var id []byte
	ok, err := p.waitFor(ctx, time.Now().Add(p.opts.Timeout), func() bool {
		q := p.asked[method]
		if len(q) == 0 {
			return false
		}
		id, p.asked[method] = q[0], q[1:]
		return true
	})
	if err != nil {
		return err
	}
	if !ok {
		p.addCall(CallResult{Line: line, Method: p.intern(method), Server: true, Outcome: OutcomeMissing})
		p.log("line %d: the server never asked %s", line, esc(method))
		return nil
	}
	return p.send(withID(ev.Frame, id), nil)
}

// readLive reads the live server's frames until they end.
func (p *player) readLive(in FrameSource) {
	defer p.end()
	for {
		body, err := in.Next()
		if err != nil {
			return
		}
		p.deliver(body, time.Now())
		p.poke()
	}
}

// end marks the live server's output as ended.
func (p *player) end() {
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
	p.poke()
}

// deliver takes one frame of the live server, received at now (copied:
// body may be reused once it returns). The caller pokes the player.
func (p *player) deliver(body []byte, now time.Time) {
	m := classify.Classify(body, classify.S2H, p.profile)
	p.mu.Lock()
	p.take(&m, now)
	p.mu.Unlock()
}

// take files a live message, a batch member by member. p.mu is held.
func (p *player) take(m *classify.Message, now time.Time) {
	switch m.Kind {
	case classify.KindResponse:
		if m.HasID() {
			var buf []byte
			if n := len(p.free); n > 0 {
				buf, p.free = p.free[n-1], p.free[:n-1]
			}
			p.answers[m.ID().Key()] = liveAnswer{frame: append(buf, m.Frame...), at: now}
		}
	case classify.KindRequest:
		method := m.Method()
		p.asked[method] = append(p.asked[method], bytes.Clone(m.ID().Raw))
	case classify.KindNotification:
		if p.opts.Notifications {
			p.liveNotes = append(p.liveNotes, sessions.InternIn(p.live, m.Method()))
		}
	case classify.KindBatch:
		for i := range m.Members {
			p.take(&m.Members[i], now)
		}
	}
}

// finish counts the outcomes and compares the notifications.
func (p *player) finish() {
	r := p.rep
	slices.SortStableFunc(r.Calls, func(a, b CallResult) int { return cmp.Compare(a.Line, b.Line) })
	r.Same = r.SameNotListed
	for _, c := range r.Calls {
		switch c.Outcome {
		case OutcomeSame:
			r.Same++
		case OutcomeChanged:
			r.Changed++
		case OutcomeMissing:
			r.Missing++
		case OutcomeNewError:
			r.NewErrors++
		}
	}
	if !p.opts.Notifications {
		return
	}
	p.mu.Lock()
	live := p.liveNotes
	p.mu.Unlock()
	n := &NotificationOrder{Same: slices.Equal(p.recNotes, live), Recorded: len(p.recNotes), Now: len(live), At: -1}
	if !n.Same {
		for i := 0; ; i++ {
			if i >= len(p.recNotes) || i >= len(live) || p.recNotes[i] != live[i] {
				n.At = i
				if i < len(p.recNotes) {
					n.Was = p.recNotes[i]
				}
				if i < len(live) {
					n.Is = p.opts.Redactor.MaskString(live[i])
				}
				break
			}
		}
	}
	r.Notifications = n
}
