package sessions

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// A CodeSet is a set of finding codes, one bit a code.
type CodeSet uint64

// Has reports whether c is in the set.
func (s CodeSet) Has(c classify.Code) bool { return c < 64 && s&(1<<c) != 0 }

// With returns the set with c added; a code of 64 or more is left out.
func (s CodeSet) With(c classify.Code) CodeSet {
	if c >= 64 {
		return s
	}
	return s | 1<<c
}

// Len is the number of codes in the set.
func (s CodeSet) Len() int { return bits.OnesCount64(uint64(s)) }

// Codes lists the set's codes in order.
func (s CodeSet) Codes() []classify.Code {
	out := make([]classify.Code, 0, s.Len())
	for s != 0 {
		c := bits.TrailingZeros64(uint64(s))
		out = append(out, classify.Code(c))
		s &^= 1 << c
	}
	return out
}

// Status is where a request stands, or how a response answered.
type Status uint8

const (
	StatusNone      Status = iota // not a request or a response
	StatusPending                 // a request waiting for its answer
	StatusOK                      // answered with a result; a response with a result
	StatusError                   // answered with an error; a response with an error
	StatusLate                    // answered after it had timed out
	StatusCancelled               // cancelled by its sender (an answer may still have come)
	StatusTimedOut                // past its timeout with no answer yet
	StatusUntracked               // the tracker stopped following it (too many in flight)
	StatusGap                     // its answer may be among frames missing from the file (a gap record)
)

var statusNames = [...]string{
	StatusNone:      "",
	StatusPending:   "pending",
	StatusOK:        "ok",
	StatusError:     "error",
	StatusLate:      "late",
	StatusCancelled: "cancelled",
	StatusTimedOut:  "timed out",
	StatusUntracked: "untracked",
	StatusGap:       "gap",
}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return "unknown"
}

// An Entry is what an Index knows about one record of a session file:
// enough to draw a row and to filter, without the payload, which
// ReadRecord reads back from the file.
type Entry struct {
	Seq    int64              // the record's line number in the file (the header is line 1)
	Offset int64              // byte offset of the record's line in the file; -1 when unknown
	T      int64              // microseconds since the session started
	Dir    classify.Direction // H2S, S2H, Err; 0 for an event record (a gap's direction for a gap)
	Event  string             // "" for a frame, else the event kind (EventStart, EventExit, EventGap, EventNote, or one this version does not know)
	Kind   classify.Kind      // what the frame is; 0 for err frames and event records
	Src    string             // SrcWire, SrcInject, SrcEdit, or "other" for a value this version does not know
	// Captured, Redacted, EOF and Partial are the frame record's flags.
	Captured, Redacted, EOF, Partial bool
	// Held is what became of a frame the tap held (a Held… outcome; ""
	// when it was not held, "other" for one this version does not know).
	Held string
	Size int64  // the frame's bytes (the body, for lsp)
	ID   string // the id as on the wire ("" when none; "" for a batch)
	// Method is the frame's method; for a response, its request's method;
	// for a frame of kind http, what HTTP did (HTTPLabel).
	Method string
	// Codes holds every finding code about the frame: its own, its batch
	// members', and session findings, also those reported later
	// (timeouts, cancellations).
	Codes CodeSet
	Worst classify.Severity
	// Pair is the line of the paired request (on a response) or response
	// (on a request), 0 when none. A batch links its first pair.
	Pair int64
	// Latency is the time from request to response, on both sides of a pair.
	Latency time.Duration
	Status  Status
	// Call ties the frames of a multi round-trip call together.
	Call CallLink
}

// A CallLink ties the requests of a multi round-trip call (MCP
// 2026-07-28: a result input_required, then a retry) to the call's first
// request. The zero CallLink is a frame of no such call.
type CallLink struct {
	// Origin is the call's first request, on a retry and on its answer.
	Origin int64
	// CallLatency is the time from the first request, on a retry's answer.
	CallLatency time.Duration
	// InputRequired is set on an answer that asked the host for input:
	// the call goes on in a retry.
	InputRequired bool
	// Round is the round an answer ends (1 for the first request's), on
	// the final answer how many rounds the call took (classify.Pair.Round).
	Round int
}

// IsFrame reports whether the entry is a frame rather than an event record.
func (e *Entry) IsFrame() bool { return e.Event == "" }

// An EntryFinding is one finding about an entry, with its message.
type EntryFinding struct {
	classify.Finding
	// Member is the batch member the finding is about, or -1.
	Member int
	// Related is the line of the frame the finding links to, or 0.
	Related int64
}

// Counts sum up an Index.
type Counts struct {
	Entries       int // records indexed: frames and events
	H2S, S2H, Err int // frame records per direction
	Events        int // event records
	// Errors, Warnings and Infos count entries by their worst finding of
	// the peers' (the user's own are counted apart, in UserErrors…).
	Errors, Warnings, Infos int
	Pending                 int   // requests waiting for an answer
	Missing                 int64 // frames the file's gap records count missing (it could not hold them)
	Skipped                 int   // lines that could not be read as a record
	SkippedBytes            int64 // the bytes those lines held
	// UserErrors, UserWarnings and UserInfos count entries by their worst
	// finding of the user's own: about a frame the user injected or
	// edited, or that links to one (as check tells them apart).
	UserErrors, UserWarnings, UserInfos int
	// Exit is set once the session's exit record is indexed: a file
	// without one was cut short (its tap was killed, its disk filled).
	Exit bool
	// ExitCode and ExitSignal are what the exit record says: the
	// server's exit status, and the signal that ended it ("" for none).
	ExitCode   int
	ExitSignal string
}

