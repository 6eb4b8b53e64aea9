package sessions

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// IndexFile indexes the session file at path, as it is now. progress, when
// not nil, is called as the file is read with the bytes read so far and
// the file's size. To show entries while the file is still being indexed,
// make an Index and call ReadFile in a goroutine instead.
func IndexFile(path string, opts IndexOptions, progress func(done, total int64)) (*Index, error) {
	x := NewIndex(opts)
	if err := x.ReadFile(context.Background(), path, progress); err != nil {
		return nil, err
	}
	return x, nil
}

// ReadFile indexes the session file at path, as it is now, into x, which
// must be empty. Entries become visible to readers as they are added, a
// batch at a time. progress, when not nil, is called after each batch
// with the bytes read so far and the file's size. ReadFile stops with
// ctx's error when ctx is done.
//
// Three goroutines share the work, a few batches apart: one reads and
// decodes the file, one classifies the frames, and the caller's runs the
// tracker and adds the entries.
func (x *Index) ReadFile(ctx context.Context, path string, progress func(done, total int64)) error {
	return x.loadFile(ctx, path, false, 0, progress, nil)
}

// ReadStream indexes a session file's bytes read from r into x, which must
// be empty, until r ends (nil) or fails, or ctx is done (a Read that waits
// on r is not interrupted by ctx: close r to end it). Offsets are r's:
// r must give the file from its start. When r has a method OnWait(func()),
// it is given a func to call before it waits for more bytes, so the
// records read so far show meanwhile (as Follow does at the end of a
// file).
func (x *Index) ReadStream(ctx context.Context, r io.Reader, progress func(done, total int64)) error {
	src := &eofNotifier{r: r}
	waiter, ok := r.(interface{ OnWait(func()) })
	if ok {
		waiter.OnWait(func() {
			if src.onEOF != nil {
				src.onEOF()
			}
		})
	}
	return x.load(ctx, src, ok, 0, progress)
}

// Follow indexes the session file at path into x, which must be empty,
// and goes on indexing what is appended to it, polling every poll, until
// ctx is done; it then returns nil. A last line without its "\n" is
// indexed when it is complete. progress is as for ReadFile. Follow does
// not move the tracker's clock between records: call Advance for that.
func (x *Index) Follow(ctx context.Context, path string, poll time.Duration, progress func(done, total int64)) error {
	err := x.loadFile(ctx, path, true, poll, progress, nil)
	if ctx.Err() != nil && (err == nil || errors.Is(err, ctx.Err())) {
		return nil
	}
	return err
}

// FollowWhile indexes a session file that a tap is writing, as Follow
// does, and stops (returning nil) once it has indexed the file's exit
// record, or when it has read all there is and live reports false: the
// tap is gone, and nothing more will come (a last line without its "\n"
// is then indexed, or skipped, as it is). live, when nil, is taken as
// always true; it is called at the end of the file, once a poll at most.
// A file with no exit record whose tap is gone does not keep it waiting.
func (x *Index) FollowWhile(ctx context.Context, path string, poll time.Duration, live func() bool, progress func(done, total int64)) error {
	if live == nil {
		live = func() bool { return true }
	}
	err := x.loadFile(ctx, path, true, poll, progress, live)
	if ctx.Err() != nil && (err == nil || errors.Is(err, ctx.Err())) {
		return nil
	}
	return err
}

const (
	loadBatches     = 6       // batches in flight between the reader, the classifier and the indexer
	loadBatchBytes  = 1 << 20 // a batch is sent once its frames reach this size
	loadBatchRecs   = 2048    // or once it has this many records
	loadBatchMaxCap = 8 << 20 // a batch's buffer grown past this (a huge frame) is not kept
)

// A batch carries records from the reading goroutine, through the
// classifying one, to the indexing one. Their frames are copied into data,
// so that the Reader's buffers can move on.
type batch struct {
	recs      []batchRec
	msgs      []classify.Message // the frames classified ahead, by recs' positions
	data      []byte
	skipped   int   // lines skipped up to the end of the batch
	skipBytes int64 // the bytes those lines held
	end       int64 // input offset after the batch
	err       error // the error that ended the reading (io.EOF at the end)
}

