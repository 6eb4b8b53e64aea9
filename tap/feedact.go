package tap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// Acting on a Feed's session: the caller (the HTTP tap) moves the bytes,
// so it sends what the user injects (OnInject) and asks before it relays
// a frame whether the user holds it (Hold); the tap keeps the captures,
// the hold queues and the views, as it does for a pipe.

// errForwardHTTP refuses an injected request whose answer would go on to
// the host of an HTTP tap.
var errForwardHTTP = errors.New("over HTTP the answer to an injected request comes back on the tap's own request, so it cannot go on to the host: send it with its answer captured (without --forward, or ctrl+s in the composer)")

// setUpHolding gives the hold queues of a Feed their destinations: none
// is written to (the caller relays a frame once it is decided), and each
// frame that leaves a queue is recorded.
func (t *Tap) setUpHolding() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.capture[classify.S2H] = newCaptureSet()
	t.capture[classify.H2S] = newCaptureSet()
	for _, dir := range []classify.Direction{classify.H2S, classify.S2H} {
		t.intercept.dirs[dir].dst = &dest{dir: dir, w: io.Discard, note: t.rec.note}
	}
}

// OnInject sets how a frame the user injects is sent: toServer sends
// body as a request of the caller's own, after recording it (Injected),
// and records the frames its answer carries (Captured); toHost writes it
// to the host where its stream is between two frames, and records it.
// Their errors say why it could not be sent. Until it is set, a frame to
// inject is refused.
func (f *Feed) OnInject(toServer, toHost func(body []byte) error) {
	f.t.mu.Lock()
	f.t.send[classify.H2S], f.t.send[classify.S2H] = toServer, toHost
	f.t.mu.Unlock()
}

// Capturing reports whether the answers to requests the user injected
// toward dir's sender are awaited: the caller offers each frame that
// comes toward dir to Take first.
func (f *Feed) Capturing(dir classify.Direction) bool {
	set := f.t.capture[dir]
	return set != nil && set.active()
}

// Take reports whether body, which came toward dir, answers a request the
// user injected toward its sender: then it is recorded, captured, and
// handed to whoever waits for it, and the caller keeps it from its
// receiver.
func (f *Feed) Take(dir classify.Direction, body []byte, h *sessions.HTTPInfo) bool {
	at := now()
	if set := f.t.capture[dir]; set == nil || !set.take(body, at) {
		return false
	}
	f.t.rec.note(item{at: at, dir: dir, data: body, whole: true, captured: true, http: h})
	return true
}

// Injected records a frame the user injected toward dir's receiver, sent
// by the caller, with what HTTP said of it.
func (f *Feed) Injected(dir classify.Direction, body []byte, h *sessions.HTTPInfo) {
	f.t.rec.note(item{at: now(), dir: dir, data: body, whole: true, src: sessions.SrcInject, http: h})
}

// Captured records a frame of the answer to a request the caller sent of
// its own (an injected one), which its receiver never reads, and hands
// it to whoever waits for that answer.
func (f *Feed) Captured(dir classify.Direction, body []byte, h *sessions.HTTPInfo) {
	at := now()
	if set := f.t.capture[dir]; set != nil && set.active() && body != nil {
		set.take(body, at)
	}
	f.t.rec.note(item{at: at, dir: dir, data: body, whole: true, captured: true, http: h})
}

// injectHTTP sends a frame the user injects through the caller of Feed:
// toward the server as a request of its own, whose answer never reaches
// the host; toward the host into a stream open to it, and the host's
// answer to a request is kept from the server when captured.
func (t *Tap) injectHTTP(dir classify.Direction, body []byte, o InjectOptions) (InjectResult, error) {
	t.mu.Lock()
	send, set := t.send[dir], t.capture[dir.Opposite()]
	t.mu.Unlock()
	switch {
	case send == nil:
		return InjectResult{}, errors.New("the session has not started")
	case len(bytes.TrimSpace(body)) == 0:
		return InjectResult{}, errors.New("the frame is empty: give the JSON-RPC message to send")
	}
	m := classify.Classify(body, dir, classify.JSONRPC)
	var res InjectResult
	if m.HasID() {
		res.ID = string(m.ID().Raw)
	}
	switch {
	case m.Kind == classify.KindRequest && !o.Capture && dir == classify.H2S:
		return InjectResult{}, errForwardHTTP
	case o.Capture && !o.Keep && m.Kind != classify.KindRequest:
		return InjectResult{}, errCaptureNone(m.Kind)
	case m.Kind == classify.KindRequest && o.Capture:
		var err error
		res.key, res.set = m.ID().Key(), set
		if res.Reply, err = set.add(res.key); err != nil {
			return InjectResult{}, err
		}
	}
	res.Sent = now()
	if err := send(body); err != nil {
		res.cancel()
		return InjectResult{}, err
	}
	if o.Keep && res.Reply != nil && t.opts.Answers != nil && dir == classify.H2S {
		go toldAnswer{request: bytes.Clone(body), answer: res.Reply}.tell(t.opts.Answers)
	}
	return res, nil
}

