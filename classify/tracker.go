package classify

import (
	"cmp"
	"slices"
	"time"
)

// TrackerOptions configure a Tracker. The zero value is usable.
type TrackerOptions struct {
	// Profile judges the session; Auto picks it from the traffic: MCP once
	// an initialize request carries params.protocolVersion, or a request
	// is server/discover or carries _meta["io.modelcontextprotocol/
	// protocolVersion"]; LSP when LSPFraming is set; JSONRPC otherwise.
	Profile Profile
	// LSPFraming says the session uses Content-Length framing.
	LSPFraming bool
	// Timeout is how long a request may stay unanswered before finding
	// timeout (default 30 s; negative turns timeouts off).
	Timeout time.Duration
	// MethodTimeouts override Timeout for the methods they name.
	MethodTimeouts map[string]time.Duration
	// MaxInFlight caps the requests followed at once (default 100,000).
	// Past it the oldest is dropped with finding untracked.
	MaxInFlight int
	// MaxRemembered caps the answered requests remembered for
	// duplicate-response (default 10,000).
	MaxRemembered int
}

// DefaultTimeout is how long a request may wait for its answer.
const DefaultTimeout = 30 * time.Second

// A SessionFinding is a finding about one frame of the session, named by
// the sequence number the caller gave it.
type SessionFinding struct {
	Seq int64
	Finding
	// Related is the sequence number of the frame the finding links to
	// (the request a late response answers, the unreadable frame an error
	// probably refers to), or 0.
	Related int64
}

// An Observation is what the tracker learnt from one frame.
type Observation struct {
	// Findings are new session findings, about this frame or earlier
	// ones. The slice is reused by the next call.
	Findings []SessionFinding
	// Pairs holds, for a response (or each response in a batch), the
	// request it answers. The slice is reused by the next call.
	Pairs []Pair
}

// A Pair links a response to its request.
type Pair struct {
	Request, Response int64
	// Method is the request's method.
	Method string
	// Latency is the time from the request to its response.
	Latency time.Duration
	// Member is the response's index in its batch (0 when the response
	// frame is no batch).
	Member int
}

// PendingRequest is a request still waiting for its answer.
type PendingRequest struct {
	Seq      int64
	Dir      Direction
	ID       string // the id as on the wire
	Method   string
	Sent     time.Duration
	Deadline time.Duration // 0 when the request has no timeout
	TimedOut bool
}

// A Tracker follows one session: it pairs responses with requests in the
// opposite direction (each direction has its own id space), measures
// latency, and raises the findings that need history. It keeps bounded
// memory. A Tracker is not safe for concurrent use; it is fed in the order
// frames crossed the tap.
type Tracker struct {
	opts    TrackerOptions
	profile Profile // resolved; Auto until decided
	version string  // negotiated MCP protocol version

	// flights maps direction byte + id key to the oldest request in
	// flight with that id (later ones chain through newer), or, when none
	// is, to the last one answered or cancelled (a tombstone, for
	// duplicate-response) until the ring forgets it.
	flights   *flightTable
	nFlights  int
	tokens    *flightTable // MCP progress tokens of requests in flight
	ring      []ringEntry  // FIFO of tombstones, to forget the oldest
	ringNext  int
	owed      map[string]*owed // frames owed an error answer, by direction + id key
	unreadble [2][]*owed       // most recent owed frames without an id, per direction
	deadlines deadlineHeap
	now       time.Duration
	// owedOld counts owed frames whose id a later owed frame reused: no
	// answer can reach them any more, but their deadline still stands.
	owedOld int
	// answered remembers the latest owed frames that got their error, by
	// key, so that another answer to one is a duplicate (answeredKeys
	// holds the keys, oldest first, bounded by MaxRemembered).
	answered     map[string]int64
	answeredKeys []string

	// delivery is that of the frame being observed (each ObserveDelivery
	// sets it; nothing else reads it).
	delivery Delivery
	// ended says the session ended (End): the clock stands still.
	ended bool

	// MCP lifecycle.
	discover    bool // the session began with server/discover: no handshake
	settled     bool // profile and handshake style are decided
	initSeq     int64
	initState   int  // 0 none, 1 initialize sent, 2 answered, 3 answered and initialized sent
	initialized bool // the host sent notifications/initialized (it counts whenever it came)
	initKey     string
	findings    []SessionFinding
	pairs       []Pair
	member      int // the batch member being observed
	key, key2   []byte
	lastMethod  string
	free        []*flight
	evictions   int64
	lastAdvance time.Duration
	// sent lists requests in the order they were sent (from sentHead on;
	// entries of requests no longer in flight are stale), so that a full
	// table drops the oldest request, whatever its timeout.
	sent     []ringEntry
	sentHead int
}

