package tap

import (
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// subQueue is how many records a subscriber may fall behind before it is
// cut off the live feed and catches up from the session file instead.
const subQueue = 16384

// A hub fans the recorder's records out to live subscribers. Publishing
// never blocks: a subscriber that cannot keep up misses records, and then
// reads them back from the session file.
type hub struct {
	framing classify.Framing
	header  []byte // the header line
	path    string // the session file; "" when not recording

	n      atomic.Int32 // subscribers, for the recorder's fast path
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	offset int64 // bytes of the session file flushed and published
	closed bool
	stats  Stats
	// settle flushes the recorder and holds it still until the returned
	// func is called (nil in tests of the hub alone).
	settle func() (unlock func())
	// waited, when not nil, is how long in all the tap's traffic has
	// waited for the recorder (see intake.waited).
	waited func() time.Duration
	// serving counts subscribers being served (added in attach, under mu,
	// while the session lasts), so the tap can let them
	// finish the last records before it exits.
	serving sync.WaitGroup
}

// Stats is what ls shows about a live tap.
type Stats struct {
	Frames  int64 `json:"frames"`
	Errors  int64 `json:"errors"`
	Pending int   `json:"pending"`
}

type subscriber struct {
	// follow subscribers are told how far the session file is flushed
	// and read it themselves, with no per-record work in the recorder;
	// the others get each record annotated with its classification
	// through q.
	follow bool
	q      chan []byte
	wake   chan struct{} // a gap opened, or the session ended
	// gap is set when records were dropped; from is the file offset of
	// the first one.
	gap  bool
	from int64
	// pos is the file offset up to which the subscriber has every record,
	// queued or to be read from the file.
	pos  int64
	done bool // the session ended
	// served says the subscriber counts in hub.serving: one that attached
	// after the session ended does not, so that no Add races the tap's
	// Wait for the others.
	served bool
}

// poke wakes the subscriber's server.
func (s *subscriber) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// openGap stops queueing records for s: it reads them from the file,
// starting at offset from.
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
			if s.gap {
				break
			}
			if l.offset != s.pos {
				// Records were written that were not published (nobody
				// listened yet, or a frame too large): the file has them.
				s.openGap(s.pos)
				break
			}
			select {
			case s.q <- l.line:
				s.pos = l.end
			default:
				s.openGap(l.offset)
			}
		}
		if !s.gap && s.pos != end {
			s.openGap(s.pos)
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
		s.q = make(chan []byte, subQueue)
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
		case line := <-s.q:
			if _, err := w.Write(line); err != nil {
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
		for drained := false; !drained; {
			select {
			case line := <-s.q:
				if _, err := w.Write(line); err != nil {
					return err
				}
			default:
				drained = true
			}
		}
		h.mu.Lock()
		gap, from, done, to := s.gap, s.from, s.done, h.offset
		if gap {
			s.gap = false // records after `to` are queued again
			s.pos = to
		}
		h.mu.Unlock()
		if gap && h.path == "" {
			// No file to catch up from (a tap that records none): the
			// view is told what it missed, in bytes of records.
			note := `{"t":0,"event":"note","text":"this view fell behind the live session and missed ` + strconv.FormatInt(to-from, 10) +
				` bytes of records: this tap records no file to catch up from","gap":true,"offset":` + strconv.FormatInt(from, 10) + "}\n"
			if _, err := io.WriteString(w, note); err != nil {
				return err
			}
		} else if gap {
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

// followEvery is the shortest time between two notes to a view that
// follows the session file, while the tap is busy. Every observer waits
// while the tap is busy, so it needs to hear only that the tap still is,
// well within busyFor: each note wakes a goroutine of the tap and the
// observer's threads, times the number of observers.
const followEvery = 25 * time.Millisecond

// busyShare is how much of the time the tap's traffic may wait for its
// recorder (the relays' waits summed), over a busyWindow, before the tap
// tells its views that it is busy (a start-up hiccup of a few ms is not).
const (
	busyShare  = 0.25
	busyWindow = 50 * time.Millisecond
)

// busyMeter judges, a busyWindow at a time, whether the tap's traffic
// waits for its recorder more than busyShare of the time.
type busyMeter struct {
	waited func() time.Duration // nil: never busy
	since  time.Time            // when the window began
	start  time.Duration        // waited() then
	busy   bool                 // the verdict on the last whole window
}

func newBusyMeter(waited func() time.Duration) *busyMeter {
	m := &busyMeter{waited: waited, since: time.Now()}
	if waited != nil {
		m.start = waited()
	}
	return m
}

// check returns the verdict on the last whole window, closing the window
// when it is over.
func (m *busyMeter) check() bool {
	if m.waited == nil {
		return false
	}
	if now := time.Now(); now.Sub(m.since) >= busyWindow {
		w := m.waited()
		m.busy = float64(w-m.start) > busyShare*float64(now.Sub(m.since))
		m.since, m.start = now, w
	}
	return m.busy
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
	meter := newBusyMeter(h.waited)
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
