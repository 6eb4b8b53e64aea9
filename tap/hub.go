package tap

import (
	"errors"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// A subscriber may fall behind the live feed by subQueue records or
// subQueueBytes of them, whichever comes first: past that it is cut off
// the feed (its records are not kept for it), and catches up from the
// session file instead, or, from a tap that records no file, is told how
// many frames it missed. So what the tap holds for a view that does not
// read is bounded, whatever the traffic (one record larger than the
// bound still goes to a view that has nothing queued).
const (
	subQueue      = 16384
	subQueueBytes = 8 << 20
)

// A hub fans the recorder's records out to live subscribers. Publishing
// never blocks: a subscriber that cannot keep up misses records, and then
// reads them back from the session file, or is told what it missed.
type hub struct {
	framing classify.Framing
	header  []byte // the header line
	path    string // the session file; "" when not recording

	n      atomic.Int32 // subscribers, for the recorder's fast path
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	offset int64  // bytes of the session file flushed and published
	last   []byte // the last record published (at the end, the exit)
	closed bool
	stats  Stats
	// settle flushes the recorder and holds it still until the returned
	// func is called (nil in tests of the hub alone).
	settle func() (unlock func())
	// clock, when not nil, is the session's time now, in µs, for the
	// notes the hub writes itself.
	clock func() int64
	// meter says whether the tap is busy (nil: never), for the views
	// that follow it.
	meter *busyMeter
	// serving counts subscribers being served (added in attach, under mu,
	// while the session lasts), so the tap can let them
	// finish the last records before it exits.
	serving sync.WaitGroup
}

// Stats is what ls shows about a live tap.
type Stats struct {
	Frames int64 `json:"frames"`
	// Errors counts the peers' frames with an error, UserErrors the
	// frames with one that the user wrote (injected, edited), apart.
	Errors     int64 `json:"errors"`
	UserErrors int64 `json:"user_errors"`
	Pending    int   `json:"pending"`
}

type subscriber struct {
	// follow subscribers are told how far the session file is flushed
	// and read it themselves, with no per-record work in the recorder;
	// the others get each record annotated with its classification
	// through q.
	follow bool
	q      chan queued
	queued atomic.Int64  // bytes of the records in q
	wake   chan struct{} // a gap opened, or the session ended
	// gap is set when records were dropped; from is the file offset of
	// the first one, and missed counts the frames among them.
	gap    bool
	from   int64
	missed int64
	// pos is the file offset up to which the subscriber has every record,
	// queued or to be read from the file.
	pos  int64
	done bool // the session ended
	// served says the subscriber counts in hub.serving: one that attached
	// after the session ended does not, so that no Add races the tap's
	// Wait for the others.
	served bool
}

// A queued record, waiting for its subscriber.
type queued struct {
	line []byte
	kind recordKind
}

// What a line for subscribers holds.
type recordKind uint8

const (
	liveFrame  recordKind = iota // a frame's record
	liveEvent                    // an event's record
	liveOther                    // no record of the file (findings)
	liveMissed                   // a note in the place of a frame the view cannot get (see recorder.tooLarge)
)

func kindOf(p published) recordKind {
	switch {
	case p.missed:
		return liveMissed
	case p.seq == 0:
		return liveOther
	case p.frame:
		return liveFrame
	}
	return liveEvent
}

// frames is how many frames a line of this kind stands for: 1 or 0. A
// view that misses the note of a frame it cannot get misses that frame.
func (k recordKind) frames() int64 {
	if k == liveFrame || k == liveMissed {
		return 1
	}
	return 0
}

// record says whether a line of this kind is a record of the session
// (a frame's or an event's).
func (k recordKind) record() bool { return k == liveFrame || k == liveEvent }

// poke wakes the subscriber's server.
func (s *subscriber) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// openGap stops queueing records for s: it reads them from the file,
// starting at offset from, or is told how many frames it missed.
func (s *subscriber) openGap(from int64) {
	s.gap, s.from = true, from
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func newHub(framing classify.Framing) *hub {
	return &hub{framing: framing, subs: map[*subscriber]struct{}{}}
}

func (h *hub) listening() bool { return h.n.Load() > 0 }

// publish hands out a batch of records whose bytes end at file offset end.
func (h *hub) publish(lines []published, end int64, stats Stats) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stats = stats
	for s := range h.subs {
		if s.follow {
			s.poke()
			continue
		}
		for _, l := range lines {
			k := kindOf(l)
			switch q := s.queued.Load(); {
			case s.gap:
			case l.offset != s.pos:
				// Records were written that were not published (nobody
				// listened yet, or a frame too large): the file has them.
				s.openGap(s.pos)
			case q > 0 && q+int64(len(l.line)) > subQueueBytes:
				s.openGap(l.offset)
			default:
				select {
				case s.q <- queued{l.line, k}:
					s.queued.Add(int64(len(l.line)))
					s.pos = l.end
					continue
				default:
					s.openGap(l.offset)
				}
			}
			s.missed += k.frames()
		}
		if !s.gap && s.pos != end {
			s.openGap(s.pos)
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].seq > 0 {
			h.last = lines[i].line
			break
		}
	}
	h.offset = end
}

// advance records that the file grew without records for subscribers.
func (h *hub) advance(end int64, stats Stats) {
	h.mu.Lock()
	for s := range h.subs {
		if s.follow {
			s.poke()
			continue
		}
		if !s.gap && s.pos != end {
			s.openGap(s.pos)
		}
	}
	h.offset = end
	h.stats = stats
	h.mu.Unlock()
}

// attach adds a subscriber and returns the file offset its backlog ends at.
// The recorder's buffer is flushed first, under the recorder's lock, so
// every record after the backlog is published to the new subscriber: no
// gap opens at attach.
func (h *hub) attach(follow bool) (*subscriber, int64) {
	s := &subscriber{follow: follow, wake: make(chan struct{}, 1)}
	if !follow {
		s.q = make(chan queued, subQueue)
	}
	if h.settle != nil {
		unlock := h.settle()
		defer unlock()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.done = true
	} else {
		s.served = true
		h.serving.Add(1)
	}
	h.subs[s] = struct{}{}
	if !follow {
		h.n.Add(1) // the recorder builds annotated records only for these
	}
	s.pos = h.offset
	return s, h.offset
}

func (h *hub) detach(s *subscriber) {
	if s.served {
		defer h.serving.Done()
	}
	h.mu.Lock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		if !s.follow {
			h.n.Add(-1)
		}
	}
	h.mu.Unlock()
}