// IndexOptions configure an Index.
type IndexOptions struct {
	// Profile judges the session; Auto takes the header's profile, and
	// when that is auto too, decides from the traffic.
	Profile classify.Profile
	// Timeout for requests (0: the header's timeout_ms, else
	// classify.DefaultTimeout; negative turns timeouts off).
	Timeout time.Duration
	// MethodTimeouts override Timeout per method.
	MethodTimeouts map[string]time.Duration
	// Worker, when not nil, is called first in each goroutine the index
	// starts to read and classify a file or stream (to lower its
	// priority, say). The goroutine ends when the reading does.
	Worker func()
	// Pace, when not nil, is called before each batch of records (a MiB
	// or so) is read from a file or stream; it may wait, to hold the
	// indexing back (a live view waits while the machine has no CPU to
	// spare). It should return soon once ctx is done.
	Pace func(ctx context.Context)
	// OnPair, when not nil, is called with each pair the tracker makes
	// (every member of a batch too, where an entry links only its first),
	// in the order of the responses, while the index is locked: it must
	// not call the Index. isError says the answer (a batch's member that
	// answers, not the batch) was an error.
	OnPair func(p classify.Pair, isError bool)
	// Baseline, when not nil, gives the baseline accepted for an MCP
	// server by its name (see classify.TrackerOptions.Baseline).
	Baseline func(server string) *classify.Baseline
}

// An Index is the compact, in-memory index of one session: an entry a
// record, of about 85 bytes with no pointers, and the messages of findings
// only for the entries that have some. Payloads stay in the file, to be
// read back with ReadRecord. The Index classifies frames and runs a
// tracker as records are added, and updates earlier entries when a pair
// or a session finding about them arrives (a response, a timeout).
//
// An Index is safe for concurrent use. Records must be added in file
// order, so one goroutine adds them (Add, or ReadFile or Follow, which add
// as they read); any goroutine may call Advance, and any number may read
// (Len, At, Entries, BySeq, Findings, Pending, Counts, Header, Profile)
// while records are being added: they see the records added so far, and
// an entry read twice may have changed in between (a request answered).
// Writers hold an RWMutex for a few records at a time; readers share it.
type Index struct {
	opts IndexOptions

	mu       sync.RWMutex
	entries  chunks[entry]
	findings chunks[finding]
	ids      arena
	methods  []string // interned; methods[0] is ""
	counts   Counts
	header   Header
	hasHdr   bool
	framings Framings          // each direction's, from the header and the notes
	framed   [4]bool           // by direction: framings says it from its own traffic (see Framed)
	tr       *classify.Tracker // nil until the header or the first record
	lastSeq  int64

	methodIDs  map[string]uint32
	lastMethod uint32
	messages   map[string]string  // interned finding messages, bounded
	batches    map[int64]int32    // batch entries: requests still unanswered, when more than one
	calls      map[int64]CallLink // the frames of multi round-trip calls, by line
	full       []byte             // an lsp header and body, joined to split again
	loading    bool               // ReadFile or Follow has started
	// profile is the tracker's profile after the last record; profileHint
	// holds it for the goroutine that classifies ahead (ReadFile).
	profile     classify.Profile
	profileHint atomic.Uint32
	// plog logs the changes to the requests in flight once pendOn is set
	// (see PendingChanges).
	plog   pendingLog
	pendOn atomic.Bool
}

// entry is an Entry as the Index keeps it: no pointers, 80 bytes.
type entry struct {
	seq, offset, t, size int64
	codes                CodeSet
	pair                 int64
	latency              time.Duration
	id                   idRef
	method               uint32
	finding              int32 // 1 + index of the entry's last finding; 0 for none
	dir                  classify.Direction
	kind                 classify.Kind
	worst                classify.Severity
	flags                uint8 // src in the low bits, then flagCaptured, flagRedacted, flagEOF
	event                uint8 // 1 for an event record, whose kind is in method
	rs                   uint8 // request and response state bits
	held                 uint8 // what became of a held frame: an index in heldNames
	// worst is the worst of the peers' findings, userWorst of the user's.
	userWorst classify.Severity
}

const (
	srcMask      = 3
	flagCaptured = 1 << 2
	flagRedacted = 1 << 3
	flagEOF      = 1 << 4
	flagPartial  = 1 << 5
)

var srcNames = [...]string{SrcWire, SrcInject, SrcEdit, "other"}

