package tap

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// The recorder is a pipeline, so that the relays only copy what they
// forward, and the work of recording spreads over the machine's cores:
//
//	relays, stderr, injections ──note──▶ intake (ordered, bounded)
//	  ──▶ dispatcher: splits frames, in order, into batches
//	  ──▶ encoders (encodeWorkers at once): classify, redact and encode
//	      each frame of a batch; batches are independent
//	  ──▶ committer: in batch order, the tracker, the session file, live
//	      subscribers
//
// Every stage keeps the order in which bytes crossed the tap, so the file
// holds an answer after what it answers. The intake and the batches in
// flight are bounded: when recording falls behind, note waits (the tap
// slows down rather than lose a frame).
//
// At low rates the pipeline keeps out of the peers' way: a relay notes a
// frame and forwards it before it wakes the recorder, a trickle of relayed
// frames gathers for a millisecond before the dispatcher takes it (stderr
// lines and events wake it at once), and a small batch with nothing else
// in flight is encoded and committed by the dispatcher itself, waking no
// other thread.

// intakeLimit bounds the bytes noted and not yet taken by the dispatcher.
const intakeLimit = 1 << 20

// batchBytes is how much frame data the dispatcher puts in a batch before
// it hands it on (a batch also goes as soon as the intake is empty).
const batchBytes = 64 << 10

// batchesInFlight bounds the batches between the dispatcher and the
// committer.
const batchesInFlight = 6

// encodeWorkers is how many batches are encoded at once.
const encodeWorkers = 2

// An intake holds noted items in order, their bytes copied.
type intake struct {
	mu     sync.Mutex
	ready  sync.Cond // the dispatcher waits here for items (or closing)
	room   sync.Cond // noters wait here for room (or closing)
	items  []item    // data and header index buf (see spans)
	spans  []intakeSpans
	buf    []byte
	closed bool
	timer  *time.Timer // wakes the dispatcher recordDelay after a kick
	armed  bool
	// inHand: the dispatcher took items and has not handed them all on
	// yet (they are in neither the intake nor a batch).
	inHand bool
	// took is how many items the dispatcher's last take got: many, and
	// the traffic is heavy enough to gather for longer (see kick).
	took int
	// waited sums how long notes waited for room (ns): the tap's
	// traffic waiting for its recorder, which is short of CPU. Relays
	// that wait at once each add their wait, so the sum may grow faster
	// than the clock.
	waited atomic.Int64
}

type intakeSpans struct{ data, header, original [2]int }

func (in *intake) init() { in.ready.L, in.room.L = &in.mu, &in.mu }

// put copies it into the intake, waiting while it is full; with wake it
// wakes the dispatcher (without, the caller calls kick soon). It reports
// false when the intake is closed.
func (in *intake) put(it item, wake bool) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.buf) >= intakeLimit {
		// Full: whoever noted quietly may not have kicked yet (its
		// write may be what waits), so wake the dispatcher here.
		in.ready.Signal()
		start := time.Now()
		for len(in.buf) >= intakeLimit && !in.closed {
			in.room.Wait()
		}
		in.waited.Add(int64(time.Since(start)))
	}
	if in.closed {
		return false
	}
	var sp intakeSpans
	sp.data = [2]int{len(in.buf), len(in.buf) + len(it.data)}
	in.buf = append(in.buf, it.data...)
	sp.header = [2]int{len(in.buf), len(in.buf) + len(it.header)}
	in.buf = append(in.buf, it.header...)
	sp.original = [2]int{len(in.buf), len(in.buf) + len(it.original)}
	in.buf = append(in.buf, it.original...)
	hadHeader, hadOriginal := it.header != nil, it.original != nil
	it.data, it.header, it.original = nil, nil, nil
	if hadHeader {
		it.header = []byte{} // marks that a header is there, maybe empty
	}
	if hadOriginal {
		it.original = []byte{}
	}
	in.items = append(in.items, it)
	in.spans = append(in.spans, sp)
	if wake && len(in.items) == 1 {
		in.ready.Signal()
	}
	return true
}

// settled reports whether nothing noted waits for the dispatcher or is in
// its hands (batches on their way are the recorder's to count).
func (in *intake) settled() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.items) == 0 && !in.inHand
}