// close tells every subscriber the session ended.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		s.done = true
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// take is the next record queued for s, if one is.
func (s *subscriber) take() (queued, bool) {
	select {
	case q := <-s.q:
		s.queued.Add(-int64(len(q.line)))
		return q, true
	default:
		return queued{}, false
	}
}

// serve streams the session to w: the header, the backlog from the file,
// then live records, catching up from the file after a gap. It returns when
// the session ends (after the last record) or w fails.
func (h *hub) serve(w io.Writer, stop <-chan struct{}) error {
	s, backlog := h.attach(false)
	stopping := false
	defer h.detach(s)
	if _, err := w.Write(h.header); err != nil {
		return err
	}
	if err := h.copyFile(w, int64(len(h.header)), backlog); err != nil {
		return err
	}
	for {
		if len(s.q) == 0 {
			// Nothing more is ready: what w holds goes out now.
			if err := flush(w); err != nil {
				return err
			}
		}
		select {
		case q := <-s.q:
			s.queued.Add(-int64(len(q.line)))
			if _, err := w.Write(q.line); err != nil {
				return err
			}
			continue
		case <-stop:
			// The session is over: finish with what is queued and
			// the file's tail, then end.
			stop, stopping = nil, true
		case <-s.wake:
		}
		// Drain what was queued before the gap or the end.
		for {
			q, ok := s.take()
			if !ok {
				break
			}
			if _, err := w.Write(q.line); err != nil {
				return err
			}
		}
		h.mu.Lock()
		gap, from, done, to := s.gap, s.from, s.done, h.offset
		if gap {
			s.gap, s.missed = false, 0 // records after `to` are queued again
			s.pos = to
		}
		h.mu.Unlock()
		if gap {
			note := `{"t":0,"event":"note","text":"this view fell behind the live session and caught up from the session file","gap":true,"offset":` + strconv.FormatInt(from, 10) + "}\n"
			if _, err := io.WriteString(w, note); err != nil {
				return err
			}
			if err := h.copyFile(w, from, to); err != nil {
				return err
			}
		}
		if (done || stopping) && len(s.q) == 0 {
			return nil
		}
	}
}

