package classify

import (
	"cmp"
	"slices"
	"strconv"
	"time"
)

// This file holds the lives of the Tracker's flights (taken, landed,
// remembered once landed, evicted), the errors a strict receiver owes for
// frames it cannot take, the deadlines advance runs out, and the end of the
// session.

// newFlight takes a flight from the free list, or makes one.
func (t *Tracker) newFlight() *flight {
	n := len(t.free)
	if n == 0 {
		return &flight{}
	}
	f := t.free[n-1]
	t.free = t.free[:n-1]
	// Keep the key and id buffers: a reused flight allocates nothing.
	*f = flight{gen: f.gen, key: f.key[:0], id: f.id[:0], tokBuf: f.tokBuf}
	return f
}

// release puts a flight that is in no table back on the free list.
func (t *Tracker) release(f *flight) {
	f.state = released
	f.gen++
	f.newer = nil
	if len(t.free) < 1024 {
		t.free = append(t.free, f)
	}
}

// land takes a request out of flight. With no newer request holding its
// id, it stays in the table as a tombstone in state (answered or
// cancelled) for duplicate-response; otherwise, or with state released,
// it is dropped. Its fields stay readable until the next request.
func (t *Tracker) land(f *flight, state flightState) {
	t.nFlights--
	if f.flags&flLogLevel != 0 {
		t.mcp.logLevels--
	}
	if f.token != nil {
		t.tokens.del(f)
	}
	if head, _ := t.flights.getHashed(f.key, f.hash); head != f {
		for p := head; p != nil; p = p.newer {
			if p.newer == f {
				p.newer = f.newer
				break
			}
		}
		t.release(f)
		return
	}
	switch {
	case f.newer != nil:
		t.flights.put(f.newer)
		t.release(f)
	case state == released:
		t.flights.del(f)
		t.release(f)
	default:
		f.state = state
		t.remember(f)
	}
}

// remember keeps a tombstone in the ring, forgetting the oldest one.
func (t *Tracker) remember(f *flight) {
	old := t.ring[t.ringNext]
	if old.f != nil && old.f.gen == old.gen && old.f.state != flying && old.f.state != released {
		t.flights.del(old.f)
		t.release(old.f)
	}
	t.ring[t.ringNext] = ringEntry{f: f, gen: f.gen}
	t.ringNext = (t.ringNext + 1) % len(t.ring)
}

// evictOldest drops the request in flight that was sent first.
func (t *Tracker) evictOldest() {
	for t.sentHead < len(t.sent) {
		e := t.sent[t.sentHead]
		t.sent[t.sentHead] = ringEntry{}
		t.sentHead++
		if e.f.gen == e.gen && e.f.state == flying {
			t.dropUntracked(e.f)
			return
		}
	}
}

func (t *Tracker) dropUntracked(f *flight) {
	t.evictions++
	seq := f.seq
	t.land(f, released)
	t.emit(seq, CodeUntracked, Info, "Too many requests were in flight at once; rpctap stopped following this one, so its answer will show as unmatched.", 0)
}

// owe records a frame that a strict receiver must answer with an error.
func (t *Tracker) owe(seq int64, at time.Duration, m *Message) {
	o := &owed{seq: seq, dir: m.Dir}
	if d := t.opts.Timeout; d > 0 {
		o.deadline = at + d
	}
	if m.Answer.ID != nil {
		if len(t.owed)+t.owedOld >= t.opts.MaxInFlight {
			return // not followed: memory stays bounded in a flood
		}
		o.key = string(t.flightKey(m.Dir, m.ID()))
		if old, ok := t.owed[o.key]; ok && old.deadline > 0 {
			old.superseded = true
			t.owedOld++
		}
		t.owed[o.key] = o
	} else {
		list := append(t.unreadble[m.Dir-1], o)
		if len(list) > 64 {
			// Too many unreadable frames at once to link answers to:
			// forget the oldest (memory stays bounded in a flood).
			for _, old := range list[:len(list)-64] {
				old.done = true
			}
			list = append(list[:0:0], list[len(list)-64:]...)
		}
		t.unreadble[m.Dir-1] = list
	}
	if o.deadline > 0 {
		t.pushDeadline(deadlineEntry{at: o.deadline, o: o})
	}
}

// duplicateAnswer is the message of duplicate-response.
const duplicateAnswer = "The frame this answers was already answered; a receiver drops or misroutes the second answer."