// Request and response state of an entry.
const (
	rsRequest   = 1 << iota // the frame holds a request (a batch: one or more)
	rsResponse              // the frame holds a response
	rsAnswered              // every request in it was answered
	rsError                 // a response in it, or the answer to it, was an error
	rsTimedOut              // a request in it timed out
	rsCancelled             // a request in it was cancelled
	rsUntracked             // the tracker stopped following a request in it
	rsGap                   // the answer to a request in it may be among frames missing from the file
)

func (e *entry) status() Status {
	switch {
	case e.rs&rsRequest != 0:
		answered := e.rs&rsAnswered != 0
		switch {
		case e.rs&rsCancelled != 0:
			return StatusCancelled
		case answered && e.rs&rsTimedOut != 0:
			return StatusLate
		case answered && e.rs&rsError != 0:
			return StatusError
		case answered:
			return StatusOK
		case e.rs&rsGap != 0:
			return StatusGap
		case e.rs&rsTimedOut != 0:
			return StatusTimedOut
		case e.rs&rsUntracked != 0:
			return StatusUntracked
		}
		return StatusPending
	case e.rs&rsResponse != 0:
		if e.rs&rsError != 0 {
			return StatusError
		}
		return StatusOK
	}
	return StatusNone
}

// finding is one finding kept for the detail pane, chained per entry.
type finding struct {
	msg     string
	related int64
	prev    int32 // 1 + index of the entry's previous finding; 0 for none
	member  int16
	code    classify.Code
	sev     classify.Severity
}

// maxMessages bounds the distinct finding messages interned.
const maxMessages = 4096

// NewIndex returns an empty Index.
func NewIndex(opts IndexOptions) *Index {
	return &Index{
		opts:      opts,
		methods:   []string{""},
		methodIDs: map[string]uint32{"": 0},
		messages:  map[string]string{},
		batches:   map[int64]int32{},
	}
}

// SetHeader gives the Index the session's header, which decides the
// profile (unless the options name one) and the framing. It must come
// before the first record; a header given later is kept for Header but
// judges nothing.
func (x *Index) SetHeader(h Header) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.header, x.hasHdr = h, true
	if x.tr == nil {
		x.startTracker()
	}
}

// Header returns the header given to SetHeader (or read by ReadFile or
// Follow), and whether there was one.
func (x *Index) Header() (Header, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.header, x.hasHdr
}

// Framings is each direction's framing, as the header and the framing
// notes indexed so far say.
func (x *Index) Framings() Framings {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.framings
}

// Framed reports whether Framings says dir's framing from what dir's
// own traffic showed, or from a header that names one framing: under
// auto, a framing note for dir was indexed, or a frame dir's sender
// sent (not one injected toward its receiver). Until then a tap frames
// what is injected toward dir's receiver as the other direction's
// frames are.
func (x *Index) Framed(dir classify.Direction) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return (dir == classify.H2S || dir == classify.S2H) && x.framed[dir]
}

// startTracker starts the tracker from the header, as check.Run does.
func (x *Index) startTracker() {
	profile := x.opts.Profile
	if profile == classify.Auto {
		if p, err := classify.ParseProfile(x.header.ProfileOrDefault()); err == nil {
			profile = p
		}
	}
	x.framings = x.header.Framings()
	if f, _ := classify.ParseFraming(x.header.FramingOrDefault()); f != classify.FramingAuto {
		x.framed[classify.H2S], x.framed[classify.S2H] = true, true
	}
	x.tr = classify.NewTracker(classify.TrackerOptions{
		Profile:        profile,
		LSPFraming:     x.framings.LSP(),
		Timeout:        x.header.TimeoutOr(x.opts.Timeout),
		MethodTimeouts: x.opts.MethodTimeouts,
		Baseline:       x.opts.Baseline,
	})
	x.profile = x.tr.Profile()
	x.profileHint.Store(uint32(x.profile))
}

// CheckToolCall judges the arguments of a tools/call of the tool name
// against its inputSchema as the session listed it so far (see
// classify.Tracker.CheckToolCall): how the composer judges a call before
// it is sent.
func (x *Index) CheckToolCall(name string, arguments []byte) (classify.SchemaProblem, bool) {
	x.mu.Lock() // a validation counts its work in the compiled schema
	defer x.mu.Unlock()
	if x.tr == nil {
		return classify.SchemaProblem{}, false
	}
	return x.tr.CheckToolCall(name, arguments)
}

// Profile is the profile the session is judged by so far.
func (x *Index) Profile() classify.Profile {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.tr == nil {
		return x.opts.Profile
	}
	return x.tr.Profile()
}

// Capabilities is what the session's peers said of themselves in the
// records indexed so far: their identities, revisions and capabilities,
// each with the line it came from (see classify.Capabilities).
func (x *Index) Capabilities() classify.Capabilities {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.tr == nil {
		return classify.Capabilities{Profile: x.opts.Profile}
	}
	return x.tr.Capabilities()
}

// ToolUse is what the session's MCP tools did in the records indexed so
// far: the tools of the latest tools/list, their calls, errors, latency
// and drift, and the tools called that it does not list (see
// classify.ToolUse).
func (x *Index) ToolUse() classify.ToolUse {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.tr == nil {
		return classify.ToolUse{}
	}
	return x.tr.ToolUse()
}