// liveWrite is how much serveLive gathers for one write to its view.
const liveWrite = 64 << 10

// serveLive streams a session that no file records to the view v: the
// header, then each record as it comes. A view that falls behind is cut
// off the feed past the subscriber's bound and, once it reads again, told
// how many frames it missed (there is no file to catch up from), in a
// note where they were. At the session's end a view that is not reading
// gets what it has room for, and then, in the room its socket keeps for
// it (see viewConn.send), a note of how many frames it missed and the
// last record (the exit), so that it never misses frames unawares. It
// returns when the session ends or the view fails.
func (h *hub) serveLive(v *viewConn, stop <-chan struct{}) error {
	s, _ := h.attach(false)
	defer h.detach(s)
	v.keepRoom()
	var out outbox
	if _, err := v.send(h.header); err != nil {
		return h.endLive(v, s, &out, err)
	}
	for {
		for len(out.b) < liveWrite {
			q, ok := s.take()
			if !ok {
				break
			}
			out.add(q)
		}
		if len(out.b) > 0 {
			n, err := v.send(out.b)
			if err != nil {
				out.sent = n
				return h.endLive(v, s, &out, err)
			}
			out.reset()
			continue
		}
		// Nothing was queued. A gap is told once what was queued before
		// it has gone (nothing is queued while it is open).
		h.mu.Lock()
		queued := len(s.q) > 0
		gap, missed, done := s.gap, s.missed, s.done
		tell := gap && !queued && !done
		if tell {
			s.gap, s.missed = false, 0 // records from now on are queued again
			s.pos = h.offset
		}
		h.mu.Unlock()
		switch {
		case tell:
			out.addNote(h.missedNote(missed), missed)
			continue
		case queued:
			continue
		case gap && done:
			// The session's end went with what was missed: the view
			// is told, and gets the last record.
			return h.endLive(v, s, &out, nil)
		case done:
			return nil
		}
		select {
		case q := <-s.q:
			s.queued.Add(-int64(len(q.line)))
			out.add(q)
		case <-stop:
			stop = nil
			h.mu.Lock()
			s.done = true
			h.mu.Unlock()
		case <-s.wake:
		}
	}
}

// An outbox is the records serveLive writes next, whole.
type outbox struct {
	b    []byte
	recs []queuedEnd
	sent int // bytes of b the view got, when a write failed
}

type queuedEnd struct {
	end  int // where the record ends in b
	kind recordKind
	told int64 // for a note of missed frames, how many it tells of
}

func (o *outbox) add(q queued) {
	o.b = append(o.b, q.line...)
	o.recs = append(o.recs, queuedEnd{end: len(o.b), kind: q.kind})
}

// addNote adds a note that tells of n missed frames.
func (o *outbox) addNote(note []byte, n int64) {
	o.b = append(o.b, note...)
	o.recs = append(o.recs, queuedEnd{end: len(o.b), kind: liveOther, told: n})
}

func (o *outbox) reset() { o.b, o.recs, o.sent = o.b[:0], o.recs[:0], 0 }

