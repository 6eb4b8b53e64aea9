package tap

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
	synced  int64
	torn    bool
	gone    [4]int64              // frames missing from the file, per direction, for the whole session
	exit    *sessions.EventRecord // the exit record, while the file cannot take it
	err     error                 // the last write to the file that failed
	said    bool                  // the file failed and took writes again, and the tap said so
	lastAt  time.Duration         // when the last frame recorded crossed (the clock of now())
	out     []byte
	scratch []byte

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
// unspooled), whose frame counts missing.
type batched struct {
	end int64
	dir classify.Direction
	gap bool
}

type published struct {
	seq    int64
	line   []byte
	offset int64 // where the record starts in the session file
	end    int64 // where it ends (offset, for a line not in the file)
	frame  bool  // a frame's record (not an event's, nor a line of findings)
	missed bool  // a note in the place of a frame views cannot get (see tooLarge)
}

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

func (r *recorder) process(it item) {
	t := it.at - r.started
	switch {
	case it.event != nil:
		r.addJob(job{kind: jobEvent, t: t, event: *it.event}, nil, nil)
	case it.whole:
		if d := &r.dirs[it.dir]; d.size > 0 || len(d.pend) > 0 {
			held := it
			held.data = bytes.Clone(it.data)
			held.header = bytes.Clone(it.header)
			held.original = bytes.Clone(it.original)
			d.held = append(d.held, held)
			return
		}
		r.whole(it)
	default:
		r.wire(t, it)
	}
}

// whole records an injected frame.
func (r *recorder) whole(it item) {
	n := int64(len(it.data))
	j := job{kind: jobFrame, t: it.at - r.started, dir: it.dir, src: it.src, info: classify.FrameInfo{BodyLen: n, Size: n}, partial: it.partial,
		outcome: it.held, heldFor: it.heldFor}
	if it.original != nil {
		b := r.batch()
		j.original, j.hasOriginal = [2]int{len(b.data), len(b.data) + len(it.original)}, true
		b.data = append(b.data, it.original...)
	}
	r.addJob(j, it.data, it.header)
}

// wire splits a direction's bytes into frames and records each.
func (r *recorder) wire(t time.Duration, it item) {
	d := &r.dirs[it.dir]
	if d.sp == nil {
		d.sp = classify.NewSplitter(r.framingFor(it.dir))
	}
	data := it.data
	if len(d.pend) > 0 {
		data = append(d.pend, data...)
		d.pend = nil
	}
	for len(data) > 0 || it.eof {
		n, end := d.sp.Split(data, it.eof)
		part := data[:n]
		data = data[n:]
		if d.size == 0 && n > 0 {
			d.at = t
		}
		d.size += int64(n)
		// The limit counts body bytes, as readers of the file count
		// them: an LSP header block is held on top of it.
		limit := r.limit + d.sp.HeaderRead()
		if end {
			limit = r.limit + d.sp.Frame().HeaderLen
		}
		whole := end && len(d.asm) == 0 && !d.over && n <= limit
		switch {
		case whole:
			// The frame is all in this item: it goes to the batch
			// from here, with no assembling.
		case d.over:
			if d.spool != nil {
				d.spool.write(part)
			}
		case len(d.asm)+len(part) <= limit:
			d.asm = append(d.asm, part...)
		default:
			r.beginStream(d, part, limit)
		}
		if end {
			frame := d.asm
			if whole {
				frame = part
			}
			r.endFrame(d, frame, t, it.dir, it.captured)
			for _, h := range d.held {
				r.whole(h)
			}
			d.held = d.held[:0]
			continue
		}
		if n == 0 {
			if it.eof {
				break
			}
			// The splitter wants more bytes than this item has: keep
			// them, and show them to it again with the next item's.
			d.pend = append([]byte(nil), data...)
			break
		}
	}
}

