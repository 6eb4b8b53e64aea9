package sessions

import (
	"math"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// Add indexes the next record, read from the file at offset (-1 when
// unknown). Records must come in file order: a record whose line is not
// after the last one added is ignored. Add classifies a frame, runs the
// tracker, and marks earlier entries the record pairs with or brings a
// session finding about. It keeps nothing of ev.
func (x *Index) Add(ev *Event, offset int64) {
	x.mu.Lock()
	x.add(ev, offset, nil)
	x.mu.Unlock()
}

// Advance moves the tracker's clock to now (since the session started),
// for a live session: requests past their timeout are marked.
func (x *Index) Advance(now time.Duration) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.tr == nil {
		x.startTracker()
	}
	x.session(x.tr.Advance(now))
}

// add indexes a record. pre, when not nil, is the frame classified ahead
// of time by the profile then known; it is used when that is still the
// tracker's profile.
func (x *Index) add(ev *Event, offset int64, pre *classify.Message) {
	seq := int64(ev.Line)
	if seq <= x.lastSeq {
		return
	}
	x.lastSeq = seq
	if x.tr == nil {
		x.startTracker()
	}
	e := x.newEntry(ev, seq, offset)
	x.counts.Entries++
	at := time.Duration(ev.T) * time.Microsecond
	if !ev.IsFrame() || ev.Dir == classify.Err {
		x.addEvent(ev, e, seq, at)
		return
	}
	x.addFrame(ev, e, seq, at, pre)
}

// newEntry is the entry of record ev, line seq, read at offset, with what
// the record says of itself.
func (x *Index) newEntry(ev *Event, seq, offset int64) entry {
	e := entry{seq: seq, offset: offset, t: ev.T, dir: ev.Dir}
	if ev.IsFrame() {
		e.size = int64(len(ev.Frame))
		e.flags = srcIndex(ev.Src)
		if ev.Captured {
			e.flags |= flagCaptured
		}
		if ev.Redacted {
			e.flags |= flagRedacted
		}
		if ev.EOF {
			e.flags |= flagEOF
		}
		if ev.Partial {
			e.flags |= flagPartial
		}
		e.held = heldIndex(ev.Held)
	} else {
		e.event = 1
		e.method = x.method(ev.Kind) // an event has no method: the field holds its kind
	}
	return e
}

// addEvent indexes an event record, or a frame of the server's stderr,
// at time at: it counts it, notes the framing it may tell, and moves the
// tracker on.
func (x *Index) addEvent(ev *Event, e entry, seq int64, at time.Duration) {
	if ev.IsFrame() {
		x.counts.Err++
	} else {
		x.counts.Events++
		if ev.Kind == EventExit && !x.counts.Exit {
			x.counts.Exit = true
			if ev.Code != nil {
				x.counts.ExitCode = *ev.Code
			}
			x.counts.ExitSignal = ev.Signal
		}
	}
	x.entries.push(e)
	if x.framings.Note(ev) {
		switch ev.Dir {
		case classify.H2S, classify.S2H:
			x.framed[ev.Dir] = true
		case classify.Err:
		default: // a note of both directions
			x.framed[classify.H2S], x.framed[classify.S2H] = true, true
		}
		x.tr.UseLSPFraming()
		x.noteProfile()
	}
	switch ev.Kind {
	case EventExit:
		x.session(x.tr.End(at)) // what is still owed stays unanswered
	case EventGap:
		x.counts.Missing += ev.Missing
		x.session(x.tr.Gap(seq, ev.Dir, ev.Missing, at)) // what the missing frames may have held is not judged
	default:
		x.session(x.tr.Advance(at))
	}
}

// addFrame indexes a frame of either direction, at time at: it classifies
// it (or takes pre), has the tracker observe it, and marks what it is,
// its findings, and the entries it pairs with.
func (x *Index) addFrame(ev *Event, e entry, seq int64, at time.Duration, pre *classify.Message) {
	if ev.Dir == classify.H2S {
		x.counts.H2S++
	} else {
		x.counts.S2H++
	}
	if ev.Src != SrcInject {
		x.framed[ev.Dir] = true
	}
	var m classify.Message
	if p := x.tr.Profile(); pre != nil && pre.Kind != 0 && pre.Profile == p {
		m = *pre
	} else {
		m = ClassifyRecord(&x.header, ev, p, &x.full)
	}
	e.kind = m.Kind
	i := x.entries.push(e)
	delivery := FateOf(ev).Delivery()
	obs := x.tr.ObserveDelivery(seq, at, &m, delivery)
	followed := delivery != classify.Dropped // the tracker follows no request the user dropped
	// Observe may change the frame's findings, so they are kept after it.
	p := x.entries.at(i)
	if m.HasID() {
		p.id = x.ids.add(m.ID().Raw)
	}
	if m.Kind == classify.KindHTTP {
		p.method = x.method(HTTPLabel(ev.HTTP)) // no message, so no method: what HTTP did, as events hold their kind
	} else {
		p.method = x.method(m.Method())
	}
	x.addKind(p, &m, seq, followed)
	for _, f := range m.Findings {
		x.note(p, f, -1, 0)
	}
	for j := range m.Members {
		for _, f := range m.Members[j].Findings {
			x.note(p, f, j, 0)
		}
	}
	for _, pr := range obs.Pairs {
		isErr := pairAnswerIsError(&m, pr)
		x.pair(p, &m, pr, isErr)
		if x.opts.OnPair != nil {
			x.opts.OnPair(pr, isErr)
		}
	}
	x.session(obs.Findings)
	if ev.EOF {
		x.session(x.tr.OutputClosed(ev.Dir, at)) // its sender answers nothing more
	}
	x.counts.Pending = x.tr.InFlight()
	x.noteProfile()
}