// errCaptureNone refuses to wait for the answer to a frame that gets none.
func errCaptureNone(k classify.Kind) error {
	return fmt.Errorf("--capture waits for the answer to a request, and this is %s, which gets no answer; send it without --capture, or make it a request with an id, as in: {\"jsonrpc\":\"2.0\",\"id\":\"rpctap-1\",\"method\":\"ping\"}", kindPhrase(k))
}

// A Held is what became of a frame the user held (Feed.Hold).
type Held struct {
	How string // a sessions.Held… outcome
	// Body is what goes on to the receiver: the frame as it came, or the
	// user's edit; nil when it was dropped or answered.
	Body []byte
	// Reply is the user's answer, in the receiver's place, to a frame
	// answered: the caller gives it to the sender, and records it
	// (Injected).
	Reply []byte
	// Relayed is the caller's to call once it has handed the frame on (or
	// decided it goes nowhere): the frame held after it waits for that,
	// so that held frames reach their receiver in order. It may be called
	// more than once.
	Relayed func()
}

// Holding reports whether a frame toward dir must be offered to Hold
// now: a filter is set, or frames are held.
func (f *Feed) Holding(dir classify.Direction) bool { return f.t.intercept.dirs[dir].engaged() }

// Hold offers a whole frame that crossed toward dir, not yet relayed, to
// the intercept. When the filter holds it, or a held frame is ahead of
// it, Hold records it once it is decided (held by the user, as on a pipe:
// hold time, order per direction, views that go) and returns what goes
// on, with true. Otherwise it returns false at once: the caller records
// it (Frame) and relays it.
func (f *Feed) Hold(dir classify.Direction, body []byte, h *sessions.HTTPInfo) (Held, bool) {
	hf := f.t.intercept.dirs[dir].holdWhole(body, h)
	if hf == nil {
		return Held{}, false
	}
	<-hf.gone
	if hf.after != nil {
		<-hf.after
	}
	var once sync.Once
	out := Held{How: hf.how, Relayed: func() { once.Do(func() { close(hf.relayed) }) }}
	switch hf.how {
	case sessions.HeldDropped:
	case sessions.HeldAnswered:
		if hf.reply != nil {
			out.Reply = hf.reply.parts[0].body
		}
	case sessions.HeldEdited:
		out.Body = hf.editBody
	default:
		out.Body = hf.body
	}
	return out, true
}

// holdWhole is offer for a frame handed over whole (see Feed.Hold): the
// frame held, or nil when it goes on at once.
func (h *holdQueue) holdWhole(body []byte, hi *sessions.HTTPInfo) *heldFrame {
	at := now()
	m := classify.Classify(body, h.dir, h.ic.profile())
	h.ic.remember(h.dir, &m)
	h.dst.mu.Lock()
	defer h.dst.release()
	h.mu.Lock()
	match := !h.closing && h.filter != nil && h.filter.Match(h.ic.filterFrame(h.dir, &m, body))
	if h.closing || !match && len(h.q) == 0 {
		h.mu.Unlock()
		return nil
	}
	hf := &heldFrame{n: h.ic.next.Add(1), dir: h.dir, wire: bytes.Clone(body), at: at, matched: match, http: hi, gone: make(chan struct{})}
	hf.body = hf.wire
	if len(h.q) >= maxHeldFrames || h.bytes+hf.cost() > maxHeldBytes {
		h.decideAllLocked(sessions.HeldOverflow)
		h.mu.Unlock()
		out := h.drainLocked()
		msg := fmt.Sprintf("the tap holds at most %d frames (%d MiB) a direction; it let the %d frames held %s go on as they were, and holds again from the next match", maxHeldFrames, maxHeldBytes>>20, len(out), h.dir.Toward())
		h.ic.t.opts.Warn(msg)
		go h.ic.tellReleased(out)
		go h.ic.tellNotice(msg)
		return nil
	}
	if match {
		hf.until = time.Now().Add(h.ic.timeout)
		n := hf.n
		hf.timer = time.AfterFunc(h.ic.timeout, func() { h.decide(n, sessions.HeldTimeout, nil) })
	} else {
		hf.decided, hf.how = true, sessions.HeldWaited
	}
	h.q = append(h.q, hf)
	hf.after, hf.relayed = h.relayed, make(chan struct{})
	h.relayed = hf.relayed
	hf.charged = hf.cost()
	h.bytes += hf.charged
	h.on.Store(true)
	h.ic.tellHeld(hf)
	h.mu.Unlock()
	return hf
}