// framingFor is the framing the relays use; stderr is always lines.
func (r *recorder) framingFor(dir classify.Direction) classify.Framing {
	if dir == classify.Err {
		return classify.FramingNDJSON
	}
	return r.hub.framing
}

// endFrame records the frame that just ended: frame holds its bytes (up to
// limit of them, for a frame that was spooled).
func (r *recorder) endFrame(d *dirState, frame []byte, t time.Duration, dir classify.Direction, captured bool) {
	info := d.sp.Frame()
	if info.Framing == classify.FramingLSP && !r.lspNoted[dir] && r.hub.framing == classify.FramingAuto && dir != classify.Err {
		// The header said auto; say what this direction's traffic
		// showed, before its first frame, so readers of the file frame
		// and judge it the same way (each direction is decided apart:
		// a host may frame with Content-Length and its server with
		// newlines).
		r.lspNoted[dir] = true
		r.addJob(job{kind: jobLSPNote, t: t, dir: dir}, nil, nil)
	}
	var header []byte
	if info.HeaderLen > 0 && !info.PlainHeader {
		header = frame[:min(info.HeaderLen, len(frame))]
	}
	j := job{kind: jobFrame, t: t, dir: dir, info: info, eof: info.EOF, captured: captured}
	if d.over {
		// The frame's first limit bytes go with the job as they are (no
		// copy), and the direction starts a small buffer again.
		j.kind, j.t, j.spool, j.spoolErr = jobSpool, d.at, d.spool, d.err
		j.held = info.Body(frame)
		if header != nil {
			header = bytes.Clone(header)
		}
		d.spool, d.err, d.over, d.asm = nil, nil, false, nil
		r.addJob(j, nil, header)
		d.size = 0
		return
	}
	r.addJob(j, info.Body(frame), header)
	d.asm = d.asm[:0]
	d.size = 0
}

// beginStream starts recording a frame too large to hold: its first limit
// bytes stay for classification, all of them go to a spool for the file.
func (r *recorder) beginStream(d *dirState, part []byte, limit int) {
	keep := limit - len(d.asm)
	d.asm = append(d.asm, part[:keep]...)
	d.over = true
	if r.bw == nil {
		return
	}
	sp, err := newSpool(r.spoolDir)
	if err != nil {
		d.err = err
		return
	}
	sp.write(d.asm)
	sp.write(part[keep:])
	d.spool = sp
}

// commit records the batches in order, once encoded.
func (r *recorder) commit() {
	for b := range r.commits {
		<-b.done
		r.commitBatch(b)
	}
}

// commitBatch records an encoded batch and frees it.
func (r *recorder) commitBatch(b *batch) {
	r.mu.Lock()
	for i := range b.jobs {
		r.commitJob(b, &b.jobs[i])
	}
	if r.bw != nil && r.bw.Buffered() >= flushAt {
		r.flush()
	}
	r.mu.Unlock()
	if !b.reset() {
		b = newBatch()
	}
	r.free <- b
}