// addKind marks on entry p, frame m of line seq, whether it is or holds
// a request (pending, when followed: the tracker follows it), a response,
// an error.
func (x *Index) addKind(p *entry, m *classify.Message, seq int64, followed bool) {
	switch m.Kind {
	case classify.KindRequest:
		p.rs |= rsRequest
		if followed {
			x.pendingChange(p, PendingAdded)
		}
	case classify.KindResponse:
		p.rs |= rsResponse
		if m.HasError() {
			p.rs |= rsError
		}
	case classify.KindBatch:
		var requests int32
		for j := range m.Members {
			switch mm := &m.Members[j]; mm.Kind {
			case classify.KindRequest:
				requests++
			case classify.KindResponse:
				p.rs |= rsResponse
				if mm.HasError() {
					p.rs |= rsError
				}
			}
		}
		if requests > 0 {
			p.rs |= rsRequest
			if followed {
				x.pendingChange(p, PendingAdded)
			}
		}
		if requests > 1 {
			x.batches[seq] = requests
		}
	}
}

// noteProfile publishes the tracker's profile when it has changed.
func (x *Index) noteProfile() {
	if p := x.tr.Profile(); p != x.profile {
		x.profile = p
		x.profileHint.Store(uint32(p))
	}
}

// ClassifyRecord judges one recorded frame by profile p, as check.Run does.
// An LSP frame recorded with its header block is split again (in *full),
// so a malformed block reads as it did live.
func ClassifyRecord(h *Header, ev *Event, p classify.Profile, full *[]byte) classify.Message {
	m := classifyBytes(h, ev, p, full)
	if ev.HTTP != nil && h.Transport == TransportHTTP {
		m.HTTP = HTTPFacts(ev.HTTP)
	}
	if ev.Redacted {
		m.Findings = append(m.Findings, classify.Finding{Code: classify.CodeRedacted, Severity: classify.Info,
			Message: "rpctap masked a secret in this frame when it recorded it; the bytes shown differ from those that crossed the tap."})
	}
	return m
}

// classifyBytes judges a record's frame; an LSP frame recorded with its
// header block is split again, so a malformed block reads as it did live.
func classifyBytes(h *Header, ev *Event, p classify.Profile, full *[]byte) classify.Message {
	if ev.Header != nil {
		*full = append(append((*full)[:0], ev.Header...), ev.Frame...)
		spans := classify.SplitAll(*full, classify.FramingLSP)
		if cap(*full) > MaxKeptLine {
			*full = nil
		}
		if len(spans) > 0 && spans[0].Bad != "" {
			return classify.ClassifyFramed(ev.Frame, spans[0].FrameInfo, ev.Dir, p)
		}
	}
	return h.Classify(ev.Frame, ev.Dir, p)
}

// heldNames are the outcomes of held frames an entry can say, by index
// (0: not held; the last: one this version does not know).
var heldNames = [...]string{"", HeldForwarded, HeldEdited, HeldDropped, HeldAnswered, HeldTimeout, HeldDetached, HeldOverflow, HeldWaited, HeldEnded, "other"}

func heldIndex(held string) uint8 {
	for i, name := range heldNames[:len(heldNames)-1] {
		if held == name {
			return uint8(i)
		}
	}
	return uint8(len(heldNames) - 1)
}

func srcIndex(src string) uint8 {
	switch src {
	case SrcWire, "":
		return 0
	case SrcInject:
		return 1
	case SrcEdit:
		return 2
	}
	return 3
}

// method interns a method name.
func (x *Index) method(name string) uint32 {
	if name == x.methods[x.lastMethod] {
		return x.lastMethod // most frames repeat a recent method
	}
	k, ok := x.methodIDs[name]
	if !ok {
		k = uint32(len(x.methods))
		x.methods = append(x.methods, name)
		x.methodIDs[name] = k
	}
	x.lastMethod = k
	return k
}