type batchRec struct {
	ev            Event // Frame, Header and Code nil: they are in data and code
	offset        int64
	frame, header [2]int // spans of data; header[0] < 0 for no header
	code          int    // an exit record's status, when hasCode
	hasCode       bool
}

func (b *batch) add(ev *Event, offset int64) {
	r := batchRec{ev: *ev, offset: offset, header: [2]int{-1, -1}}
	if ev.Code != nil { // the reader's, which its next record reuses
		r.code, r.hasCode = *ev.Code, true
	}
	r.ev.Frame, r.ev.Header, r.ev.Code = nil, nil, nil
	r.frame[0] = len(b.data)
	b.data = append(b.data, ev.Frame...)
	r.frame[1] = len(b.data)
	if ev.Header != nil {
		r.header[0] = len(b.data)
		b.data = append(b.data, ev.Header...)
		r.header[1] = len(b.data)
	}
	b.recs = append(b.recs, r)
}

func (b *batch) full() bool { return len(b.data) >= loadBatchBytes || len(b.recs) >= loadBatchRecs }

func (b *batch) reset() {
	clear(b.recs) // let go of the strings and the findings they held
	b.recs = b.recs[:0]
	clear(b.msgs)
	b.msgs = b.msgs[:0]
	if cap(b.data) > loadBatchMaxCap {
		b.data = nil
	}
	b.data = b.data[:0]
	b.err = nil
}

// eofNotifier calls onEOF when a read finds the end of the input.
type eofNotifier struct {
	r     io.Reader
	onEOF func()
	total int64         // the input's size when known
	poll  time.Duration // a file that is followed: how often
	live  bool          // the input grows: batches go on at its end
	// untilExit: the input is read up to its exit record, and alive (when
	// set) says whether its writer is still there.
	untilExit bool
	alive     func() bool
}

func (n *eofNotifier) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	if k == 0 && err == io.EOF && n.onEOF != nil {
		n.onEOF()
	}
	return k, err
}

// loadFile indexes the file at path; follow: as it grows, and with alive
// (FollowWhile) up to its exit record or until alive reports false.
func (x *Index) loadFile(ctx context.Context, path string, follow bool, poll time.Duration, progress func(done, total int64), alive func() bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening the session file: %w", err)
	}
	defer f.Close()
	src := &eofNotifier{r: f}
	if st, err := f.Stat(); err == nil {
		src.total = st.Size()
	}
	if follow {
		src.poll = max(poll, 0)
		if src.poll == 0 {
			src.poll = DefaultPoll
		}
	}
	if alive != nil {
		src.untilExit, src.alive = true, alive
	}
	return x.load(ctx, src, follow, src.poll, progress)
}

// worker runs the Worker hook, if any, in a goroutine the index started.
func (x *Index) worker() {
	if x.opts.Worker != nil {
		x.opts.Worker()
	}
}

// load indexes src. live: src is still being written, so records read
// are passed on each time it reaches the end of what is there (poll > 0:
// by a following Reader that polls the file).
func (x *Index) load(ctx context.Context, src *eofNotifier, live bool, poll time.Duration, progress func(done, total int64)) error {
	x.mu.Lock()
	if x.loading || x.lastSeq > 0 {
		x.mu.Unlock()
		return errors.New("sessions: an Index reads one file, and only when it is empty")
	}
	x.loading = true
	x.mu.Unlock()
	total := src.total
	ctx, cancel := context.WithCancel(ctx)
	rd := NewReader(src)
	if poll > 0 {
		rd.Follow(ctx, poll)
		rd.alive = src.alive
	}
	src.live = live
	// The header comes first, so that the tracker starts with its profile.
	h, ok := rd.Header()
	x.mu.Lock()
	x.header, x.hasHdr = h, ok
	if x.tr == nil {
		x.startTracker()
	}
	x.mu.Unlock()

	free := make(chan *batch, loadBatches)
	read := make(chan *batch, loadBatches)
	full := make(chan *batch, loadBatches)
	for range loadBatches {
		free <- &batch{}
	}
	go func() {
		x.worker()
		readBatches(ctx, rd, src, free, read, x.opts.Pace)
	}()
	go func() {
		x.worker()
		x.classifyBatches(ctx, h, read, full)
	}()
	defer func() {
		cancel()
		for range full { // wait for the reader and the classifier to stop
		}
	}()

	for b := range full {
		if err := ctx.Err(); err != nil {
			return err
		}
		x.addBatch(b)
		if progress != nil {
			progress(b.end, max(total, b.end))
		}
		if b.err != nil {
			if errors.Is(b.err, io.EOF) {
				return nil
			}
			if ve := (*NewerVersionError)(nil); errors.As(b.err, &ve) {
				return b.err // it says what to do; the UI shows its start
			}
			return fmt.Errorf("reading the session file: %w", b.err)
		}
		free <- b
	}
	return ctx.Err()
}

