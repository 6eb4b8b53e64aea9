package tap

import (
	"sync"
	"sync/atomic"

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
	// attached, when not nil, is called as a subscriber attaches, before
	// its backlog is settled: the recorder begins noting (see
	// recorder.begin).
	attached func()
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
	if h.attached != nil {
		h.attached()
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
