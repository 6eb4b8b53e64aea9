package tap

import (
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// followEvery is the shortest time between two notes to a view that
// follows the session file, while the tap is busy. Every observer waits
// while the tap is busy, so it needs to hear only that the tap still is:
// each note wakes a goroutine of the tap and the observer's threads,
// times the number of observers.
const followEvery = 100 * time.Millisecond

// busyRecheck is how long after a note that said busy, with no flush
// since, the tap looks again and tells its view whether it still is:
// a view holds back until told (or busyHold passes), so a tap whose
// traffic stopped says so within a window or two.
const busyRecheck = 2 * busyWindow

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
	timer := time.NewTimer(busyRecheck)
	defer timer.Stop()
	for {
		stopping := false
		var recheck <-chan time.Time
		if busy {
			timer.Reset(busyRecheck)
			recheck = timer.C
		}
		select {
		case <-stop:
			stop, stopping = nil, true
		case <-recheck:
			// No flush since a note that said busy: say again whether the
			// tap is, so that its views do not wait on a stale verdict.
			if err := size(pos, false); err != nil {
				return err
			}
			continue
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
