package tap

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/filter"
	"github.com/rpctap/rpctap/sessions"
)

// Intercept: each direction has a filter, in the view's filter language. A
// relay holds a whole frame that matches it, instead of forwarding it,
// until a view decides what becomes of it: forward it as it is, forward
// other bytes in its place (edit), drop it, or answer it in its sender's
// place. The frames behind a held one in its direction wait behind it, so
// that each direction keeps its order; the other direction flows on.
//
// Hold is never forever. A held frame goes on as it was when its hold time
// runs out, when the last view that set the intercept goes away, or when
// the direction holds as much as it may (maxHeldFrames, maxHeldBytes: the
// tap's memory stays bounded whatever the peers send). The session file
// records each held frame where it left the tap, with what became of it.
//
// Concurrency: a holdQueue's relay adds frames to it; views and timers
// decide them, from their own goroutines. Frames leave the queue only from
// its head, and only while the queue's dest lock (dest.mu) is held, and the
// relay looks at the queue under that lock before it forwards a frame
// itself: so no frame overtakes a held one. Views are told of a frame held
// under the queue's lock (h.mu), and an attaching view lists the frames
// held under both queues' locks: so each view hears of every frame held
// once, and before it hears that the frame went. Locks are taken in the
// order dest.mu, holdQueue.mu (h2s before s2h), interceptor.vmu.

// DefaultHoldTimeout is how long a frame is held when the tap is given no
// hold time.
const DefaultHoldTimeout = 60 * time.Second

// Bounds on what one direction holds. Past them the tap lets every held
// frame of the direction go on as it was, and says so.
const (
	maxHeldFrames = 1024
	maxHeldBytes  = 16 << 20
	// heldFrameCost is what holding a frame costs besides its bytes.
	heldFrameCost = 256
	// maxHeldViews bounds the views that may intercept at once.
	maxHeldViews = 8
	// maxMethods bounds the requests whose method the tap remembers, per
	// direction, so that a filter on method holds their answers too.
	maxMethods = 4096
)

// An interceptor holds the intercept state of one tap.
type interceptor struct {
	t       *Tap
	timeout time.Duration
	base    [3]string // the filters the tap was started with, by direction
	dirs    [3]*holdQueue
	next    atomic.Int64 // numbers held frames, from 1, across both directions

	// fmu orders the changes views make to the filters: a view that
	// sets them and the last setter going away (which puts the tap's
	// own back) each decide and set them under it.
	fmu     sync.Mutex
	vmu     sync.Mutex // guards views, setters and exprs
	views   map[*holdView]struct{}
	setters int       // attached views that set the filters
	exprs   [3]string // the filters as written, by direction
}

// A holdQueue holds one direction's frames.
type holdQueue struct {
	ic  *interceptor
	dir classify.Direction
	dst *dest
	// on says a filter is set or frames are held: the relay's fast path
	// reads only this.
	on atomic.Bool

	mu      sync.Mutex
	emptied sync.Cond // signalled when q empties
	filter  *filter.Filter
	q       []*heldFrame
	bytes   int
	closing bool // the direction's stream ended: nothing more is held
	// relayed is that of the last frame held whole (heldFrame.relayed).
	relayed chan struct{}
	// methods remembers the methods of this direction's requests, by id,
	// for the other direction's filter (a response's method is its
	// request's).
	methods methodTable
}

// A heldFrame is a frame the tap holds, or one that waits behind it.
type heldFrame struct {
	n       int64
	dir     classify.Direction
	wire    []byte // the frame as read, framing included
	body    []byte // within wire
	header  []byte // within wire: the LSP header block, when not plain; nil
	at      time.Duration
	matched bool // held by the filter (else it waits behind one)
	until   time.Time
	timer   *time.Timer

	decided bool
	how     string // a sessions.Held… outcome
	edit    []byte // edited: the bytes to write, framing included
	// editBody is edit's body (within edit), as recorded.
	editBody []byte
	reply    *injection // answered: the reply, toward the sender
	// charged is what the frame counts for in its queue's bytes: its
	// cost when held, and its edit's bytes once edited.
	charged int
	// A frame handed over whole (Feed.Hold): what HTTP said of it, and
	// gone, closed once it has left the queue (its caller relays it).
	http *sessions.HTTPInfo
	gone chan struct{}
	// relayed is closed once the caller handed the frame on; after is
	// the relayed of the frame held before it, which it waits for.
	relayed, after chan struct{}
}

