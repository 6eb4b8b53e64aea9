package tap

import (
	"bufio"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// An item is what the relays, the stderr reader and injections hand the
// recorder, in the order the bytes were written.
type item struct {
	at       time.Duration
	dir      classify.Direction
	data     []byte // wire bytes (split by the recorder), or one whole frame body
	header   []byte // LSP header block of a whole frame, when not plain
	src      string
	whole    bool // data is one whole frame body (an injection)
	captured bool // data is whole frames kept from their receiver
	partial  bool // with whole: the open end of a forced raw injection
	eof      bool // the direction's stream ended
	event    *sessions.EventRecord
	// A frame the tap held for the user (whole): what became of it, how
	// long it was held, and for an edited one the bytes that came in.
	held     string
	heldFor  time.Duration
	original []byte
	// http is what HTTP said of a whole frame the HTTP tap relayed.
	http *sessions.HTTPInfo
}

// recorder writes the session file and feeds live subscribers, through the
// pipeline described in pipeline.go. note may be called from any
// goroutine.
type recorder struct {
	in      intake
	started time.Duration    // the session clock at the header's Started
	file    sessionFile      // the session file; nil when not recording
	bw      *bufio.Writer    // buffers file; nil when not recording
	w       *sessions.Writer // writes through tee

	limit    int // bytes of a frame held for classification
	tracker  *classify.Tracker
	redact   *sessions.Redactor
	hub      *hub
	warn     func(string)
	calls    *calls // nil unless Options.Calls is set
	spoolDir string // where frames too large to hold wait for their end
	// wanted says whether anyone reads what the tap notes: the session
	// file, a live view or tail, the OTLP exporter, an intercept or an
	// injection. Until then the relays note nothing (see begin), and
	// the tap relays as a bare relay does.
	wanted  atomic.Bool
	beginMu sync.Mutex
	// profile is the tracker's profile as of the last committed frame:
	// what encoders judge frames by (the committer judges again the
	// rare frame whose profile changed on the way).
	profile atomic.Uint32

	free     chan *batch // batches to fill
	work     chan *batch // batches to encode
	commits  chan *batch // batches to commit, in order
	pipeDone chan struct{}
	stop     chan struct{}

	// The dispatcher's:
	dirs [4]dirState
	// lspNoted marks the directions the file already says used
	// Content-Length framing.
	lspNoted [4]bool
	cur      *batch

	// The committer's, under mu (held while a batch is committed, on the
	// flush tick, and while a subscriber attaches):
	mu      sync.Mutex
	closed  bool
	last    []byte      // the record the writer wrote last
	written int64       // bytes the writer has written
	seq     int64       // line number of the last record written (header: 1)
	lines   []published // records of this batch, for the hub
	missing [4]int64    // frames not written since the file failed, per direction
	failing bool
	ends    []batched // records written since the last flush (dir 0: an event)
	// synced is where the file's last whole record ends, as far as the
	// file is known to hold it; after a failed write the file is cut back
	// to a record's end (torn: it could not be, and a record is cut short).
	synced int64
	torn   bool
	gone   [4]int64 // frames missing from the file, per direction, for the whole session
	// unwritten are the event records the file has yet to take, in
	// order: those noted while it failed, and those a failed write cut
	// back off it (the exit, a note); resume writes them.
	unwritten []sessions.EventRecord
	err       error         // the last write to the file that failed
	said      bool          // the file failed and took writes again, and the tap said so
	lastAt    time.Duration // when the last frame recorded crossed (the clock of now())
	out       []byte
	scratch   []byte

	// stats, read by ls through the hub
	frames, errs, userErrs int64

	// saidSpool: a frame too large to hold could not be kept to be
	// recorded, and the tap said so.
	saidSpool bool
	// saidInClear: the redactor left a secret in clear, and the tap said
	// so (sayInClear).
	saidInClear bool
}

// dirState assembles one direction's frames.
type dirState struct {
	sp    *classify.Splitter
	asm   []byte // the open frame's bytes, up to limit
	size  int64
	over  bool   // the open frame is larger than limit: asm holds its start
	spool *spool // the bytes of a frame over the limit, when recording
	err   error  // the spool could not be made
	at    time.Duration
	pend  []byte // bytes the splitter has not consumed yet, for its next call
	// held are injected frames written after the open frame ended on the
	// wire, where the splitter cannot see that end yet (it needs the
	// bytes after it): they are recorded once the open frame is.
	held []item
}

// sessionFile is what the recorder needs of the session file (an
// *os.File): to write it, and after a failed write to cut it back to the
// end of a whole record.
type sessionFile interface {
	io.WriteCloser
	io.Seeker
	Truncate(size int64) error
}

// batched is a record in the file's buffer: where it ends, and its
// direction (0 for an event); gap: a gap record in a frame's place (see
// unspooled), whose frame counts missing; event: an event record's
// fields, to write it again if a failed write cuts it back off.
type batched struct {
	end   int64
	dir   classify.Direction
	gap   bool
	event *sessions.EventRecord
}

type published struct {
	seq    int64
	line   []byte
	offset int64 // where the record starts in the session file
	end    int64 // where it ends (offset, for a line not in the file)
	frame  bool  // a frame's record (not an event's, nor a line of findings)
	missed bool  // a note in the place of a frame views cannot get (see tooLarge)
}

// begin has the tap note what crosses it from each stream's next frame
// boundary on (the server's stderr: from its next line), once someone
// reads what it notes. The record then begins with a note that says
// so, in order before the first frame noted: a view that attached to a
// tap that noted nothing is told where its record begins, and has every
// frame from there on.
func (r *recorder) begin() {
	if r.wanted.Load() {
		return
	}
	r.beginMu.Lock()
	defer r.beginMu.Unlock()
	if r.wanted.Load() {
		return
	}
	r.note(item{at: now(), event: &sessions.EventRecord{Kind: sessions.EventNote, Text: noteBegins}})
	r.wanted.Store(true)
}

// noteBegins is the note at the start of the record of a tap that noted
// nothing until someone read it.
const noteBegins = "this tap records no file and noted nothing while no one read it: the record of the session begins here, and the frames that crossed before are in no record"

// note hands an item to the recorder: its bytes are copied, and it is
// recorded in the order notes were made. A relay notes each chunk just
// before it forwards it, so the file's order is the order bytes crossed
// the tap. note waits only when recording is a whole intake behind.
func (r *recorder) note(it item) {
	r.in.put(it, true) // after close, a late write is not recorded
}

// noteQuietly notes an item without waking the recorder: a relay wakes it
// (kick) after it has forwarded the bytes, so that waking another thread
// does not delay them.
func (r *recorder) noteQuietly(it item) { r.in.put(it, false) }

// kick has the recorder take items noted quietly (see intake.kick: soon,
// or at once when many wait).
func (r *recorder) kick() { r.in.kick() }

// parseLimit is how much of a frame the recorder holds to classify it: a
// larger frame is judged from its first parseLimit bytes (finding
// oversize) while the rest goes to the session file as it comes. Less than
// classify.MaxParse, so that the tap's memory stays small whatever the
// frames; the session header says so, and readers of the file judge the
// same way.
const parseLimit = 16 << 20

// flushAt is how much the file buffer holds before a write.
const flushAt = 64 << 10

// soloRecord is the size past which a record is flushed as soon as it is
// written, on its own (the records before it go with it). A write of
// that size costs little next to making the record.
const soloRecord = 16 << 10

// flushEvery bounds how long a record waits in the buffer before it is in
// the file and on its way to live views.
const flushEvery = 20 * time.Millisecond

// start runs the pipeline's goroutines.
func (r *recorder) start() {
	r.in.init()
	r.profile.Store(uint32(r.tracker.Profile()))
	r.free = make(chan *batch, batchesInFlight)
	r.work = make(chan *batch, batchesInFlight)
	r.commits = make(chan *batch, batchesInFlight)
	for range batchesInFlight {
		r.free <- newBatch()
	}
	r.pipeDone = make(chan struct{})
	enc := r.encoders(r.work)
	go r.dispatch()
	go func() {
		r.commit()
		enc.Wait()
		close(r.pipeDone)
	}()
}

// close ends the session once everything noted so far is recorded; items
// noted later are dropped.
func (r *recorder) close() {
	r.in.close()
	<-r.pipeDone
	r.mu.Lock()
	r.closed = true
	r.flush()
	r.mu.Unlock()
	close(r.stop)
}

// run flushes on a tick and moves the tracker's clock, so timeouts show
// while nothing crosses the tap, until close.
func (r *recorder) run() {
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	last := now()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.kick() // a noter that forgot to would only delay its records
			r.mu.Lock()
			if n := now(); n-last >= 250*time.Millisecond {
				last = n
				r.timeouts(r.settledClock(n))
			}
			r.flush()
			r.mu.Unlock()
		}
	}
}