// kick has the dispatcher take what waits: at once when it is a lot,
// otherwise a little later, so that frames that come in a trickle (a
// request, then its answer) are recorded a few at a time, rather than each
// waking threads while the peers are busy answering. The wait is short
// (recordDelay) while takes are small, so that the recorder's work comes
// in small pieces between a request and its answer rather than as a
// burst in the middle of a later one; once a take holds many items, the
// traffic is heavy and they gather for longer (recordDelayBusy), so that
// writes stay batched under load.
func (in *intake) kick() {
	in.mu.Lock()
	defer in.mu.Unlock()
	switch {
	case len(in.items) == 0:
	case len(in.buf) >= kickBytes:
		in.ready.Signal()
	case !in.armed:
		in.armed = true
		d := in.gatherFor()
		if in.timer == nil {
			in.timer = time.AfterFunc(d, in.fire)
		} else {
			in.timer.Reset(d)
		}
	}
}

// gatherFor is how long a kick lets frames gather (see kick); the
// caller holds mu.
func (in *intake) gatherFor() time.Duration {
	if in.took >= busyTake {
		return recordDelayBusy
	}
	return recordDelay
}

// fire wakes the dispatcher a while after a kick.
func (in *intake) fire() {
	in.mu.Lock()
	in.armed = false
	if len(in.items) > 0 {
		in.ready.Signal()
	}
	in.mu.Unlock()
}

// recordDelay is how long a kick lets a trickle of frames gather, and
// recordDelayBusy how long many frames gather once a take held busyTake
// items or more.
const (
	recordDelay     = 100 * time.Microsecond
	recordDelayBusy = time.Millisecond
	busyTake        = 32
)

// kickBytes is how much waits before a kick wakes the dispatcher at once.
const kickBytes = 64 << 10

// take swaps the intake's items for the empty slices given, waiting for at
// least one item or closing. The items' bytes stay valid until the next
// take. It reports whether the intake is closed and empty.
func (in *intake) take(items []item, spans []intakeSpans, buf []byte) ([]item, []intakeSpans, []byte, bool) {
	in.mu.Lock()
	in.inHand = false // the last take's items are all handed on
	for len(in.items) == 0 && !in.closed {
		in.ready.Wait()
	}
	got, gotSpans, gotBuf := in.items, in.spans, in.buf
	in.items, in.spans, in.buf = items[:0], spans[:0], buf[:0]
	done := in.closed && len(got) == 0
	in.inHand = len(got) > 0
	in.took = len(got)
	in.room.Broadcast() // room to note again
	in.mu.Unlock()
	for i := range got {
		sp := gotSpans[i]
		got[i].data = gotBuf[sp.data[0]:sp.data[1]:sp.data[1]]
		if got[i].header != nil {
			got[i].header = gotBuf[sp.header[0]:sp.header[1]:sp.header[1]]
		}
		if got[i].original != nil {
			got[i].original = gotBuf[sp.original[0]:sp.original[1]:sp.original[1]]
		}
	}
	return got, gotSpans, gotBuf, done
}

func (in *intake) close() {
	in.mu.Lock()
	if in.timer != nil {
		in.timer.Stop()
	}
	in.closed = true
	in.ready.Broadcast()
	in.room.Broadcast()
	in.mu.Unlock()
}

// A batch carries frames and events from the dispatcher through an encoder
// to the committer.
type batch struct {
	data    []byte // the frames' bodies and header blocks
	jobs    []job
	out     []byte // the encoded records, each after one spare byte
	profile classify.Profile
	done    chan struct{} // the encoder finished
}

type jobKind uint8

const (
	jobFrame jobKind = iota
	jobEvent
	jobSpool   // a frame too large to hold, recorded from its spool
	jobLSPNote // a direction's traffic showed Content-Length framing
)

