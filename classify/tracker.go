package classify

import (
	"strconv"
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
	// Baseline, when not nil, gives the definitions the user accepted
	// for the MCP server of the given name (its serverInfo name), or nil
	// for none; the session's lists are judged against them (tool-drift).
	// It is called once the server has named itself.
	Baseline func(server string) *Baseline
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
	// Origin is the first request of the multi round-trip call (MCP
	// 2026-07-28) that Request retries, or 0 when it retries none;
	// CallLatency then runs from that first request to this response
	// (else it is Latency). InputRequired says the response asked the
	// host for input: the call goes on in a retry. Round is Request's
	// round in its multi round-trip call: 1 for the first request, 2 for
	// its first retry, and so on (on the final answer, how many rounds
	// the call took); 0 for a request of no such call.
	Origin        int64
	CallLatency   time.Duration
	InputRequired bool
	Round         int
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
	// gapSeq is, per direction, the gap record of the last frames of
	// that direction missing from the record (Gap), or 0.
	gapSeq [4]int64

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
	// The rules above the envelope.
	mcp mcpState
	lsp lspState
	// What Capabilities gives of the peers (see tracker_caps.go).
	caps capsState
	// What ToolUse gives of the tools (see tracker_tools.go).
	tools toolsState
	// The transport rules of HTTP (http.go), and the conversations of an
	// HTTP session (conversations.go): nil until a frame with HTTP facts
	// comes, and in a conversation's own tracker.
	http   httpState
	convs  *conversations
	inConv bool // t is one conversation's tracker: it routes nothing
	// stateless says the conversation is of stateless 2026-07-28
	// requests, whose ids are the exchange's own: keyExchange, the
	// exchange of the frame observed, is part of each flight's key.
	stateless   bool
	keyExchange int64
	// legacySSE says the conversation uses the legacy HTTP+SSE transport
	// (its answers come on a GET stream): no MCP-Protocol-Version header.
	legacySSE bool

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
	// origin is the first request of the multi round-trip call the
	// request retries (0: none), sent at originSent.
	origin     int64
	originSent time.Duration
	round      int32 // the request's round in that call (see Pair.Round), 0 when none
	// rev is the MCP revision that governs the request and its answer;
	// flags are what the MCP rules noted of it (flLogLevel, …).
	rev   revision
	flags uint8
	// tool is the name a tools/call request called (its buffer is
	// reused with the flight), for the rules on its result.
	tool []byte
	// progress is the latest progress value of its token, if hasProgress.
	progress    float64
	hasProgress bool
	state       flightState
	// gen counts the flight's reuses, so that heap and ring entries made
	// for an earlier use read as stale.
	gen uint32
}

type flightState uint8

const (
	flying    flightState = iota
	answeredS             // tombstone: answered
	cancelled             // tombstone: cancelled, one answer still allowed
	gapped                // tombstone: its answer may be among frames missing from the record; one answer still allowed
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
	gapped     bool // its answer may be among frames missing from the record: it is not judged
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
	if s := t.shown(); s != t {
		return s.Profile()
	}
	if t.profile == Auto {
		return JSONRPC
	}
	return t.profile
}

// ProtocolVersion is the MCP protocol version the session negotiated, or "".
func (t *Tracker) ProtocolVersion() string { return t.shown().version }

// Evictions counts requests dropped because the in-flight table was full.
func (t *Tracker) Evictions() int64 {
	n := t.evictions
	if t.convs != nil {
		for _, c := range t.convs.all {
			n += c.evictions
		}
	}
	return n
}

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
	t.findings = t.findings[:0]
	t.pairs = t.pairs[:0]
	if m.HTTP != nil && !t.inConv && (m.Dir == H2S || m.Dir == S2H) {
		return t.route(seq, at, m, d)
	}
	t.delivery = d
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
	if m.HTTP != nil {
		t.httpRules(seq, m)
	}
	return Observation{Findings: t.findings, Pairs: t.pairs}
}

// Advance moves the clock to now and reports requests that passed their
// deadline (timeout) and frames whose strict answer never came
// (unanswered-invalid). The slice is reused by the next call.
func (t *Tracker) Advance(now time.Duration) []SessionFinding {
	t.findings = t.findings[:0]
	t.advance(now)
	t.eachConversation(func(c *Tracker) []SessionFinding { return c.Advance(now) })
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

// flightKey builds direction + id key in t.key; in a stateless HTTP
// conversation, the exchange too (see conversations.go).
func (t *Tracker) flightKey(dir Direction, id ID) []byte {
	t.key = append(t.key[:0], byte(dir))
	t.key = id.AppendKey(t.key)
	if t.keyExchange != 0 {
		t.key = append(strconv.AppendInt(append(t.key, 0), t.keyExchange, 10), 0)
	}
	return t.key
}

func (t *Tracker) timeoutFor(method string) time.Duration {
	if d, ok := t.opts.MethodTimeouts[method]; ok {
		return d
	}
	return t.opts.Timeout
}
