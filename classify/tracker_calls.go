package classify

import "time"

// This file holds what each message does to the Tracker: a request opens a
// call, its response closes it, and a notification may cancel one or report
// its progress.

func (t *Tracker) request(seq int64, at time.Duration, m *Message) {
	t.lifecycleRequest(seq, m)
	var md reqMeta
	var rev revision
	var flags uint8
	switch t.Profile() {
	case MCP:
		md = requestMeta(m.Meta())
		rev, flags = t.mcpRequest(seq, m, &md)
	case LSP:
		t.lspMessage(seq, m)
	}
	if t.delivery == Dropped {
		return // its receiver never read it: nothing is owed, nothing will answer
	}
	id := m.ID()
	k := t.flightKey(m.Dir, id)
	method := t.method(m)
	f := t.newFlight()
	f.seq, f.dir, f.method, f.sent = seq, m.Dir, method, at
	// The flight's buffers are reused with it: no allocation here.
	f.id = append(f.id[:0], id.Raw...)
	f.key = append(f.key[:0], k...)
	f.hash = t.flights.hash(f.key)
	f.rev, f.flags = rev, flags
	f.origin, f.originSent, f.round = t.mcp.retryOf, t.mcp.retrySent, t.mcp.retryRound
	t.mcp.retryOf, t.mcp.retryRound = 0, 0
	f.tool = f.tool[:0]
	if t.Profile() == MCP && method == "tools/call" {
		if name, ok := StringValue(Member(m.Params(), "name")); ok {
			f.tool = append(f.tool, name...)
			if f.origin == 0 && m.Dir == H2S { // a server calls no tool of the host
				t.toolCalled(seq, f.tool)
			}
		}
	}
	if flags&flLogLevel != 0 {
		t.mcp.logLevels++
	}
	if raw := md.token; raw != nil {
		f.tokBuf = append(f.tokBuf[:0], byte(m.Dir))
		f.tokBuf = RawID(raw).AppendKey(f.tokBuf)
		f.token = f.tokBuf
		f.tokHash = t.tokens.hash(f.token)
		t.tokens.put(f)
	}
	if d := t.timeoutFor(method); d > 0 && t.delivery == Delivered {
		f.deadline = at + d
	}
	f.owedByPeer = t.delivery == Delivered
	switch old, ok := t.flights.getHashed(f.key, f.hash); {
	case ok && old.state == flying:
		t.emit(seq, CodeIDReused, Error, "The request reuses the id of an earlier request that is still unanswered; the answers cannot tell the two apart.", old.seq)
		for old.newer != nil {
			old = old.newer
		}
		old.newer = f
	case ok:
		// A new request with this id makes the old answer stale.
		t.flights.put(f)
		t.release(old)
	default:
		t.flights.put(f)
	}
	t.nFlights++
	if f.deadline > 0 {
		t.pushDeadline(deadlineEntry{at: f.deadline, f: f, gen: f.gen})
	}
	t.pushSent(f)
	for t.nFlights > t.opts.MaxInFlight {
		t.evictOldest()
	}
}

// pushSent appends a request to the sent list, first dropping stale
// entries when they outnumber the requests in flight.
func (t *Tracker) pushSent(f *flight) {
	if n := len(t.sent) - t.sentHead; n > 1024 && n > 4*t.nFlights {
		live := t.sent[:0]
		for _, e := range t.sent[t.sentHead:] {
			if e.f.gen == e.gen && e.f.state == flying {
				live = append(live, e)
			}
		}
		clear(t.sent[len(live):])
		t.sent, t.sentHead = live, 0
	} else if t.sentHead > 1024 && t.sentHead > len(t.sent)/2 {
		n := copy(t.sent, t.sent[t.sentHead:])
		clear(t.sent[n:])
		t.sent, t.sentHead = t.sent[:n], 0
	}
	t.sent = append(t.sent, ringEntry{f: f, gen: f.gen})
}

// method is the request's method name; the last one is kept, so a run of
// requests with a method no table knows costs one allocation, not one each.
func (t *Tracker) method(m *Message) string {
	raw := m.methodName()
	if string(raw) == t.lastMethod {
		return t.lastMethod
	}
	t.lastMethod = m.Method()
	return t.lastMethod
}

// tokenKey builds direction + progress token key in t.key.
func (t *Tracker) tokenKey(dir Direction, tok ID) []byte {
	t.key = append(t.key[:0], byte(dir))
	t.key = tok.AppendKey(t.key)
	return t.key
}

