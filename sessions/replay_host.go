package sessions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// HostOptions configure PlayHost.
type HostOptions struct {
	// Ignore leaves paths out of the comparison of answers.
	Ignore Ignore
	// Timeout is how long each answer may take (default 10 s).
	Timeout time.Duration
	// Notifications compares the order of the server's notifications too.
	Notifications bool
	// Log, when not nil, is told what replay does, one line at a time.
	Log func(string)
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
	// maxChanges).
	Changes []Change
	// Recorded and Now are the answer's latency in the recording and in
	// the replay (0 when missing).
	Recorded, Now time.Duration
}

// A HostReport is what PlayHost found.
type HostReport struct {
	Calls []CallResult
	// Counts by outcome.
	Same, Changed, Missing, NewErrors int
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

// maxChanges bounds the differences kept for one answer, and
// maxDetailed the answers whose differences are kept: past it, an answer
// is only counted as changed, so that a report of a server that changed
// every answer of a long recording stays small.
const (
	maxChanges  = 20
	maxDetailed = 1000
)

// PlayHost plays the recorded host of the session file at path against a
// live server: it writes the host's frames to toServer (then closes it),
// reads the server's frames from fromServer, and compares each answer with
// the recorded one. It reads the recording as a stream: memory does not
// grow with its size, only with the report.
func PlayHost(ctx context.Context, path string, fromServer FrameSource, toServer io.WriteCloser, opts HostOptions) (*HostReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open the recording: %w (rpctap ls lists recent sessions)", err)
	}
	defer f.Close()
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	p := &player{opts: opts, to: toServer, answers: map[string]liveAnswer{}, asked: map[string][][]byte{},
		changed: make(chan struct{}), rep: &HostReport{}}
	rd := NewReader(f)
	hdr, _ := rd.Header()
	p.framing, _ = classify.ParseFraming(hdr.FramingOrDefault())
	if p.framing == classify.FramingAuto {
		p.framing = classify.FramingNDJSON
	}
	profile, _ := classify.ParseProfile(hdr.ProfileOrDefault())
	p.profile = profile
	readDone := make(chan error, 1)
	go func() { readDone <- p.readLive(fromServer) }()

	err = p.play(ctx, rd, hdr)
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

type liveAnswer struct {
	frame []byte
	at    time.Time
}

type player struct {
	opts    HostOptions
	to      io.Writer
	framing classify.Framing
	profile classify.Profile
	rep     *HostReport
	buf     []byte
	// detailed counts the answers whose changes are kept.
	detailed int

	mu sync.Mutex
	// answers holds the live server's answers by id key until the
	// recording reaches them; asked its requests by method, in order.
	answers map[string]liveAnswer
	asked   map[string][][]byte
	// liveNotes are the live server's notification methods.
	liveNotes []string
	ended     bool
	changed   chan struct{} // closed and replaced when the state changes

	recNotes []string
	methods  map[string]string
}

type serverReq struct {
	line   int64
	method string
}

// sent is a recorded request replayed, waiting for its answer.
type sent struct {
	index int // in rep.Calls
	key   string
	at    time.Time
	t     int64 // its time in the recording
}

func (p *player) log(format string, args ...any) {
	if p.opts.Log != nil {
		p.opts.Log(fmt.Sprintf(format, args...))
	}
}

func (p *player) intern(s string) string {
	if p.methods == nil {
		p.methods = map[string]string{}
	}
	return internIn(p.methods, s)
}

// internIn returns the copy of s kept in seen, keeping s when there is none.
func internIn(seen map[string]string, s string) string {
	if v, ok := seen[s]; ok {
		return v
	}
	seen[s] = s
	return s
}

// play walks the recording and sends the host's part.
func (p *player) play(ctx context.Context, rd *Reader, hdr Header) error {
	// The recording's requests in flight, by their ids' keys (each side
	// has its ids): the host's, replayed, and the server's.
	requests := map[string]sent{}
	serverReqs := map[string]serverReq{}
	profile := p.profile
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the recording: %w", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if ev.Kind == EventNote && ev.Text == NoteFramingLSP {
			p.framing = classify.FramingLSP
			if profile == classify.Auto {
				profile = classify.LSP
			}
		}
		if ev.Kind == EventExit {
			return nil
		}
		if !ev.IsFrame() || ev.Dir == classify.Err || ev.Captured {
			continue
		}
		m := hdr.Classify(ev.Frame, ev.Dir, profile)
		var key string
		if m.HasID() {
			key = m.ID().Key()
		}
		if ev.Dir == classify.S2H {
			switch m.Kind {
			case classify.KindNotification:
				if p.opts.Notifications {
					p.recNotes = append(p.recNotes, p.intern(m.Method()))
				}
			case classify.KindRequest:
				serverReqs[key] = serverReq{line: int64(ev.Line), method: m.Method()}
			case classify.KindResponse:
				if s, ok := requests[key]; ok && m.HasID() {
					delete(requests, key)
					if err := p.await(ctx, s, ev); err != nil {
						return err
					}
				}
			}
			continue
		}
		// The host's frame.
		switch m.Kind {
		case classify.KindResponse:
			// The host answered a server request: answer the live one.
			if r, ok := serverReqs[key]; ok && m.HasID() {
				delete(serverReqs, key)
				if err := p.answerServer(ctx, r.method, r.line, ev); err != nil {
					return err
				}
			}
			continue
		case classify.KindRequest:
			p.rep.Calls = append(p.rep.Calls, CallResult{Line: int64(ev.Line), Method: p.intern(m.Method()), Name: calledName(&m), ID: string(m.ID().Raw), Outcome: OutcomeMissing})
			requests[key] = sent{index: len(p.rep.Calls) - 1, key: key, at: time.Now(), t: ev.T}
		}
		if err := p.send(ev.Frame, ev.Header); err != nil {
			return err
		}
	}
}