func (r *recorder) commitJob(b *batch, j *job) {
	switch j.kind {
	case jobEvent:
		j.event.T = int64(j.t / time.Microsecond)
		r.writeEvent(j.event)
		if j.event.Kind == sessions.EventExit {
			// What is still owed stays unanswered, as a reader of the
			// file finds at its exit record.
			r.publishFindings(j.t, r.tracker.End(j.t))
		}
	case jobLSPNote:
		r.tracker.UseLSPFraming()
		r.profile.Store(uint32(r.tracker.Profile()))
		r.writeEvent(sessions.EventRecord{T: int64(j.t / time.Microsecond), Kind: sessions.EventNote, Dir: j.dir, Text: sessions.NoteFramingLSP})
	case jobSpool:
		r.lastAt = r.started + j.t
		r.seq++
		if p := r.tracker.Profile(); j.m.Profile != p {
			j.m = classify.ClassifyFramed(j.held, j.info, j.dir, p)
		}
		switch {
		case r.bw == nil:
			r.tooLarge(j)
		case r.failing:
			r.missing[j.dir]++
			if j.spool != nil {
				j.spool.close()
			}
		case j.spoolErr != nil:
			r.unspooled(j, j.spoolErr)
		case j.spool == nil:
		default:
			header, masked := r.redact.MaskHeader(b.bytes(j.header))
			rec := sessions.FrameRecord{T: int64(j.t / time.Microsecond), Dir: j.dir, EOF: j.eof, Captured: j.captured, Header: header, Redacted: masked}
			var se spoolError
			if err := j.spool.record(r.w, rec, int64(j.info.HeaderLen), j.info.BodyLen, r.redact); errors.As(err, &se) {
				r.unspooled(j, se.err)
			} else if err != nil {
				r.fail(j.dir, err)
			} else {
				r.wrote(j.dir)
			}
		}
		r.observe(j.t, &j.m, false, classify.Delivered, j.eof, false)
		r.sayInClear(j.t)
	case jobFrame:
		r.lastAt = r.started + j.t
		r.seq++
		line := b.out[j.line[0]:j.line[1]]
		if p := r.tracker.Profile(); j.dir != classify.Err && j.m.Profile != p {
			// The profile changed while the frame was on its way (the
			// handshake): judge it as the tracker does now.
			r.scratch, j.err = r.encodeFrame(append(r.scratch[:0], 0), j, b.bytes(j.body), b.bytes(j.header), j.originalIn(b), p)
			line = r.scratch
		}
		written := false
		if r.failing {
			r.missing[j.dir]++
		} else if j.err != nil {
			r.fail(j.dir, j.err)
		} else if err := r.w.WriteEncoded(line); err != nil {
			r.fail(j.dir, err)
		} else {
			written = true
			r.wrote(j.dir)
		}
		if j.dir == classify.Err {
			if written {
				r.publishLast(true, nil, nil, nil)
			}
			return
		}
		fate := sessions.Fate{Src: j.src, Held: j.outcome}
		r.observe(j.t, &j.m, written, fate.Delivery(), j.eof, fate.ByUser())
		r.profile.Store(uint32(r.tracker.Profile()))
		r.sayInClear(j.t)
	}
}

// unspooled records a gap record in the place of a frame too large to
// hold whose bytes could not be kept for the session file (its spool
// could not be made or written: a full disk, no file descriptor left),
// while the file itself takes writes: that frame alone is missing, where
// it was, and the records after it go on. The first time, the tap says
// so.
func (r *recorder) unspooled(j *job, err error) {
	if !r.saidSpool {
		r.saidSpool = true
		r.warn(fmt.Sprintf("a frame of %d MiB %s could not be kept to be recorded (%v); the session file records it as missing, and the traffic goes on", (j.info.Size+1<<19)>>20, toward(j.dir), err))
	}
	ev := sessions.EventRecord{T: int64(j.t / time.Microsecond), Kind: sessions.EventGap, Dir: j.dir, Missing: 1}
	if err := r.w.WriteEvent(ev); err != nil {
		r.fail(j.dir, err)
		return
	}
	r.gone[j.dir]++
	r.ends = append(r.ends, batched{end: r.written, dir: j.dir, gap: true})
	r.publishLast(false, nil, nil, nil)
}

// sayInClear says, the first time the redactor left a secret in clear (a
// secret written as a JSON number, outside every string), that it did:
// on stderr, and in a note in the session, after the frame just recorded.
func (r *recorder) sayInClear(t time.Duration) {
	if r.saidInClear {
		return
	}
	name := r.redact.InClear()
	if name == "" {
		return
	}
	r.saidInClear = true
	name = classify.EscapeString(name, 60)
	r.warn(fmt.Sprintf("the value of %s is written as a JSON number in the traffic, outside every string; rpctap masks secrets only inside strings (a frame keeps its shape), so what it records and shows holds that value in clear: if it is a secret, delete the session file when done (rpctap sessions rm FILE)", name))
	r.writeEvent(sessions.EventRecord{T: int64(t / time.Microsecond), Kind: sessions.EventNote,
		Text: "redact: the value of " + name + " is written as a JSON number, outside every string, and is recorded in clear"})
}