// rememberAnswered keeps the key of an owed frame that got its error.
func (t *Tracker) rememberAnswered(k []byte, seq int64) {
	key := string(k)
	if _, ok := t.answered[key]; !ok {
		t.answeredKeys = append(t.answeredKeys, key)
	}
	t.answered[key] = seq
	if max := max(t.opts.MaxRemembered, 1); len(t.answeredKeys) > max {
		delete(t.answered, t.answeredKeys[0])
		t.answeredKeys = t.answeredKeys[1:]
	}
}

func (t *Tracker) settleOwed(k []byte) {
	if o, ok := t.owed[string(k)]; ok {
		o.done = true
		delete(t.owed, string(k))
	}
}

func (t *Tracker) advance(now time.Duration) {
	if now < t.now || t.ended {
		return
	}
	t.now = now
	for t.deadlines.Len() > 0 && t.deadlines[0].at <= now {
		e := t.deadlines.pop()
		switch {
		case e.f != nil:
			f := e.f
			if !e.live() {
				continue
			}
			f.timedOut = true
			t.emit(f.seq, CodeTimeout, Warn, "The request had no answer within "+durationText(t.timeoutFor(f.method))+".", 0)
		case e.o != nil:
			o := e.o
			if o.superseded {
				o.superseded = false
				t.owedOld--
			}
			if o.done {
				continue
			}
			o.done = true
			if o.key != "" && t.owed[o.key] == o {
				delete(t.owed, o.key)
			}
			if o.gapped {
				continue
			}
			msg := "The receiver did not answer this frame with an error, as a strict JSON-RPC peer must; it ignored it."
			if o.result {
				msg = "The receiver answered this frame with a result, as if it were valid; a strict JSON-RPC peer refuses it with an error."
			}
			t.emit(o.seq, CodeUnansweredInvalid, Info, msg, 0)
		}
	}
}

// End tells the tracker that the session ended at at: the server exited,
// so no answer can come any more either way. Timeouts due by then are
// reported first; then each request still in flight that its receiver
// owes an answer, and that has not timed out, is reported
// unanswered-at-end. The clock stops there: nothing times out after the
// session's end. The slice is reused by the next call.
func (t *Tracker) End(at time.Duration) []SessionFinding {
	t.findings = t.findings[:0]
	t.advance(at)
	t.unanswered(H2S, "The session ended with this request unanswered: the server exited with it owed.")
	t.unanswered(S2H, "The session ended with this request unanswered: the host had not answered it when the server exited.")
	t.ended = true
	t.eachConversation(func(c *Tracker) []SessionFinding { return c.End(at) })
	return t.findings
}

// OutputClosed tells the tracker that the stream in direction dir ended
// at at: its sender closed its output (the server its stdout, for S2H;
// the host the server's stdin, for H2S), so it can answer none of the
// requests sent to it. Timeouts due by then are reported first; then each
// of those requests still in flight, and not timed out, is reported
// unanswered-at-end. The slice is reused by the next call.
func (t *Tracker) OutputClosed(dir Direction, at time.Duration) []SessionFinding {
	t.findings = t.findings[:0]
	t.advance(at)
	switch dir {
	case S2H:
		t.unanswered(H2S, "The server closed its output with this request unanswered: no answer can come.")
	case H2S:
		t.unanswered(S2H, "The host closed the server's input with this request unanswered: no answer can come.")
	}
	t.eachConversation(func(c *Tracker) []SessionFinding { return c.OutputClosed(dir, at) })
	return t.findings
}

// unanswered reports the requests from dir still owed an answer as
// unanswered-at-end, oldest first, each once.
func (t *Tracker) unanswered(dir Direction, msg string) {
	n := len(t.findings)
	t.flights.each(func(head *flight) bool {
		for f := head; f != nil && f.state == flying; f = f.newer {
			if f.dir == dir && f.owedByPeer && !f.timedOut && !f.atEnd {
				f.atEnd = true
				t.emit(f.seq, CodeUnansweredAtEnd, Warn, msg, 0)
			}
		}
		return true
	})
	// The table keeps no order: the findings go oldest first, as their
	// requests were sent.
	slices.SortFunc(t.findings[n:], func(a, b SessionFinding) int { return cmp.Compare(a.Seq, b.Seq) })
}