type flight struct {
	seq      int64
	dir      Direction
	key      []byte // direction + id key (the buffer is reused with the flight)
	hash     uint64 // of key, in the flight table
	id       []byte // the id as on the wire
	method   string
	sent     time.Duration
	deadline time.Duration
	timedOut bool
	// owedByPeer says the receiver read the request and owes its answer
	// (not so for one the user answered in its place); atEnd says it was
	// reported unanswered-at-end.
	owedByPeer, atEnd bool
	token             []byte // direction + progress token key, or nil
	tokBuf            []byte // token's reusable buffer
	tokHash           uint64
	newer             *flight // a later request that reused the id
	state             flightState
	// gen counts the flight's reuses, so that heap and ring entries made
	// for an earlier use read as stale.
	gen uint32
}

type flightState uint8

const (
	flying    flightState = iota
	answeredS             // tombstone: answered
	cancelled             // tombstone: cancelled, one answer still allowed
	released              // back on the free list
)

type ringEntry struct {
	f   *flight
	gen uint32
}

type owed struct {
	seq        int64
	dir        Direction
	key        string
	deadline   time.Duration
	done       bool
	superseded bool // a later owed frame took its key; counted in owedOld
	result     bool // a result came back for it: an answer, not the error owed
}

// NewTracker starts a session.
func NewTracker(opts TrackerOptions) *Tracker {
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 100_000
	}
	if opts.MaxRemembered <= 0 {
		opts.MaxRemembered = 10_000
	}
	t := &Tracker{
		opts:     opts,
		profile:  opts.Profile,
		flights:  newFlightTable(func(f *flight) ([]byte, uint64) { return f.key, f.hash }),
		tokens:   newFlightTable(func(f *flight) ([]byte, uint64) { return f.token, f.tokHash }),
		owed:     map[string]*owed{},
		answered: map[string]int64{},
		ring:     make([]ringEntry, opts.MaxRemembered),
	}
	if t.profile == Auto && opts.LSPFraming {
		t.profile = LSP
	}
	return t
}

// UseLSPFraming tells the tracker the session turned out to use
// Content-Length framing (decided from the traffic): an Auto profile
// becomes LSP.
func (t *Tracker) UseLSPFraming() {
	if t.profile == Auto {
		t.profile = LSP
	}
}

// Profile is the profile to judge the next frame with.
func (t *Tracker) Profile() Profile {
	if t.profile == Auto {
		return JSONRPC
	}
	return t.profile
}

// ProtocolVersion is the MCP protocol version the session negotiated, or "".
func (t *Tracker) ProtocolVersion() string { return t.version }

// Evictions counts requests dropped because the in-flight table was full.
func (t *Tracker) Evictions() int64 { return t.evictions }

// Observe feeds the tracker the next frame, classified, that crossed the tap
// at time at (since the session started). seq names the frame in the
// findings; it must be unique and not 0. Observe moves the clock to at
// first, so timeouts that passed before the frame are reported with it.
// It may adjust m's findings that depend on the session (a batch is fine
// under an MCP revision that still had batching).
func (t *Tracker) Observe(seq int64, at time.Duration, m *Message) Observation {
	return t.ObserveDelivery(seq, at, m, Delivered)
}

// Delivery says whether a frame that crossed into the tap reached its
// receiver.
type Delivery uint8

const (
	// Delivered: the receiver read the frame (the usual case).
	Delivered Delivery = iota
	// Dropped: the user dropped the frame in the tap; its receiver never
	// read it, and nothing will answer it.
	Dropped
	// AnsweredInPlace: the user answered the frame in its receiver's
	// place; the receiver never read it, and the user's answer follows
	// from the receiver's side.
	AnsweredInPlace
)

