package tap

import (
	"errors"

	"github.com/rpctap/rpctap/classify"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// A dest is one side's input: the server's stdin (h2s) or the host's stdout
// (s2h). Its relay and any injections write to it, and only at frame
// boundaries: whoever is writing holds mu from the first byte of a frame to
// its last, so an injected frame never lands inside a wire frame.
//
// Every write made under mu is also handed to the recorder in the same
// order (note), just before it is made, so the session file holds exactly
// what the receiver read, and never an answer before what it answers.
type dest struct {
	mu  sync.Mutex // held while a frame is partly written
	dir classify.Direction
	w   io.Writer
	// note records bytes written under mu (wire chunks, injected frames)
	// just before they are written; kick, when set, is called once they
	// are, to have them recorded.
	note func(item)
	kick func()
	// wanted, when not nil, says whether anyone reads what the tap notes
	// (see recorder.begin); on is it as of this stream's last frame
	// boundary (set under mu, read anywhere), so that noting begins with
	// a whole frame.
	wanted *atomic.Bool
	on     atomic.Bool

	qmu    sync.Mutex
	queue  []*injection
	closed bool
	err    error // the first write error; the destination is dead after it
	dead   atomic.Bool
}

// An injection is bytes to insert at the next frame boundary: one frame
// with its framing, or raw bytes that may hold several.
type injection struct {
	frame   []byte       // the bytes written: with framing (newline or Content-Length header)
	parts   []injectPart // the frames in frame as their receiver reads them, as recorded
	src     string
	capture bool
	done    chan error
	// sent is when the frame was written (set before done is sent).
	sent time.Duration
}

// An injectPart is one frame of an injection, as recorded.
type injectPart struct {
	body    []byte // the frame without framing (a partial one: its bytes as written)
	header  []byte // LSP header block, when not plain
	partial bool   // the open end of a forced raw injection: the stream stays inside it
}

// errClosed says the destination was closed before an injection could be
// written.
var errClosed = errors.New("the stream this frame was for has closed")

// boundary is called with mu held at a frame boundary: from here on the
// stream's frames are noted when anyone reads them.
func (d *dest) boundary() {
	if d.wanted != nil && !d.on.Load() && d.wanted.Load() {
		d.on.Store(true)
	}
}

// record notes it (see note) when anyone reads what the tap notes.
func (d *dest) record(it item) {
	if d.wanted == nil || d.on.Load() {
		d.note(it)
	}
}

// failed reports whether a write to the destination has failed.
func (d *dest) failed() bool { return d.dead.Load() }

// writeLocked writes b; the caller holds mu.
func (d *dest) writeLocked(b []byte) error {
	if d.err != nil {
		return d.err
	}
	if _, err := d.w.Write(b); err != nil {
		d.err = err
		d.dead.Store(true)
		return err
	}
	return nil
}

// inject queues a frame and writes it at once when no frame is being
// written, or lets the holder of mu write it at its next boundary.
func (d *dest) inject(inj *injection) {
	d.qmu.Lock()
	if d.closed {
		d.qmu.Unlock()
		inj.done <- errClosed
		return
	}
	d.queue = append(d.queue, inj)
	d.qmu.Unlock()
	if d.mu.TryLock() {
		d.drainLocked()
		d.mu.Unlock()
	}
}

// drainLocked writes queued injections; the caller holds mu and is at a
// frame boundary.
func (d *dest) drainLocked() {
	for {
		d.qmu.Lock()
		if len(d.queue) == 0 {
			d.qmu.Unlock()
			return
		}
		inj := d.queue[0]
		d.queue = d.queue[1:]
		d.qmu.Unlock()
		inj.sent = now()
		d.boundary()
		if !d.failed() { // recorded first, as the relay's frames are
			for _, p := range inj.parts {
				d.record(item{at: inj.sent, dir: d.dir, data: p.body, header: p.header, src: inj.src, whole: true, partial: p.partial})
			}
		}
		err := d.writeLocked(inj.frame)
		d.kicked()
		inj.done <- err
	}
}

// kicked has what was just written recorded.
func (d *dest) kicked() {
	if d.kick != nil {
		d.kick()
	}
}

// release unlocks mu at a frame boundary, writing injections first, and
// picks up any injection queued while it was held.
func (d *dest) release() {
	d.drainLocked()
	d.mu.Unlock()
	d.qmu.Lock()
	pending := len(d.queue) > 0
	d.qmu.Unlock()
	if pending && d.mu.TryLock() {
		d.drainLocked()
		d.mu.Unlock()
	}
}

// close refuses further injections and fails the queued ones.
func (d *dest) close() {
	d.qmu.Lock()
	d.closed = true
	q := d.queue
	d.queue = nil
	d.qmu.Unlock()
	for _, inj := range q {
		inj.done <- errClosed
	}
}

// clock is the session's monotonic clock.
var clockStart = time.Now()

func now() time.Duration { return time.Since(clockStart) }