// Gap tells the tracker that missing frames of direction dir are not in
// the record at seq (a gap record: the session file could not hold
// them), the last of them at at. The gap gets finding frames-missing.
// Each request from the other side still in flight may have had its
// answer among them: it leaves flight (one answer may still come, and
// pairs), is judged neither timeout nor unanswered-at-end, and gets
// frames-missing (info) linking to the gap; so does a frame owed an
// error answer from that side, which is not judged unanswered-invalid.
// A later response whose request is in no record may answer one of the
// missing frames (see response). An MCP handshake whose step may be
// among them counts as done. Then the clock moves to at. The slice is
// reused by the next call.
func (t *Tracker) Gap(seq int64, dir Direction, missing int64, at time.Duration) []SessionFinding {
	t.findings = t.findings[:0]
	if dir != H2S && dir != S2H {
		if missing > 0 {
			t.emit(seq, CodeFramesMissing, Info, count(missing, "line")+" of the server's stderr"+are(missing)+"missing from the session file here (it had no room: a full disk, a size limit).", 0)
		}
		t.advance(at)
		return t.findings
	}
	t.gapSeq[dir] = seq
	from, to := "the host", "the server"
	if dir == S2H {
		from, to = to, from
	}
	t.emit(seq, CodeFramesMissing, Warn, count(missing, "frame")+" from "+from+are(missing)+"missing from the session file here (it had no room: a full disk, a size limit). The requests of "+to+" still waiting then may have been answered there: they are not judged unanswered.", 0)
	// The requests whose answers may be among them, oldest first.
	reqDir := dir.Opposite()
	var gone []*flight // gaps are rare: this may allocate
	t.flights.each(func(head *flight) bool {
		for f := head; f != nil && f.state == flying; f = f.newer {
			if f.dir == reqDir {
				gone = append(gone, f)
			}
		}
		return true
	})
	slices.SortFunc(gone, func(a, b *flight) int { return cmp.Compare(a.seq, b.seq) })
	n := len(t.findings)
	for _, f := range gone {
		if f.seq == t.initSeq && t.initState == 1 {
			t.initState = 2 // the answer to initialize may be among them
			if t.initialized {
				t.initState = 3
			}
		}
		fseq := f.seq
		t.land(f, gapped)
		t.emit(fseq, CodeFramesMissing, Info, "Its answer may be among the frames missing from the session file after it, or come later: it is not judged unanswered.", seq)
	}
	for _, o := range t.owed {
		if o.dir == reqDir && !o.done && !o.gapped {
			o.gapped = true
			t.emit(o.seq, CodeFramesMissing, Info, "Its error answer may be among the frames missing from the session file after it, or come later: it is not judged unanswered.", seq)
		}
	}
	for _, o := range t.unreadble[reqDir-1] {
		if !o.done && !o.gapped {
			o.gapped = true
			t.emit(o.seq, CodeFramesMissing, Info, "Its error answer may be among the frames missing from the session file after it, or come later: it is not judged unanswered.", seq)
		}
	}
	// The owed frames come from a map: in the order they were sent.
	slices.SortStableFunc(t.findings[n:], func(a, b SessionFinding) int { return cmp.Compare(a.Seq, b.Seq) })
	if dir == H2S && !t.discover {
		// The host's initialize, or its notifications/initialized, may
		// be among them: no request after them is judged early.
		t.initialized = true
		if t.initState == 0 || t.initState == 2 {
			t.initState = 3
		}
	}
	t.advance(at)
	return t.findings
}

// are is " is " for one, " are " for more.
func are(n int64) string {
	if n == 1 {
		return " is "
	}
	return " are "
}

// count is "1 frame", "2 frames".
func count(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.FormatInt(n, 10) + " " + what + "s"
}

// Pending calls fn for each request in flight, oldest first within an id,
// until fn returns false.
func (t *Tracker) Pending(fn func(PendingRequest) bool) {
	if t.convs != nil {
		for _, c := range t.convs.all {
			stop := false
			c.Pending(func(p PendingRequest) bool { stop = !fn(p); return !stop })
			if stop {
				return
			}
		}
	}
	t.flights.each(func(head *flight) bool {
		for f := head; f != nil && f.state == flying; f = f.newer {
			if !fn(PendingRequest{Seq: f.seq, Dir: f.dir, ID: string(f.id), Method: f.method, Sent: f.sent, Deadline: f.deadline, TimedOut: f.timedOut}) {
				return false
			}
		}
		return true
	})
}

// InFlight counts requests waiting for an answer.
func (t *Tracker) InFlight() int {
	n := t.nFlights
	if t.convs != nil {
		for _, c := range t.convs.all {
			n += c.nFlights
		}
	}
	return n
}

func durationText(d time.Duration) string {
	if d%time.Second == 0 {
		return itoa(int(d/time.Second)) + " s"
	}
	return d.String()
}