// ObserveDelivery is Observe for a frame whose receiver may never have
// read it. A frame that was not delivered owes its receiver nothing, so
// no finding blames the receiver for it: a request in it gets no
// deadline (no timeout, no unanswered-at-end), and is not followed at
// all when dropped (answered in place, it is: the user's answer pairs
// with it); a frame a strict receiver must refuse is owed no error. What it says of its
// sender still counts: a response in it answers its request, a request
// before the MCP handshake is still early.
func (t *Tracker) ObserveDelivery(seq int64, at time.Duration, m *Message, d Delivery) Observation {
	t.delivery = d
	t.findings = t.findings[:0]
	t.pairs = t.pairs[:0]
	t.advance(at)
	if m.Dir != H2S && m.Dir != S2H {
		return Observation{}
	}
	if m.Kind == KindBatch {
		t.adjustBatch(m)
		for i := range m.Members {
			t.member = i
			t.observe(seq, at, &m.Members[i])
		}
		t.member = 0
	} else {
		t.observe(seq, at, m)
	}
	return Observation{Findings: t.findings, Pairs: t.pairs}
}

// Advance moves the clock to now and reports requests that passed their
// deadline (timeout) and frames whose strict answer never came
// (unanswered-invalid). The slice is reused by the next call.
func (t *Tracker) Advance(now time.Duration) []SessionFinding {
	t.findings = t.findings[:0]
	t.advance(now)
	return t.findings
}

func (t *Tracker) emit(seq int64, c Code, sev Severity, msg string, related int64) {
	t.findings = append(t.findings, SessionFinding{Seq: seq, Finding: Finding{Code: c, Severity: sev, Message: msg}, Related: related})
}

func (t *Tracker) observe(seq int64, at time.Duration, m *Message) {
	t.resolveProfile(m)
	switch m.Kind {
	case KindRequest:
		t.request(seq, at, m)
	case KindNotification:
		t.notification(seq, at, m)
	case KindResponse:
		t.response(seq, at, m)
	}
	if m.Answer != nil && m.Kind != KindBatch && t.delivery == Delivered {
		t.owe(seq, at, m)
	}
}

// resolveProfile settles Auto from what the traffic shows.
func (t *Tracker) resolveProfile(m *Message) {
	if t.settled || (m.Kind != KindRequest && m.Kind != KindNotification) {
		return
	}
	if m.Dir == H2S && m.Kind == KindRequest && t.profile != Auto {
		// The host's first request shows which revision it speaks;
		// after it there is nothing left to decide.
		defer func() { t.settled = true }()
	}
	if m.MethodIs("server/discover") {
		t.discover = t.discover || t.initState == 0
		t.setProfile(MCP)
		return
	}
	if meta := m.Meta(); meta != nil {
		if v := Member(meta, "io.modelcontextprotocol/protocolVersion"); v != nil {
			if t.initState == 0 {
				t.discover = true
			}
			if s, ok := StringValue(v); ok && t.version == "" {
				t.version = s
			}
			t.setProfile(MCP)
			return
		}
	}
	if m.Kind == KindRequest && m.MethodIs("initialize") && m.Dir == H2S {
		if v, ok := StringValue(Member(m.Params(), "protocolVersion")); ok {
			if t.version == "" {
				t.version = v
			}
			t.setProfile(MCP)
		}
	}
}

func (t *Tracker) setProfile(p Profile) {
	if t.profile == Auto {
		t.profile = p
	}
}

// adjustBatch lowers the batch finding to info under MCP revisions before
// 2025-06-18, which still allowed batching.
func (t *Tracker) adjustBatch(m *Message) {
	if t.version == "" || t.version >= "2025-06-18" {
		return
	}
	msg := "The frame is a batch; the negotiated revision of MCP allows batching."
	if isRevision(t.version) {
		msg = "The frame is a batch; revision " + t.version + " of MCP allows batching."
	}
	for i := range m.Findings {
		if m.Findings[i].Code == CodeBatch {
			m.Findings[i].Severity = Info
			m.Findings[i].Message = msg
		}
	}
}