// pair links the response being added (p, m) with its request.
func (x *Index) pair(p *entry, m *classify.Message, pr classify.Pair, isErr bool) {
	if pr.Origin != 0 || pr.InputRequired {
		if x.calls == nil {
			x.calls = map[int64]CallLink{}
		}
		x.calls[p.seq] = CallLink{Origin: pr.Origin, CallLatency: pr.CallLatency, InputRequired: pr.InputRequired, Round: pr.Round}
		if pr.Origin != 0 {
			x.calls[pr.Request] = CallLink{Origin: pr.Origin}
		}
	}
	if p.pair == 0 {
		p.pair, p.latency = pr.Request, pr.Latency
		if m.Kind != classify.KindBatch && m.Kind != classify.KindHTTP {
			p.method = x.method(pr.Method) // a frame of kind http keeps what HTTP did, which says why no answer came
		}
	}
	i, ok := x.bySeq(pr.Request)
	if !ok {
		return
	}
	req := x.entries.at(i)
	x.pendingChange(req, PendingLeft)
	if req.pair == 0 {
		req.pair, req.latency = p.seq, pr.Latency
	}
	if isErr {
		req.rs |= rsError
	}
	if req.kind == classify.KindBatch {
		if n := x.batches[req.seq]; n > 1 {
			x.batches[req.seq] = n - 1
			return
		}
		delete(x.batches, req.seq)
	}
	req.rs |= rsAnswered
}

// pairAnswerIsError reports whether the answer of pair pr, in the
// response frame m, is an error: in a batch, the member that answers
// (pr.Member), not any of the batch.
func pairAnswerIsError(m *classify.Message, pr classify.Pair) bool {
	if m.Kind == classify.KindHTTP {
		return true // HTTP ended the request with no answer (an error status, a broken stream)
	}
	if m.Kind != classify.KindBatch {
		return m.HasError()
	}
	return pr.Member >= 0 && pr.Member < len(m.Members) && m.Members[pr.Member].HasError()
}

// session marks the entries the tracker's findings are about.
func (x *Index) session(fs []classify.SessionFinding) {
	for _, f := range fs {
		i, ok := x.bySeq(f.Seq)
		if !ok {
			continue
		}
		e := x.entries.at(i)
		x.note(e, f.Finding, -1, f.Related)
		switch f.Code {
		case classify.CodeTimeout:
			e.rs |= rsTimedOut
			x.pendingChange(e, PendingTimedOut)
		case classify.CodeCancelled:
			e.rs |= rsCancelled
			x.pendingChange(e, PendingLeft)
		case classify.CodeUntracked:
			e.rs |= rsUntracked
			x.pendingChange(e, PendingLeft)
		case classify.CodeFramesMissing:
			if e.rs&rsRequest != 0 && e.rs&rsAnswered == 0 {
				e.rs |= rsGap // its answer may be among them
				x.pendingChange(e, PendingLeft)
			}
		}
	}
	if x.tr != nil {
		x.counts.Pending = x.tr.InFlight()
	}
}

// note records a finding about e, that links to line related (0: none).
func (x *Index) note(e *entry, f classify.Finding, member int, related int64) {
	e.codes = e.codes.With(f.Code)
	worst := &e.worst
	user := FindingByUser(e.seq, related, x.byUser)
	if user {
		worst = &e.userWorst
	}
	if f.Severity > *worst {
		x.countWorst(user, *worst, -1)
		x.countWorst(user, f.Severity, 1)
		*worst = f.Severity
	}
	msg, ok := x.messages[f.Message]
	if !ok {
		msg = f.Message
		if len(x.messages) < maxMessages {
			x.messages[msg] = msg
		}
	}
	if x.findings.n >= math.MaxInt32 {
		return // the codes still show; the messages stop here
	}
	x.findings.push(finding{msg: msg, related: related, prev: e.finding, member: int16(max(min(member, math.MaxInt16), -1)), code: f.Code, sev: f.Severity})
	e.finding = int32(x.findings.n)
}

// countWorst adds d to the count of entries whose worst is s, of the
// user's findings or of the peers'.
func (x *Index) countWorst(user bool, s classify.Severity, d int) {
	c := &x.counts
	errs, warns, infos := &c.Errors, &c.Warnings, &c.Infos
	if user {
		errs, warns, infos = &c.UserErrors, &c.UserWarnings, &c.UserInfos
	}
	switch s {
	case classify.Error:
		*errs += d
	case classify.Warn:
		*warns += d
	case classify.Info:
		*infos += d
	}
}

// byUser reports whether the user wrote the frame of line seq (injected,
// or edited): see Fate.ByUser.
func (x *Index) byUser(seq int64) bool {
	i, ok := x.bySeq(seq)
	if !ok {
		return false
	}
	return Fate{Src: srcNames[x.entries.at(i).flags&srcMask]}.ByUser()
}