func (p *player) send(body, header []byte) error {
	p.buf = appendFramed(p.buf[:0], p.framing, body, header)
	if _, err := p.to.Write(p.buf); err != nil {
		return fmt.Errorf("writing to the server: %w", err)
	}
	return nil
}

// waitFor waits until cond (called with p.mu held) holds, the live
// server's output has ended, or the deadline passes.
func (p *player) waitFor(ctx context.Context, deadline time.Time, cond func() bool) (bool, error) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		p.mu.Lock()
		ok, ended, ch := cond(), p.ended, p.changed
		p.mu.Unlock()
		if ok || ended {
			return ok, nil
		}
		select {
		case <-ch:
		case <-timer.C:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// await waits for the live answer to a replayed request and compares it
// with the recorded one, ev.
func (p *player) await(ctx context.Context, s sent, ev *Event) error {
	c := &p.rep.Calls[s.index]
	c.Recorded = time.Duration(ev.T-s.t) * time.Microsecond
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
		p.log("line %d %s: no answer within %v", c.Line, esc(c.Method), p.opts.Timeout)
		return nil
	}
	c.Now = got.at.Sub(s.at)
	c.Outcome = OutcomeSame
	ha, okA := p.opts.Ignore.Hash(ev.Frame)
	hb, okB := p.opts.Ignore.Hash(got.frame)
	if okA && okB && ha == hb || !okA && !okB && bytes.Equal(ev.Frame, got.frame) {
		return nil
	}
	if p.detailed < maxDetailed {
		c.Changes = p.opts.Ignore.Diff(ev.Frame, got.frame, maxChanges)
		if len(c.Changes) == 0 {
			return nil // equal once decoded (a number written otherwise)
		}
		p.detailed++
	}
	c.Outcome = OutcomeChanged
	recErr := classify.Member(ev.Frame, "error") != nil
	nowErr := classify.Member(got.frame, "error") != nil
	if nowErr && !recErr {
		c.Outcome = OutcomeNewError
	}
	p.log("line %d %s: %s", c.Line, esc(c.Method), c.Outcome)
	return nil
}

// answerServer sends the recorded host's answer to the live server's
// request of the same method (the first not answered yet).
func (p *player) answerServer(ctx context.Context, method string, line int64, ev *Event) error {
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
		p.rep.Calls = append(p.rep.Calls, CallResult{Line: line, Method: p.intern(method), Server: true, Outcome: OutcomeMissing})
		p.log("line %d: the server never asked %s", line, esc(method))
		return nil
	}
	return p.send(withID(ev.Frame, id), nil)
}

// readLive reads the live server's frames until they end.
func (p *player) readLive(in FrameSource) error {
	defer func() {
		p.mu.Lock()
		p.ended = true
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
	}()
	live := map[string]string{} // the live methods, interned apart from play's
	for {
		body, err := in.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		now := time.Now()
		m := classify.Classify(body, classify.S2H, p.profile)
		p.mu.Lock()
		switch m.Kind {
		case classify.KindResponse:
			if m.HasID() {
				p.answers[m.ID().Key()] = liveAnswer{frame: bytes.Clone(body), at: now}
			}
		case classify.KindRequest:
			method := m.Method()
			p.asked[method] = append(p.asked[method], bytes.Clone(m.ID().Raw))
		case classify.KindNotification:
			if p.opts.Notifications {
				p.liveNotes = append(p.liveNotes, internIn(live, m.Method()))
			}
		}
		close(p.changed)
		p.changed = make(chan struct{})
		p.mu.Unlock()
	}
}

// finish counts the outcomes and compares the notifications.
func (p *player) finish() {
	r := p.rep
	slices.SortStableFunc(r.Calls, func(a, b CallResult) int { return int(a.Line - b.Line) })
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
					n.Is = live[i]
				}
				break
			}
		}
	}
	r.Notifications = n
}