// endLive ends serveLive's stream after err (nil: after a gap that took
// the session's end with it). When the session is over and the view has
// no room for the rest (errViewStuck), the frames it will not get are
// counted (those of out past what it got, those still queued and those
// its gap dropped), and the view gets the count and the session's last
// record, in the room its socket keeps for that.
func (h *hub) endLive(v *viewConn, s *subscriber, out *outbox, err error) error {
	if err != nil && !errors.Is(err, errViewStuck) {
		return err // the view went away
	}
	var lost int64
	unsent := false // a record the view did not get, the last one among them
	torn := false   // the view got part of a record
	start := 0
	for _, r := range out.recs {
		if r.end > out.sent {
			lost += r.kind.frames() + r.told
			unsent = unsent || r.kind.record()
			torn = torn || start < out.sent
		}
		start = r.end
	}
	for {
		q, ok := s.take()
		if !ok {
			break
		}
		lost += q.kind.frames()
		unsent = unsent || q.kind.record()
	}
	h.mu.Lock()
	if s.gap {
		lost += s.missed
		unsent = true
	}
	last := h.last
	h.mu.Unlock()
	var b []byte
	if torn {
		b = append(b, '\n') // ends the record cut short, which the view skips
	}
	if lost > 0 {
		b = append(b, h.missedNote(lost)...)
	}
	if unsent {
		b = append(b, last...)
	}
	if len(b) > 0 {
		if _, werr := v.sendLast(b); err == nil {
			err = werr
		}
	}
	return err
}

// missedNote is the note that tells a view of a tap that records no file
// how many frames it missed, where they were.
func (h *hub) missedNote(n int64) []byte {
	var t int64
	if h.clock != nil {
		t = h.clock()
	}
	return appendMissedNote(nil, t, "this view fell behind the live session and missed "+count(n, "frame")+": this tap records no file to catch up from", n)
}

// appendMissedNote appends a note at t (µs on the session clock) that
// tells a view it missed n frames, in text (the tap's own words, no
// peer's: it is written as it is).
func appendMissedNote(dst []byte, t int64, text string, n int64) []byte {
	dst = append(dst, `{"t":`...)
	dst = strconv.AppendInt(dst, t, 10)
	dst = append(dst, `,"event":"note","text":"`...)
	dst = append(dst, text...)
	dst = append(dst, `","gap":true,"missing":`...)
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, "}\n"...)
}

// followEvery is the shortest time between two notes to a view that
// follows the session file, while the tap is busy. Every observer waits
// while the tap is busy, so it needs to hear only that the tap still is,
// well within busyFor: each note wakes a goroutine of the tap and the
// observer's threads, times the number of observers.
const followEvery = 25 * time.Millisecond

// busyShare is how much of the time the tap's traffic may wait for its
// recorder (the relays' waits summed), over a busyWindow, before the tap
// tells its views that it is busy (a start-up hiccup of a few ms is not).
// busyCPU is how much of a core the tap's process may use over a window
// before it says so too: a tap that runs near flat out (a burst of
// requests and answers, whose relays never wait for the recorder) needs
// the machine's cores for itself and its peers, and on a small machine
// what its views take then is taken from the traffic. busyRunnable is
// how long, as a share of the window, its threads may wait for a CPU
// while they could run (summed): past it the machine is short of CPU for
// the tap, whatever takes it.
const (
	busyShare    = 0.25
	busyCPU      = 0.5
	busyRunnable = 0.25
	busyWindow   = 50 * time.Millisecond
)

// busyMeter judges, a busyWindow at a time, whether the tap is busy (see
// busyShare). Its verdict is shared by every view that follows the tap:
// one look at the clocks a window.
type busyMeter struct {
	waited func() time.Duration // nil: the traffic never waits
	// sched, when not nil, is the CPU the process has used and how long
	// its threads have waited for one (ok false: it cannot say).
	sched func() (cpu, runnable time.Duration, ok bool)
	now   func() time.Time // the clock windows are timed by
	mu    sync.Mutex
	since time.Time     // when the window began
	start time.Duration // waited() then
	cpu   time.Duration // and sched()'s
	run   time.Duration
	busy  bool // the verdict on the last whole window
}