func (f *heldFrame) cost() int {
	c := len(f.wire) + heldFrameCost + len(f.edit)
	if f.reply != nil {
		c += len(f.reply.frame) // kept until the frame's turn comes, as an edit is
	}
	return c
}

// newInterceptor sets up holding for a tap, with the filters it was
// started with ("" holds nothing until a view sets one).
func newInterceptor(t *Tap, h2s, s2h string, timeout time.Duration) (*interceptor, error) {
	if timeout <= 0 {
		timeout = DefaultHoldTimeout
	}
	ic := &interceptor{t: t, timeout: timeout, views: map[*holdView]struct{}{}}
	ic.base[classify.H2S], ic.base[classify.S2H] = h2s, s2h
	for _, dir := range []classify.Direction{classify.H2S, classify.S2H} {
		h := &holdQueue{ic: ic, dir: dir}
		h.emptied.L = &h.mu
		ic.dirs[dir] = h
	}
	if err := ic.setFilters(h2s, s2h); err != nil {
		return nil, err
	}
	return ic, nil
}

// ParseIntercept checks an intercept filter, for flags: the error says
// what is wrong with it.
func ParseIntercept(expr string) error {
	_, err := parseHoldFilter(expr)
	return err
}

func parseHoldFilter(expr string) (*filter.Filter, error) {
	if expr == "" {
		return nil, nil
	}
	f, err := filter.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("the intercept filter %s: %w", classify.EscapeString(strconv.Quote(expr), 80), err)
	}
	if f.Uses("fate") {
		// What it judges is a peer's frame just read: not injected, not
		// captured (a captured answer is kept before it), not held yet.
		return nil, fmt.Errorf("the intercept filter %s tests fate:, which no frame has yet when the tap judges it (a frame's fate is what becomes of it after: the tap judges each frame as its peer wrote it, before holding it); drop the fate: token", classify.EscapeString(strconv.Quote(expr), 80))
	}
	return f, nil
}

// setFilters sets what each direction holds from now on ("" nothing);
// frames held already stay held.
func (ic *interceptor) setFilters(h2s, s2h string) error {
	fh, err := parseHoldFilter(h2s)
	if err != nil {
		return err
	}
	fs, err := parseHoldFilter(s2h)
	if err != nil {
		return err
	}
	ic.vmu.Lock()
	ic.exprs[classify.H2S], ic.exprs[classify.S2H] = h2s, s2h
	ic.vmu.Unlock()
	for dir, f := range map[classify.Direction]*filter.Filter{classify.H2S: fh, classify.S2H: fs} {
		h := ic.dirs[dir]
		h.mu.Lock()
		h.filter = f
		h.on.Store(f != nil || len(h.q) > 0)
		h.mu.Unlock()
	}
	return nil
}

// engaged reports whether the relay must offer its frames to the queue.
func (h *holdQueue) engaged() bool { return h != nil && h.on.Load() }