// isRevision reports whether a peer's protocol version is a plain date
// (YYYY-MM-DD), safe to name in a message.
func isRevision(v string) bool {
	if len(v) != 10 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if i == 4 || i == 7 {
			if v[i] != '-' {
				return false
			}
		} else if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

// flightKey builds direction + id key in t.key.
func (t *Tracker) flightKey(dir Direction, id ID) []byte {
	t.key = append(t.key[:0], byte(dir))
	t.key = id.AppendKey(t.key)
	return t.key
}

func (t *Tracker) timeoutFor(method string) time.Duration {
	if d, ok := t.opts.MethodTimeouts[method]; ok {
		return d
	}
	return t.opts.Timeout
}

func (t *Tracker) request(seq int64, at time.Duration, m *Message) {
	t.lifecycleRequest(seq, m)
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
	if meta := m.Meta(); meta != nil && t.Profile() == MCP {
		if raw := Member(meta, "progressToken"); raw != nil {
			f.tokBuf = append(f.tokBuf[:0], byte(m.Dir))
			f.tokBuf = RawID(raw).AppendKey(f.tokBuf)
			f.token = f.tokBuf
			f.tokHash = t.tokens.hash(f.token)
			t.tokens.put(f)
		}
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
		if f, ok := t.tokens.get(t.tokenKey(m.Dir.Opposite(), RawID(tok))); ok && f.state == flying && f.deadline > 0 {
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
	if !ok || f.state != flying {
		return
	}
	t.emit(f.seq, CodeCancelled, Info, "The request was cancelled; an answer may still come, or none.", seq)
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
		t.pair(seq, at, f)
		t.land(f, answeredS)
		t.settleOwed(k)
		return
	case ok && f.state == cancelled:
		f.state = answeredS
		t.pairs = append(t.pairs, Pair{Request: f.seq, Response: seq, Method: f.method, Latency: at - f.sent, Member: t.member})
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
	t.emit(seq, CodeUnmatchedResponse, Error, "No request with this id is waiting for an answer from this side; the receiver cannot route it.", 0)
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

func (t *Tracker) pair(seq int64, at time.Duration, f *flight) {
	t.pairs = append(t.pairs, Pair{Request: f.seq, Response: seq, Method: f.method, Latency: at - f.sent, Member: t.member})
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
	if f.token != nil {
		t.tokens.del(f)
	}
	if head, _ := t.flights.get(f.key); head != f {
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

// Pending calls fn for each request in flight, oldest first within an id,
// until fn returns false.
func (t *Tracker) Pending(fn func(PendingRequest) bool) {
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
func (t *Tracker) InFlight() int { return t.nFlights }

func durationText(d time.Duration) string {
	if d%time.Second == 0 {
		return itoa(int(d/time.Second)) + " s"
	}
	return d.String()
}

// pushDeadline adds a deadline, first dropping stale entries (landed
// requests, restarted clocks) when they outnumber the live ones, so the heap
// stays as small as what is in flight.
func (t *Tracker) pushDeadline(e deadlineEntry) {
	if n := len(t.deadlines); n > 1024 && n > 4*(t.nFlights+len(t.owed)+t.owedOld+64) {
		live := t.deadlines[:0]
		for _, d := range t.deadlines {
			if d.live() {
				live = append(live, d)
			}
		}
		clear(t.deadlines[len(live):])
		t.deadlines = live
		t.deadlines.init()
	}
	t.deadlines.push(e)
}

func (e deadlineEntry) live() bool {
	if e.f != nil {
		return e.f.gen == e.gen && e.f.state == flying && !e.f.timedOut && !e.f.atEnd && e.f.deadline == e.at
	}
	return e.o != nil && !e.o.done
}

type deadlineEntry struct {
	at  time.Duration
	f   *flight
	gen uint32 // the flight's generation when pushed (flights are reused)
	o   *owed
}

// deadlineHeap is a min-heap by time, written out so that pushing an entry
// costs no allocation.
type deadlineHeap []deadlineEntry

func (h deadlineHeap) Len() int { return len(h) }

func (h *deadlineHeap) push(e deadlineEntry) {
	*h = append(*h, e)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p].at <= a[i].at {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *deadlineHeap) pop() deadlineEntry {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a[last] = deadlineEntry{}
	a = a[:last]
	*h = a
	h.down(0)
	return top
}

func (h deadlineHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].at < h[l].at {
			m = r
		}
		if h[i].at <= h[m].at {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (h deadlineHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}