// lifecycleRequest applies the MCP handshake rules to a request.
func (t *Tracker) lifecycleRequest(seq int64, m *Message) {
	if t.initState == 3 || (t.discover && t.initState != 0) {
		return // the handshake is over, or there is none
	}
	if m.MethodIs("initialize") && m.Dir == H2S {
		if t.initState == 0 {
			t.initState = 1
			t.initSeq = seq
			t.initKey = string(t.flightKey(H2S, m.ID()))
		}
		return
	}
	if t.Profile() != MCP || t.discover || m.MethodIs("ping") || m.MethodIs("server/discover") {
		return
	}
	switch {
	case t.initState < 2:
		t.emit(seq, CodeBeforeInitialize, Error, "The request was sent before the initialize handshake finished; MCP allows only ping until the server has answered initialize.", t.initSeq)
	case t.initState == 2 && m.Dir == H2S:
		t.emit(seq, CodeBeforeInitialize, Error, "The host sent this request before notifications/initialized; MCP allows only ping until then.", t.initSeq)
	}
}

func (t *Tracker) notification(seq int64, at time.Duration, m *Message) {
	switch t.Profile() {
	case MCP:
		rev := t.era()
		if !m.MethodIs("notifications/progress") {
			t.mcpNotification(seq, m, rev)
		}
	case LSP:
		t.lspMessage(seq, m)
	}
	switch {
	case m.MethodIs("notifications/initialized"):
		if m.Dir == H2S && t.initState >= 1 {
			// A host may send it before the answer to initialize has
			// arrived: it counts from then on. Before initialize itself
			// it is out of order and counts for nothing.
			t.initialized = true
			if t.initState == 2 {
				t.initState = 3
			}
		}
	case m.MethodIs("notifications/progress"):
		tok := Member(m.Params(), "progressToken")
		if tok == nil {
			return
		}
		// Progress comes from the receiver of the request.
		f, ok := t.tokens.get(t.tokenKey(m.Dir.Opposite(), RawID(tok)))
		if ok && f.state != flying {
			f, ok = nil, false
		}
		if t.Profile() == MCP {
			rev := t.era()
			if ok {
				rev = f.rev
			}
			t.mcpNotification(seq, m, rev)
			t.progress(seq, m, f, t.key)
		}
		if ok && f.deadline > 0 {
			f.deadline = at + t.timeoutFor(f.method)
			t.pushDeadline(deadlineEntry{at: f.deadline, f: f, gen: f.gen})
		}
	case m.MethodIs("notifications/cancelled"):
		t.cancel(seq, m, Member(m.Params(), "requestId"))
	case m.MethodIs("$/cancelRequest"):
		t.cancel(seq, m, Member(m.Params(), "id"))
	}
}

// cancel marks the request the sender names as cancelled: its answer may
// still come, or never.
func (t *Tracker) cancel(seq int64, m *Message, rawID []byte) {
	if rawID == nil {
		return
	}
	k := t.flightKey(m.Dir, RawID(rawID))
	f, ok := t.flights.get(k)
	if (!ok || f.state != flying) && m.Dir == S2H && m.MethodIs("notifications/cancelled") {
		// Under 2026-07-28 a server cancels only the host's
		// subscriptions/listen, to end its stream.
		if g, ok2 := t.flights.get(t.flightKey(H2S, RawID(rawID))); ok2 && g.state == flying && g.method == "subscriptions/listen" {
			f, ok = g, true
		}
	}
	if !ok || f.state != flying {
		if t.Profile() == MCP && m.MethodIs("notifications/cancelled") && t.gapSeq[m.Dir] == 0 && t.evictions == 0 {
			msg := "The cancellation names no request of its sender in flight; MCP: the receiver ignores it."
			if ok {
				msg = "The cancellation names a request already answered (the two crossed); MCP: the receiver ignores it."
			}
			t.emit(seq, CodeCancelUnknown, Info, msg, 0)
		}
		return
	}
	t.emit(f.seq, CodeCancelled, Info, "The request was cancelled; an answer may still come, or none.", seq)
	t.cancelledToken(f)
	t.land(f, cancelled)
}