// offer is the relay's: it takes a whole frame (as read, framing included)
// that is not yet forwarded, with before, the frames read ahead of it and
// not yet forwarded either. It reports whether it took the frame: then
// before has been forwarded and the frame is held (or, past the bounds,
// forwarded). Otherwise nothing was written.
func (h *holdQueue) offer(r *relay, before, frame []byte, info classify.FrameInfo, at time.Duration) bool {
	body := info.Body(frame)
	m := classify.ClassifyFramed(body, info, h.dir, h.ic.profile())
	h.ic.remember(h.dir, &m)
	var fr *filter.Frame // what the filter sees, made once (it takes a response's method)
	judge := func(f *filter.Filter) bool {
		if f == nil {
			return false
		}
		if fr == nil {
			fr = h.ic.filterFrame(h.dir, &m, body)
		}
		return f.Match(fr)
	}
	h.mu.Lock()
	f, closing := h.filter, h.closing
	h.mu.Unlock()
	match := !closing && judge(f)

	r.dst.mu.Lock()
	h.mu.Lock()
	if h.filter != f && !closing {
		// The filter changed meanwhile (the view that set it went
		// away, and its frames went on): the one in force decides.
		match = judge(h.filter)
	}
	if closing || !match && len(h.q) == 0 {
		h.mu.Unlock()
		r.dst.mu.Unlock()
		return false
	}
	r.write(before, at)
	hf := &heldFrame{n: h.ic.next.Add(1), dir: h.dir, wire: bytes.Clone(frame), at: at, matched: match}
	if len(h.q) >= maxHeldFrames || h.bytes+hf.cost() > maxHeldBytes {
		// Past the bounds: every frame held goes on as it was, then
		// this one.
		h.decideAllLocked(sessions.HeldOverflow)
		h.mu.Unlock()
		out := h.drainLocked()
		r.write(frame, at)
		r.dst.release()
		msg := fmt.Sprintf("the tap holds at most %d frames (%d MiB) a direction; it let the %d frames held %s go on as they were, and holds again from the next match", maxHeldFrames, maxHeldBytes>>20, len(out), h.dir.Toward())
		h.ic.t.opts.Warn(msg)
		h.ic.tellReleased(out)
		h.ic.tellNotice(msg)
		return true
	}
	hf.body = info.Body(hf.wire)
	if info.HeaderLen > 0 && !info.PlainHeader {
		hf.header = hf.wire[:info.HeaderLen]
	}
	if match {
		hf.until = time.Now().Add(h.ic.timeout)
		n := hf.n
		hf.timer = time.AfterFunc(h.ic.timeout, func() { h.decide(n, sessions.HeldTimeout, nil) })
	} else {
		hf.decided, hf.how = true, sessions.HeldWaited
	}
	h.q = append(h.q, hf)
	hf.charged = hf.cost()
	h.bytes += hf.charged
	h.on.Store(true)
	// Told under h.mu: it leaves the queue only under h.mu, so no view
	// hears that it went before it hears that it is held.
	h.ic.tellHeld(hf)
	h.mu.Unlock()
	r.dst.release()
	return true
}

// errNotHeld says a view named a frame the tap does not hold.
var errNotHeld = errors.New("the tap holds no such frame (it went on already: its hold time ran out, or another view decided it)")

// decide settles what becomes of held frame n, with set (when not nil)
// filling in what the outcome needs, and lets every decided frame at the
// head of the queue go.
func (h *holdQueue) decide(n int64, how string, set func(*heldFrame) error) error {
	h.mu.Lock()
	var f *heldFrame
	for _, q := range h.q {
		if q.n == n {
			f = q
			break
		}
	}
	switch {
	case f == nil:
		h.mu.Unlock()
		return errNotHeld
	case f.decided && f.matched:
		h.mu.Unlock()
		return fmt.Errorf("frame %d is decided already (%s); it waits behind a frame held before it", n, f.how)
	case f.decided:
		h.mu.Unlock()
		return fmt.Errorf("frame %d is not held: it waits behind a held frame, and goes on when that one does", n)
	}
	if set != nil {
		edit, editBody, reply := f.edit, f.editBody, f.reply
		if err := set(f); err != nil {
			h.mu.Unlock()
			return err
		}
		// An edit or a reply stays in the tap as long as the frame does:
		// past the bound, one that would wait behind an undecided frame
		// is refused (one that goes at once is not).
		if grown := f.cost() - f.charged; grown > 0 && h.bytes+grown > maxHeldBytes && h.waitsLocked(f) {
			f.edit, f.editBody, f.reply = edit, editBody, reply
			h.mu.Unlock()
			return fmt.Errorf("the frames held %s and their edits and replies would pass %d MiB with this one; forward or drop the frames held before frame %d first, then try again", h.dir.Toward(), maxHeldBytes>>20, n)
		}
		h.bytes += f.cost() - f.charged
		f.charged = f.cost()
	}
	h.decideLocked(f, how)
	h.mu.Unlock()
	h.drain()
	return nil
}