// lockedRecs is how many records addBatch adds under one lock: readers
// wait for a few tens of microseconds at most.
const lockedRecs = 32

// classifyBatches classifies the frames of the batches from read, by the
// profile the index has reached, and passes the batches on to full: the
// indexing goroutine classifies again only the frames that a profile
// decided meanwhile judges otherwise. h is the session's header (its parse
// limit).
func (x *Index) classifyBatches(ctx context.Context, h Header, read <-chan *batch, full chan<- *batch) {
	defer close(full)
	var buf []byte
	for b := range read {
		p := classify.Profile(x.profileHint.Load())
		for i := range b.recs {
			r := &b.recs[i]
			r.ev.Frame = b.data[r.frame[0]:r.frame[1]:r.frame[1]]
			if r.hasCode {
				r.ev.Code = &r.code
			}
			if r.header[0] >= 0 {
				r.ev.Header = b.data[r.header[0]:r.header[1]:r.header[1]]
			}
			var m classify.Message
			if r.ev.IsFrame() && r.ev.Dir != classify.Err && ctx.Err() == nil {
				m = ClassifyRecord(&h, &r.ev, p, &buf)
			}
			b.msgs = append(b.msgs, m)
		}
		full <- b
	}
}

// addBatch indexes the records of b.
func (x *Index) addBatch(b *batch) {
	for i := 0; i == 0 || i < len(b.recs); {
		x.mu.Lock()
		for end := min(i+lockedRecs, len(b.recs)); i < end; i++ {
			x.add(&b.recs[i].ev, b.recs[i].offset, &b.msgs[i])
		}
		if i == len(b.recs) {
			x.counts.Skipped, x.counts.SkippedBytes = b.skipped, b.skipBytes
		}
		x.mu.Unlock()
		if len(b.recs) == 0 {
			return
		}
	}
}

// readBatches reads records into batches taken from free and sends them on
// out, until the Reader fails (io.EOF at the end) or ctx is done. A
// following Reader's records are sent each time it reaches the end of
// what is written, so they show while it waits for more. pace, when not
// nil, may hold the reading back after each batch it sends.
func readBatches(ctx context.Context, rd *Reader, src *eofNotifier, free <-chan *batch, out chan<- *batch, pace func(context.Context)) {
	defer close(out)
	var b *batch
	take := func() {
		select {
		case b = <-free:
			b.reset()
		case <-ctx.Done():
			b = nil
		}
	}
	send := func() {
		b.skipped, b.skipBytes, b.end = rd.skipped, rd.skippedBytes, rd.pos
		select {
		case out <- b:
		case <-ctx.Done():
		}
		b = nil
	}
	take()
	if src.live {
		src.onEOF = func() {
			if b != nil && len(b.recs) > 0 {
				send()
				// A file that a busy tap writes reaches its end at each
				// flush: without a pause here, the reading would keep up
				// with the tap, batch by small batch, however busy.
				if pace != nil {
					pace(ctx)
				}
				take()
			}
		}
	}
	for b != nil {
		ev, err := rd.Next()
		if b == nil {
			return // ctx is done
		}
		if err != nil {
			b.err = err
			send()
			return
		}
		b.add(ev, rd.Offset())
		if src.untilExit && ev.Kind == EventExit {
			b.err = io.EOF // the tap is done with the file
			send()
			return
		}
		if b.full() {
			send()
			if pace != nil {
				pace(ctx)
			}
			take()
		}
	}
}