// tooLarge tells live views, in the place of a frame too large to hold
// that no file records, that they miss it: the tap kept only its first
// limit bytes, to classify it, and has nowhere to read the rest back
// from. The note counts as a missed frame, as the notes of frames a view
// fell behind do, so that a view says it missed it.
func (r *recorder) tooLarge(j *job) {
	if !r.hub.listening() {
		return
	}
	what := "frame"
	if j.dir == classify.Err {
		what = "line"
	}
	text := fmt.Sprintf("a %s of %d MiB %s is larger than this tap holds (%d MiB), and this tap records no file: this view cannot show it", what, (j.info.Size+1<<19)>>20, toward(j.dir), r.limit>>20)
	line := appendMissedNote(nil, int64(j.t/time.Microsecond), text, 1)
	r.lines = append(r.lines, published{line: line, offset: r.written, end: r.written, missed: true})
}

// observe runs the tracker and publishes the frame just written with what
// it found; d says whether the frame reached its receiver, eof that it
// ended its stream (its sender answers nothing more), byUser that the
// user wrote it (its errors are counted apart).
func (r *recorder) observe(t time.Duration, m *classify.Message, written bool, d classify.Delivery, eof, byUser bool) {
	obs := r.tracker.ObserveDelivery(r.seq, t, m, d)
	r.frames++
	switch {
	case m.Worst() != classify.Error:
	case byUser:
		r.userErrs++
	default:
		r.errs++
	}
	if written {
		r.publishLast(true, m, obs.Findings, obs.Pairs)
	}
	if r.calls != nil {
		r.calls.observe(r.seq, t, m, obs.Pairs)
	}
	if eof && (m.Dir == classify.H2S || m.Dir == classify.S2H) {
		r.publishFindings(t, r.tracker.OutputClosed(m.Dir, t))
	}
}

// publishLast gives the hub the record just written (a frame's, or an
// event's), with the frame's findings, the session findings and pairing
// as extra fields that readers of the file format ignore.
func (r *recorder) publishLast(frame bool, m *classify.Message, sf []classify.SessionFinding, pairs []classify.Pair) {
	if !r.hub.listening() || len(r.last) < 2 {
		return
	}
	line := append([]byte(nil), r.last[:len(r.last)-2]...) // without "}\n"
	line = append(line, `,"seq":`...)
	line = appendInt(line, r.seq)
	line = append(line, `,"offset":`...)
	line = appendInt(line, r.written-int64(len(r.last)))
	if m != nil {
		all := m.Findings
		for i := range m.Members {
			all = append(all[:len(all):len(all)], m.Members[i].Findings...)
		}
		if len(all) > 0 {
			line = append(line, `,"findings":`...)
			line = classify.AppendFindingsJSON(line, all)
		}
		if m.Answer != nil {
			line = append(line, `,"answer":`...)
			line = m.Answer.AppendJSON(line)
		}
	}
	if len(sf) > 0 {
		line = append(line, `,"session_findings":`...)
		line = appendSessionFindings(line, sf)
	}
	for _, p := range pairs {
		line = append(line, `,"pair":{"request":`...)
		line = appendInt(line, p.Request)
		line = append(line, `,"latency_us":`...)
		line = appendInt(line, int64(p.Latency/time.Microsecond))
		line = append(line, '}')
		break
	}
	line = append(line, "}\n"...)
	r.lines = append(r.lines, published{seq: r.seq, line: line, offset: r.written - int64(len(r.last)), end: r.written, frame: frame})
}