// waitsLocked reports whether an undecided frame is ahead of f.
func (h *holdQueue) waitsLocked(f *heldFrame) bool {
	for _, q := range h.q {
		if q == f {
			return false
		}
		if !q.decided {
			return true
		}
	}
	return false
}

func (h *holdQueue) decideLocked(f *heldFrame, how string) {
	f.decided, f.how = true, how
	if f.timer != nil {
		f.timer.Stop()
	}
	if how != sessions.HeldEdited {
		f.edit, f.editBody = nil, nil
	}
}

// decideAllLocked lets every undecided frame go on as it was, saying how.
func (h *holdQueue) decideAllLocked(how string) {
	for _, f := range h.q {
		if !f.decided {
			h.decideLocked(f, how)
		}
	}
}

// releaseAll lets every held frame go on as it was, saying how.
func (h *holdQueue) releaseAll(how string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.decideAllLocked(how)
	h.mu.Unlock()
	h.drain()
}

// releaseLocked lets every held frame go on as it was, saying how and
// why; the caller holds dst.mu.
func (h *holdQueue) releaseLocked(how, why string) {
	h.mu.Lock()
	n := len(h.q)
	h.decideAllLocked(how)
	h.mu.Unlock()
	out := h.drainLocked()
	if n > 0 {
		msg := fmt.Sprintf("%s %s: the %d frames held before it went on as they were", why, h.dir.Toward(), len(out))
		h.ic.t.opts.Warn(msg)
		go h.ic.tellReleased(out)
		go h.ic.tellNotice(msg)
	}
}

// drain lets the decided frames at the head of the queue go, in order.
func (h *holdQueue) drain() {
	h.dst.mu.Lock()
	out := h.drainLocked()
	h.dst.release()
	h.ic.tellReleased(out)
}

// drainLocked is drain's work; the caller holds dst.mu.
func (h *holdQueue) drainLocked() []*heldFrame {
	var out []*heldFrame
	for {
		h.mu.Lock()
		if len(h.q) == 0 || !h.q[0].decided {
			if len(h.q) == 0 {
				h.on.Store(h.filter != nil)
				h.emptied.Broadcast()
			}
			h.mu.Unlock()
			return out
		}
		f := h.q[0]
		h.q[0] = nil
		h.q = h.q[1:]
		h.bytes -= f.charged
		h.mu.Unlock()
		h.emitLocked(f)
		out = append(out, f)
	}
}

// emitLocked records a frame that leaves the queue and does what was
// decided; the caller holds dst.mu.
func (h *holdQueue) emitLocked(f *heldFrame) {
	h.dst.boundary()
	at := now()
	it := item{at: at, dir: h.dir, data: f.body, header: f.header, whole: true, held: f.how, heldFor: at - f.at, http: f.http}
	if f.gone != nil {
		defer close(f.gone) // its caller relays what was decided
	}
	switch f.how {
	case sessions.HeldDropped:
		h.dst.record(it)
	case sessions.HeldAnswered:
		h.dst.record(it)
		if f.reply != nil && f.gone == nil {
			// Toward the sender, at its stream's next frame boundary;
			// its answer comes back on done, not waited for here (the
			// other direction's lock may be taken).
			other := h.ic.dirs[h.dir.Opposite()].dst
			other.inject(f.reply)
			go func(done chan error) {
				if err := <-done; err != nil {
					h.ic.tellNotice(fmt.Sprintf("the reply to frame %d could not be sent: %v", f.n, err))
				}
			}(f.reply.done)
		}
	case sessions.HeldEdited:
		it.data, it.header, it.src, it.original = f.editBody, nil, sessions.SrcEdit, f.body
		h.dst.record(it)
		h.dst.writeLocked(f.edit)
	default:
		h.dst.record(it)
		h.dst.writeLocked(f.wire)
	}
	h.dst.kicked()
}

