package sessions

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
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
	// Method is the frame's method; for a response, its request's method.
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
	messages   map[string]string // interned finding messages, bounded
	batches    map[int64]int32   // batch entries: requests still unanswered, when more than one
	full       []byte            // an lsp header and body, joined to split again
	loading    bool              // ReadFile or Follow has started
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

// startTracker starts the tracker from the header, as Check does.
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
	})
	x.profile = x.tr.Profile()
	x.profileHint.Store(uint32(x.profile))
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
	x.counts.Entries++
	at := time.Duration(ev.T) * time.Microsecond
	if !ev.IsFrame() || ev.Dir == classify.Err {
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
		return
	}
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
		m = classifyRecord(&x.header, ev, p, &x.full)
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
	p.method = x.method(m.Method())
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

// noteProfile publishes the tracker's profile when it has changed.
func (x *Index) noteProfile() {
	if p := x.tr.Profile(); p != x.profile {
		x.profile = p
		x.profileHint.Store(uint32(p))
	}
}

// classifyRecord judges one recorded frame by profile p, as Check does.
// An LSP frame recorded with its header block is split again (in *full),
// so a malformed block reads as it did live.
func classifyRecord(h *Header, ev *Event, p classify.Profile, full *[]byte) classify.Message {
	m := classifyBytes(h, ev, p, full)
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
		if cap(*full) > maxKeptLine {
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
	if p.pair == 0 {
		p.pair, p.latency = pr.Request, pr.Latency
		if m.Kind != classify.KindBatch {
			p.method = x.method(pr.Method)
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
	user := findingByUser(e.seq, related, x.byUser)
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

// Len is the number of entries.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.entries.n
}

// At returns the entry at position i (0 ≤ i < Len()).
func (x *Index) At(i int) Entry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if i < 0 || i >= x.entries.n {
		panic(fmt.Sprintf("sessions: Index.At(%d) with %d entries", i, x.entries.n))
	}
	return x.entry(x.entries.at(i))
}

// Entries appends the entries at positions from to to (clipped to the
// index) to dst, under one lock, and returns it: a screen's worth of rows
// at once.
func (x *Index) Entries(dst []Entry, from, to int) []Entry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	from, to = max(from, 0), min(to, x.entries.n)
	for i := from; i < to; i++ {
		dst = append(dst, x.entry(x.entries.at(i)))
	}
	return dst
}

func (x *Index) entry(e *entry) Entry {
	method, event := x.methods[e.method], ""
	if e.event != 0 {
		method, event = "", method
	}
	return Entry{
		Seq:      e.seq,
		Offset:   e.offset,
		T:        e.t,
		Dir:      e.dir,
		Event:    event,
		Kind:     e.kind,
		Src:      srcNames[e.flags&srcMask],
		Captured: e.flags&flagCaptured != 0,
		Redacted: e.flags&flagRedacted != 0,
		EOF:      e.flags&flagEOF != 0,
		Partial:  e.flags&flagPartial != 0,
		Held:     heldNames[e.held],
		Size:     e.size,
		ID:       string(x.ids.bytes(e.id)),
		Method:   method,
		Codes:    e.codes,
		Worst:    max(e.worst, e.userWorst),
		Pair:     e.pair,
		Latency:  e.latency,
		Status:   e.status(),
	}
}

// BySeq returns the position of the entry for line seq, and whether there
// is one.
func (x *Index) BySeq(seq int64) (int, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.bySeq(seq)
}

func (x *Index) bySeq(seq int64) (int, bool) {
	n := x.entries.n
	if n == 0 || seq < x.entries.at(0).seq {
		return 0, false
	}
	// Lines grow by at least one an entry, so seq is at or before
	// position seq - first; in a file with no blank or unreadable lines it
	// is there.
	hi := n
	if d := seq - x.entries.at(0).seq; d < int64(n) {
		hi = int(d) + 1
		if x.entries.at(hi-1).seq == seq {
			return hi - 1, true
		}
	}
	lo := 0
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if x.entries.at(mid).seq < seq {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < n && x.entries.at(lo).seq == seq
}

// Findings returns the findings about the entry at position i, with their
// messages, in the order they were found: the frame's own, its batch
// members', then session findings.
func (x *Index) Findings(i int) []EntryFinding {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if i < 0 || i >= x.entries.n {
		return nil
	}
	var out []EntryFinding
	for k := x.entries.at(i).finding; k != 0; {
		f := x.findings.at(int(k - 1))
		out = append(out, EntryFinding{
			Finding: classify.Finding{Code: f.code, Severity: f.sev, Message: f.msg},
			Member:  int(f.member),
			Related: f.related,
		})
		k = f.prev
	}
	slices.Reverse(out)
	return out
}

// Pending returns the requests waiting for their answer, oldest first.
func (x *Index) Pending() []classify.PendingRequest {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.pending()
}

// Counts sums up the index so far.
func (x *Index) Counts() Counts {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.counts
}

// ReadRecord reads the record of entry e back from the session file f, by
// its offset, and decodes it as a Reader does; the Event's Line is e.Seq.
// It fails when the line there is not e's record (its time, direction,
// kind or size differ: the file is not the one indexed). To read many
// records, use a RecordReader, which keeps its buffer.
func ReadRecord(f io.ReaderAt, e Entry) (*Event, error) {
	return NewRecordReader(f).Read(e)
}

// chunkShift sizes the chunks entries and findings are kept in: they never
// move once written, and growing costs no copy.
const chunkShift = 12

type chunks[T any] struct {
	c []*[1 << chunkShift]T
	n int
}

// push appends v and returns its position.
func (c *chunks[T]) push(v T) int {
	if c.n>>chunkShift == len(c.c) {
		c.c = append(c.c, new([1 << chunkShift]T))
	}
	c.c[c.n>>chunkShift][c.n&(1<<chunkShift-1)] = v
	c.n++
	return c.n - 1
}

func (c *chunks[T]) at(i int) *T { return &c.c[i>>chunkShift][i&(1<<chunkShift-1)] }

// An arena keeps ids' bytes in chunks that never move. An idRef names
// bytes in it: 0 for none, else chunk+1 in the high 32 bits, offset and
// length below; length 0 means the whole chunk (an id too long to share
// one).
type arena struct{ chunks [][]byte }

type idRef uint64

const (
	arenaChunk = 64 << 10
	arenaAlone = 4 << 10 // ids this long or longer get a chunk of their own
)

func (a *arena) add(b []byte) idRef {
	if len(b) == 0 {
		return 0
	}
	if len(b) >= arenaAlone {
		// Full to its capacity, so no other id is ever added to it.
		c := make([]byte, len(b))
		copy(c, b)
		a.chunks = append(a.chunks, c)
		return idRef(len(a.chunks)) << 32
	}
	k := len(a.chunks) - 1
	if k < 0 || len(a.chunks[k])+len(b) > cap(a.chunks[k]) {
		a.chunks = append(a.chunks, make([]byte, 0, arenaChunk))
		k++
	}
	off := len(a.chunks[k])
	a.chunks[k] = append(a.chunks[k], b...)
	return idRef(k+1)<<32 | idRef(off)<<16 | idRef(len(b))
}

func (a *arena) bytes(r idRef) []byte {
	if r == 0 {
		return nil
	}
	c := a.chunks[r>>32-1]
	n := int(r & 0xffff)
	if n == 0 {
		return c
	}
	off := int(r >> 16 & 0xffff)
	return c[off : off+n]
}