// A job is one record to make.
type job struct {
	kind        jobKind
	t           time.Duration
	dir         classify.Direction
	src         string
	body        [2]int // in batch.data
	header      [2]int // in batch.data; header[1] < 0: none
	info        classify.FrameInfo
	eof         bool
	captured    bool
	partial     bool          // the open end of a forced raw injection
	outcome     string        // what became of a frame the tap held (sessions.Held…)
	heldFor     time.Duration // how long it was held
	original    [2]int        // in batch.data: an edited frame's bytes as they came in, with hasOriginal
	hasOriginal bool
	event       sessions.EventRecord
	spool       *spool
	spoolErr    error  // the spool could not be made
	held        []byte // a spooled frame's first bytes, owned by the job
	http        *sessions.HTTPInfo

	// Set by the encoder:
	m        classify.Message
	line     [2]int // the record in batch.out, with its spare byte
	redacted bool
	err      error
}

// originalIn is an edited frame's original bytes in b, nil when none.
func (j *job) originalIn(b *batch) []byte {
	if !j.hasOriginal {
		return nil
	}
	return b.bytes(j.original)
}

func (b *batch) bytes(s [2]int) []byte {
	if s[1] < 0 {
		return nil
	}
	return b.data[s[0]:s[1]:s[1]]
}

// reset empties b for reuse; a batch that grew for a huge frame is let go.
func (b *batch) reset() bool {
	if cap(b.data) > 4*batchBytes || cap(b.out) > 8*batchBytes {
		return false
	}
	clear(b.jobs) // let go of what the jobs held (a huge frame's first bytes)
	b.data, b.jobs, b.out = b.data[:0], b.jobs[:0], b.out[:0]
	return true
}

// newBatch makes an empty batch; its buffers grow with the first frames
// it takes, so that a quiet session does not pay for room it never uses.
func newBatch() *batch {
	return &batch{done: make(chan struct{}, 1)}
}

// encode masks, classifies and encodes every frame of b. It touches
// nothing but b (and the redactor, which only reads).
func (r *recorder) encode(b *batch) {
	for i := range b.jobs {
		j := &b.jobs[i]
		switch j.kind {
		case jobFrame:
			start := len(b.out)
			b.out = append(b.out, 0) // spare
			b.out, j.err = r.encodeFrame(b.out, j, b.bytes(j.body), b.bytes(j.header), j.originalIn(b), b.profile)
			j.line = [2]int{start, len(b.out)}
		case jobSpool:
			// The frame's first bytes are judged masked, as its record
			// will be; a secret cut by their end is in no record.
			j.held, _ = r.redact.Mask(j.held)
			j.m = classify.ClassifyFramed(j.held, j.info, j.dir, b.profile)
		}
	}
}

// encodeFrame masks a frame's body and header block, judges the masked
// frame by profile p (in j.m) and appends its record. Everything the
// record and the live views say of the frame, its derived fields (kind,
// id, method) and findings too, comes from the masked bytes, as a reader
// of the session file judges them.
func (r *recorder) encodeFrame(dst []byte, j *job, body, header, original []byte, p classify.Profile) ([]byte, error) {
	n := len(body)
	body, maskedBody := r.redact.Mask(body)
	header, maskedHeader := r.redact.MaskHeader(header)
	j.redacted = maskedBody || maskedHeader
	rec := sessions.FrameRecord{T: int64(j.t / time.Microsecond), Dir: j.dir, Src: j.src, Frame: body, Header: header,
		EOF: j.eof, Captured: j.captured, Redacted: j.redacted, Partial: j.partial, Held: j.outcome, HeldUs: int64(j.heldFor / time.Microsecond), HTTP: j.http}
	if original != nil {
		var masked bool
		rec.Original, masked = r.redact.Mask(original)
		rec.Redacted = rec.Redacted || masked
	}
	if j.dir != classify.Err {
		info := j.info
		info.BodyLen += int64(len(body) - n)
		info.Size += int64(len(body) - n)
		if j.http != nil && len(body) == 0 {
			// What HTTP did (a 202, an error status), no message.
			j.m = classify.NoMessage(j.dir, p)
		} else {
			j.m = classify.ClassifyFramed(body, info, j.dir, p)
		}
		rec.Kind = j.m.Kind.String()
		if j.m.HasID() {
			rec.ID = j.m.ID().Raw
		}
		rec.Method = j.m.Method()
	}
	return sessions.AppendFrameRecord(dst, rec)
}

// encoders runs encodeWorkers goroutines until work is closed.
func (r *recorder) encoders(work <-chan *batch) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range encodeWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				r.encode(b)
				b.done <- struct{}{}
			}
		}()
	}
	return &wg
}