// settledClock is how far the tracker's clock may move at now (under mu):
// to now when nothing noted waits to be recorded, else only to the last
// recorded frame's time, so that an answer still on its way through the
// pipeline is not taken for missing.
func (r *recorder) settledClock(now time.Duration) time.Duration {
	if r.in.settled() && len(r.free) == batchesInFlight {
		return now
	}
	return max(r.lastAt, r.started)
}

// dispatch takes noted items in order, splits them into frames and hands
// them on in batches.
func (r *recorder) dispatch() {
	var items []item
	var spans []intakeSpans
	var buf []byte
	for {
		got, gotSpans, gotBuf, done := r.in.take(items, spans, buf)
		if done {
			break
		}
		for _, it := range got {
			r.process(it)
		}
		r.submit()
		items, spans, buf = got, gotSpans, gotBuf
	}
	r.submit()
	close(r.work)
	close(r.commits)
}

// batch is the batch being filled.
func (r *recorder) batch() *batch {
	if r.cur == nil {
		r.cur = <-r.free
		r.cur.profile = classify.Profile(r.profile.Load())
	}
	return r.cur
}

// submit hands the batch being filled on.
func (r *recorder) submit() {
	b := r.cur
	if b == nil || len(b.jobs) == 0 {
		return
	}
	r.cur = nil
	if len(b.jobs) <= inlineJobs && len(r.free) == batchesInFlight-1 {
		// A few frames and nothing else in flight: record them here.
		// Handing them on would wake two more threads for a little
		// work, which costs a small machine more than the work, and
		// takes the CPU the peers need to answer.
		r.encode(b)
		r.commitBatch(b)
		return
	}
	alone := heavy(b) // b is not ours once handed on
	r.work <- b
	r.commits <- b
	if alone {
		// A large frame: let it through before the next batch, so that
		// at most one such copy is in flight.
		r.drain()
	}
}

// inlineJobs is how many records the dispatcher makes itself when nothing
// else is in flight.
const inlineJobs = 16

// heavyBatch is the frame data past which a batch travels alone.
const heavyBatch = 1 << 20

func heavy(b *batch) bool {
	if len(b.data) > heavyBatch {
		return true
	}
	for i := range b.jobs {
		if len(b.jobs[i].held) > 0 {
			return true
		}
	}
	return false
}

// drain waits until every batch handed on is recorded.
func (r *recorder) drain() {
	var back [batchesInFlight]*batch
	for i := range back {
		back[i] = <-r.free
	}
	for _, b := range back {
		r.free <- b
	}
}

// addJob puts j in the batch, with copies of body and header (nil: none).
func (r *recorder) addJob(j job, body, header []byte) {
	b := r.batch()
	j.header = [2]int{0, -1}
	if header != nil {
		j.header = [2]int{len(b.data), len(b.data) + len(header)}
		b.data = append(b.data, header...)
	}
	j.body = [2]int{len(b.data), len(b.data) + len(body)}
	b.data = append(b.data, body...)
	b.jobs = append(b.jobs, j)
	if len(b.data) >= batchBytes {
		r.submit()
	}
}