// appendSessionFindings writes findings about frames as a JSON array.
func appendSessionFindings(dst []byte, fs []classify.SessionFinding) []byte {
	dst = append(dst, '[')
	for i, f := range fs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"seq":`...)
		dst = appendInt(dst, f.Seq)
		dst = append(dst, `,"finding":`...)
		dst = f.Finding.AppendJSON(dst)
		if f.Related != 0 {
			dst = append(dst, `,"related":`...)
			dst = appendInt(dst, f.Related)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// tee lets the recorder see each record the sessions.Writer writes (one
// Write per record) on its way to the file.
type tee struct{ r *recorder }

func (t tee) Write(p []byte) (int, error) {
	t.r.last = p
	t.r.written += int64(len(p))
	if t.r.bw == nil {
		return len(p), nil
	}
	return t.r.bw.Write(p)
}

// resume tries to write what the file is missing, after a failure: the
// header if the file lost it, a gap record per direction, and the exit
// record if it came meanwhile; all of them or none.
func (r *recorder) resume() {
	seq := r.seq
	if r.torn {
		tee{r}.Write([]byte("\n"))
		r.w.LineEnded()
	}
	if r.written == 0 {
		tee{r}.Write(r.hub.header)
	}
	// The gap records stand where the frames went missing: at the time
	// of the last of them (the last frame recorded, or not), before
	// whatever comes after, the exit too.
	t := int64((max(r.lastAt, r.started) - r.started) / time.Microsecond)
	for dir, n := range r.missing {
		if n > 0 {
			r.seq++
			r.w.WriteEvent(sessions.EventRecord{T: t, Kind: sessions.EventGap, Dir: classify.Direction(dir), Missing: n})
		}
	}
	if r.exit != nil {
		r.w.WriteEvent(*r.exit)
	}
	if err := r.bw.Flush(); err != nil {
		r.seq = seq
		r.lost(err) // back to where the file was: nothing of this is in it
		return
	}
	if r.exit != nil {
		r.publishLast(false, nil, nil, nil)
		r.exit = nil
	}
	r.synced, r.torn = r.written, false
	for dir, n := range r.missing {
		r.gone[dir] += n
	}
	r.failing = false
	r.missing = [4]int64{}
	if !r.closed && !r.said {
		r.warn("the session file takes writes again; a gap record says what is missing")
	}
	// Said once: a file that takes a few records and fails again (a size
	// limit) would say it over and over; missingReport has the totals.
	r.said = true
}

// missingReport is the last thing the tap says of a session whose file
// lacks frames: how many in each direction, and whether the file says
// so; "" when the file holds every frame. path is the file's.
func (r *recorder) missingReport(path string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n [4]int64
	for dir := range n {
		n[dir] = r.gone[dir] + r.missing[dir]
	}
	if n == [4]int64{} {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the session file %s is missing %s host→server and %d server→host", path, count(n[classify.H2S], "frame"), n[classify.S2H])
	if n[classify.Err] > 0 {
		fmt.Fprintf(&b, ", and %s of the server's stderr", count(n[classify.Err], "line"))
	}
	if !r.failing {
		b.WriteString("; its gap records say where")
		return b.String()
	}
	fmt.Fprintf(&b, " (%s); it ends without the gap and exit records that would say so", writeFailure(r.err))
	return b.String()
}

// writeFailure says why the session file took no more writes, and what
// to do about it.
func writeFailure(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the disk is full: free some space on it, or record elsewhere with --record FILE"
	case errors.Is(err, syscall.EDQUOT):
		return "your disk quota is used up: free some space, or record elsewhere with --record FILE"
	case errors.Is(err, syscall.EFBIG):
		return "the file reached the size limit for files (ulimit -f)"
	case err == nil:
		return "it could not be written"
	}
	return err.Error()
}

// count is "1 frame", "2 frames".
func count(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.FormatInt(n, 10) + " " + what + "s"
}

// timeouts reports requests that passed their deadline as the clock goes.
func (r *recorder) timeouts(at time.Duration) {
	r.publishFindings(at-r.started, r.tracker.Advance(at-r.started))
}

// publishFindings gives live subscribers session findings the tracker
// raised at t (on the session clock) about earlier frames.
func (r *recorder) publishFindings(t time.Duration, fs []classify.SessionFinding) {
	if len(fs) == 0 || !r.hub.listening() {
		return
	}
	r.out = append(r.out[:0], `{"t":`...)
	r.out = appendInt(r.out, int64(t/time.Microsecond))
	r.out = append(r.out, `,"event":"findings","session_findings":`...)
	r.out = appendSessionFindings(r.out, fs)
	r.out = append(r.out, "}\n"...)
	r.lines = append(r.lines, published{seq: 0, line: append([]byte(nil), r.out...), offset: r.written, end: r.written})
}

func (r *recorder) writeEvent(e sessions.EventRecord) {
	r.seq++
	if !r.failing {
		if err := r.w.WriteEvent(e); err == nil {
			r.wrote(0)
			r.publishLast(false, nil, nil, nil)
			return
		} else {
			r.fail(0, err)
		}
	}
	if e.Kind == sessions.EventExit {
		r.exit = &e // flush tries it again, after the gap records
	}
}

// wrote notes a record written to the file's buffer (dir 0: an event),
// until it is flushed.
func (r *recorder) wrote(dir classify.Direction) {
	if r.bw != nil {
		r.ends = append(r.ends, batched{end: r.written, dir: dir})
	}
}

// fail notes that the session file could not be written.
func (r *recorder) fail(dir classify.Direction, err error) {
	if !r.failing && !r.said {
		r.warn(fmt.Sprintf("cannot write the session file (%v); traffic goes on and the file will say how many frames are missing", err))
	}
	r.failing = true
	r.err = err
	if dir != 0 {
		r.missing[dir]++
	}
}

// lost handles a write to the file that failed: the file is cut back to
// the end of its last whole record, so that it never ends in a torn line,
// the frames after that end are counted missing, and offsets follow what
// the file holds.
func (r *recorder) lost(err error) {
	r.fail(0, err)
	r.bw.Reset(r.file)
	cut := r.synced
	pos, perr := r.file.Seek(0, io.SeekCurrent)
	for _, b := range r.ends {
		switch {
		case perr == nil && b.end <= pos:
			cut = b.end
		case b.gap:
			// The gap record that counted its frame is gone with the
			// rest: the frame counts again below.
			r.gone[b.dir]--
			r.missing[b.dir]++
		case b.dir != 0:
			r.missing[b.dir]++
		}
	}
	r.ends = r.ends[:0]
	switch {
	case perr != nil: // where the file ends is unknown
		r.torn = true
	case r.file.Truncate(cut) == nil:
		_, err := r.file.Seek(cut, io.SeekStart)
		r.torn = err != nil
	default: // the file cannot be cut (a device, say): it keeps what it took
		r.torn = pos != cut
		cut = pos
	}
	r.written, r.synced = cut, cut
	if !r.torn {
		r.w.LineEnded()
	}
	kept := r.lines[:0]
	for _, l := range r.lines {
		if l.end <= cut {
			kept = append(kept, l)
		}
	}
	r.lines = kept
}

// flush pushes the batch to the file and the hub. After a failure it
// tries again, and once the file takes writes it records the gap.
func (r *recorder) flush() {
	if r.bw != nil {
		if err := r.bw.Flush(); err != nil {
			r.lost(err)
		} else if r.ends, r.synced = r.ends[:0], r.written; r.failing {
			r.resume()
		}
	}
	stats := Stats{Frames: r.frames, Errors: r.errs, UserErrors: r.userErrs, Pending: r.tracker.InFlight()}
	if len(r.lines) > 0 {
		r.hub.publish(r.lines, r.written, stats)
		r.lines = r.lines[:0]
	} else {
		r.hub.advance(r.written, stats)
	}
}