func (t *Tracker) response(seq int64, at time.Duration, m *Message) {
	id := m.ID()
	nullish := !m.HasID() || id.IsNull()
	if m.HasID() && !id.Valid() {
		return // bad-id says it all
	}
	if nullish {
		t.nullResponse(seq, at, m)
		return
	}
	reqDir := m.Dir.Opposite()
	k := t.flightKey(reqDir, id)
	f, ok := t.flights.get(k)
	switch {
	case ok && f.state == flying:
		if f.seq == t.initSeq {
			// The server's answer names the version the session speaks.
			if v, ok := StringValue(Member(m.Result(), "protocolVersion")); ok {
				t.version = v
			}
		}
		t.answerRules(seq, at, m, f)
		t.pair(seq, at, f)
		t.land(f, answeredS)
		t.settleOwed(k)
		return
	case ok && f.state == cancelled:
		t.answerRules(seq, at, m, f)
		f.state = answeredS
		t.pairs = append(t.pairs, t.newPair(seq, at, f))
		return
	case ok && f.state == gapped:
		// Its answer was not among the frames missing after all.
		t.answerRules(seq, at, m, f)
		f.state = answeredS
		t.pair(seq, at, f)
		return
	case ok:
		t.emit(seq, CodeDuplicateResponse, Error, duplicateAnswer, f.seq)
		return
	}
	if len(t.owed) > 0 {
		if o, ok := t.owed[string(k)]; ok {
			// It answers the invalid frame, so it is not unmatched; only
			// an error is the answer owed, so a result leaves the frame
			// to be reported unanswered at its deadline. Any answer after
			// the first is a duplicate.
			if o.result {
				t.emit(seq, CodeDuplicateResponse, Error, duplicateAnswer, o.seq)
			}
			if m.HasError() {
				o.done = true
				delete(t.owed, string(k))
				t.rememberAnswered(k, o.seq)
			} else {
				o.result = true
			}
			return
		}
	}
	if first, ok := t.answered[string(k)]; ok {
		t.emit(seq, CodeDuplicateResponse, Error, duplicateAnswer, first)
		return
	}
	if g := t.gapSeq[reqDir]; g != 0 {
		t.emit(seq, CodeFramesMissing, Info, "No request with this id is in the session file; it may be among the frames missing from it.", g)
		return
	}
	t.emit(seq, CodeUnmatchedResponse, Error, "No request with this id is waiting for an answer from this side; the receiver cannot route it.", 0)
}

// answerRules applies the rules above the envelope to the answer of f,
// at at.
func (t *Tracker) answerRules(seq int64, at time.Duration, m *Message, f *flight) {
	switch t.Profile() {
	case MCP:
		t.mcpAnswer(seq, m, f)
		t.toolAnswered(at, m, f)
	case LSP:
		t.lspAnswer(seq, m, f)
	}
}

// nullResponse handles a response with a null or absent id.
func (t *Tracker) nullResponse(seq int64, at time.Duration, m *Message) {
	if !m.HasError() {
		return // result-without-id says it
	}
	// During the MCP handshake the host's only request is initialize, so
	// an error that names no request answers it.
	if m.Dir == S2H && t.initState == 1 && m.jsonrpcOK() {
		if f, ok := t.flights.get([]byte(t.initKey)); ok && f.state == flying && t.nFlightsFrom(H2S) == 1 {
			t.pair(seq, at, f)
			t.land(f, answeredS)
			return
		}
	}
	reqDir := m.Dir.Opposite()
	if m.HasID() {
		if f, ok := t.flights.get(t.flightKey(reqDir, m.ID())); ok && f.state == flying {
			t.pair(seq, at, f)
			t.land(f, answeredS)
			return
		}
	}
	// Link it to the most recent frame the responder could not read.
	list := t.unreadble[reqDir-1]
	for i := len(list) - 1; i >= 0; i-- {
		if o := list[i]; !o.done {
			o.done = true
			t.unreadble[reqDir-1] = append(list[:i], list[i+1:]...)
			t.emit(seq, CodeErrorNamesNoRequest, Warn, "The error names no request; it most likely answers the earlier frame the peer could not read.", o.seq)
			return
		}
	}
	t.emit(seq, CodeErrorNamesNoRequest, Warn, "The error names no request, and no unreadable frame is waiting for one; the receiver cannot tell what failed.", 0)
}

func (t *Tracker) nFlightsFrom(dir Direction) int {
	n := 0
	t.flights.each(func(f *flight) bool {
		for ; f != nil && f.state == flying; f = f.newer {
			if f.dir == dir {
				n++
			}
		}
		return true
	})
	return n
}

// newPair is the pair of the response seq, at at, with its request f.
func (t *Tracker) newPair(seq int64, at time.Duration, f *flight) Pair {
	p := Pair{Request: f.seq, Response: seq, Method: f.method, Latency: at - f.sent, Member: t.member, CallLatency: at - f.sent}
	if f.origin != 0 {
		p.Origin, p.CallLatency, p.Round = f.origin, at-f.originSent, int(f.round)
	}
	p.InputRequired = t.mcp.inputRequired
	if p.InputRequired && p.Round == 0 {
		p.Round = 1
	}
	t.mcp.inputRequired = false
	return p
}

func (t *Tracker) pair(seq int64, at time.Duration, f *flight) {
	t.pairs = append(t.pairs, t.newPair(seq, at, f))
	if f.timedOut {
		t.emit(seq, CodeLateResponse, Warn, "The answer came after its request had timed out; a host may have given up on it.", f.seq)
	}
	if f.seq == t.initSeq && t.initState == 1 {
		t.initState = 2
		if t.initialized {
			t.initState = 3
		}
	}
}