func newBusyMeter(waited func() time.Duration, sched func() (cpu, runnable time.Duration, ok bool)) *busyMeter {
	m := &busyMeter{waited: waited, sched: sched, now: time.Now, since: time.Now()}
	if waited != nil {
		m.start = waited()
	}
	if sched != nil {
		m.cpu, m.run, _ = sched()
	}
	return m
}

// check returns the verdict on the last whole window, closing the window
// when it is over.
func (m *busyMeter) check() bool {
	if m == nil || m.waited == nil && m.sched == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if now := m.now(); now.Sub(m.since) >= busyWindow {
		span := float64(now.Sub(m.since))
		m.busy = false
		if m.waited != nil {
			w := m.waited()
			m.busy = float64(w-m.start) > busyShare*span
			m.start = w
		}
		if m.sched != nil {
			if c, r, ok := m.sched(); ok {
				m.busy = m.busy || float64(c-m.cpu) > busyCPU*span || float64(r-m.run) > busyRunnable*span
				m.cpu, m.run = c, r
			}
		}
		m.since = now
	}
	return m.busy
}

// processSched is what the process's threads have used of the CPU and
// how long they have waited for one, where the system says (schedTimes),
// else the CPU it has used alone.
func processSched() (cpu, runnable time.Duration, ok bool) {
	if cpu, runnable, ok = schedTimes(); ok {
		return cpu, runnable, true
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), 0, true
}

// serveFollow tells w how far the session file is written, as it grows:
// a line {"size":N} each time more of it is flushed (coalesced while w is
// slow, and to one every followEvery while the tap is busy), and
// {"size":N,"end":true} when the session is over. The subscriber reads
// the file itself, so it costs the tap one short line per flush, however
// many records that flush holds. A line says "busy":true while the tap is
// short of CPU (see busyMeter): a view on the same machine does well to
// wait rather than take more of it.
func (h *hub) serveFollow(w io.Writer, stop <-chan struct{}) error {
	s, pos := h.attach(true)
	defer h.detach(s)
	var line []byte
	meter := h.meter
	busy := false // what the last line said
	size := func(n int64, end bool) error {
		line = append(line[:0], `{"size":`...)
		line = strconv.AppendInt(line, n, 10)
		if end {
			line = append(line, `,"end":true`...)
		}
		if busy = meter.check(); busy {
			line = append(line, `,"busy":true`...)
		}
		line = append(line, "}\n"...)
		if _, err := w.Write(line); err != nil {
			return err
		}
		return flush(w)
	}
	if err := size(pos, false); err != nil {
		return err
	}
	var last time.Time // when the last note went out
	for {
		stopping := false
		select {
		case <-stop:
			stop, stopping = nil, true
		case <-s.wake:
			// While the tap is busy, notes go out at most every
			// followEvery: flushes come by the thousand a second when it
			// runs flat out, and each note wakes the view's threads and
			// the tap's. Otherwise each flush is told at once, so that a
			// view keeps up closely.
			if d := followEvery - time.Since(last); busy && d > 0 {
				select {
				case <-stop:
					stop, stopping = nil, true
				case <-time.After(d):
				}
			}
		}
		h.mu.Lock()
		to, done := h.offset, s.done
		h.mu.Unlock()
		if done || stopping {
			return size(max(pos, to), true)
		}
		if to > pos {
			pos = to
			if err := size(pos, false); err != nil {
				return err
			}
			last = time.Now()
		}
	}
}

// flush pushes out what w buffers, when it is a buffered writer.
func flush(w io.Writer) error {
	if f, ok := w.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// copyFile copies the session file's bytes [from, to) to w.
func (h *hub) copyFile(w io.Writer, from, to int64) error {
	if h.path == "" || to <= from {
		return nil
	}
	f, err := os.Open(h.path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, io.NewSectionReader(f, from, to-from))
	return err
}
