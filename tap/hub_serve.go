package tap

import (
	"errors"
	"io"
	"strconv"
)

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