// closeWait is the relay's, when its stream ends: nothing more is held,
// and it waits until every held frame has gone (each one's hold time
// bounds the wait).
func (h *holdQueue) closeWait() {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.closing = true
	for len(h.q) > 0 {
		h.emptied.Wait()
	}
	h.mu.Unlock()
}

// bodyOf is held frame n's body as it was read, nil when the queue does
// not hold it.
func (h *holdQueue) bodyOf(n int64) []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, f := range h.q {
		if f.n == n {
			return f.body
		}
	}
	return nil
}

// queueOf is the queue that holds frame n, nil when none does.
func (ic *interceptor) queueOf(n int64) *holdQueue {
	for _, dir := range []classify.Direction{classify.H2S, classify.S2H} {
		h := ic.dirs[dir]
		h.mu.Lock()
		for _, f := range h.q {
			if f.n == n {
				h.mu.Unlock()
				return h
			}
		}
		h.mu.Unlock()
	}
	return nil
}

// profile is what frames are judged by for filters: the tracker's profile
// as of the last frame recorded.
func (ic *interceptor) profile() classify.Profile {
	if ic.t.rec == nil {
		return classify.JSONRPC
	}
	return classify.Profile(ic.t.rec.profile.Load())
}

// remember notes a request's method by its id, for the other direction's
// filter; it forgets a response's request.
func (ic *interceptor) remember(dir classify.Direction, m *classify.Message) {
	switch {
	case m.Kind == classify.KindRequest && m.HasID():
		ic.dirs[dir].methods.put(m.ID().Key(), m.Method())
	}
}

// filterFrame is what a filter sees of a frame the tap has just read.
func (ic *interceptor) filterFrame(dir classify.Direction, m *classify.Message, body []byte) *filter.Frame {
	fr := &filter.Frame{Dir: dir, Kind: m.Kind, Method: m.Method(), Worst: m.Worst(), Payload: func() []byte { return body }}
	if m.HasID() {
		fr.ID = string(m.ID().Raw)
	}
	if m.Kind == classify.KindResponse && m.HasID() {
		fr.Method = ic.dirs[dir.Opposite()].methods.take(m.ID().Key())
	}
	fr.Codes = filter.CodesOf(m.Findings)
	return fr
}

// A methodTable remembers up to maxMethods request methods by id key; the
// oldest go first.
type methodTable struct {
	mu    sync.Mutex
	byKey map[string]string
	order []string
}

func (t *methodTable) put(key, method string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byKey == nil {
		t.byKey = map[string]string{}
	}
	if _, ok := t.byKey[key]; !ok {
		t.order = append(t.order, key)
	}
	t.byKey[key] = method
	if len(t.order) > maxMethods {
		delete(t.byKey, t.order[0])
		t.order = t.order[1:]
	}
}

func (t *methodTable) take(key string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.byKey[key]
	delete(t.byKey, key)
	return m
}

// endSession lets every frame still held go on as it was: the session is
// over.
func (ic *interceptor) endSession() {
	for _, dir := range []classify.Direction{classify.H2S, classify.S2H} {
		ic.dirs[dir].releaseAll(sessions.HeldEnded)
	}
}

// EndHolding stops holding frames and lets every frame held now go on as
// it was (recorded as detached): for a host that ends its session, whose
// last frames must not wait behind a held one.
func (t *Tap) EndHolding() {
	ic := t.intercept
	ic.setFilters("", "")
	for _, dir := range []classify.Direction{classify.H2S, classify.S2H} {
		ic.dirs[dir].releaseAll(sessions.HeldDetached)
	}
	ic.broadcast(ic.filtersLine())
}
