package tap

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// readSize is how much a relay reads at once: a pipe's default capacity.
const readSize = 64 << 10

// holdLimit bounds the bytes of one frame a relay holds while waiting for
// its end. A larger frame is streamed to the receiver in pieces, holding the
// dest's lock until it ends (see relay_stream.go).
const holdLimit = 1 << 20

// A relay moves one direction's bytes from src to its dest unchanged, a
// whole frame at a time: it forwards every frame as soon as its last byte
// is read, all the frames of one read in one write. It hands the same bytes
// to the recorder, in order.
//
// One goroutine runs a relay; nothing else touches its fields.
type relay struct {
	dir     classify.Direction
	src     io.Reader
	dst     *dest
	framing classify.Framing
	// captures holds the ids of injected requests whose answers arrive on
	// this stream and must not be forwarded (nil: none are ever asked).
	captures *captureSet
	// rivals holds the ids of injected requests whose answers arrive on
	// the other stream: a request of this stream's sender with one of
	// them takes it back (see captureSet.release).
	rivals *captureSet
	// hold holds the frames the intercept filter matches (see
	// intercept.go); nil holds none.
	hold *holdQueue

	sp      *classify.Splitter
	buf     []byte // buf[:n] holds bytes read and not yet forwarded
	n       int
	scanned int  // bytes of buf[:n] the splitter has consumed
	stream  bool // a frame too large to hold is being streamed: dst.mu is held
	big     bigFrame
	scanner *classify.IDScanner // reused by each big frame that needs one
	// spoolDir is where a big frame's bytes wait ("": the system's
	// temporary directory); warn says what went wrong, on the tap's
	// stderr.
	spoolDir string
	warn     func(string)
	// seen is the framing the splitter settled on, for injectors.
	seen atomic.Uint32
	// idle, when set and not zero, bounds how long one read of src may
	// wait (see setIdleDeadline).
	idle *atomic.Int64
	// unnoted counts the frames relayed while no one read what the tap
	// notes (for ls).
	unnoted atomic.Int64
}

// setIdleDeadline gives the next read of r idle to wait, once idle is set:
// after the server has exited, its output is read to the end, and then a
// child that holds the pipe is not waited for.
func setIdleDeadline(r io.Reader, idle *atomic.Int64) {
	if idle == nil {
		return
	}
	if d := idle.Load(); d > 0 {
		if f, ok := r.(interface{ SetReadDeadline(time.Time) error }); ok {
			f.SetReadDeadline(time.Now().Add(time.Duration(d)))
		}
	}
}

// run relays until src ends or fails, then ends the last frame and closes
// the dest.
func (r *relay) run() error {
	r.sp = classify.NewSplitter(r.framing)
	r.buf = make([]byte, 2*readSize)
	defer r.finish()
	for {
		if r.n+readSize > len(r.buf) && len(r.buf) < holdLimit+readSize {
			// A frame larger than the buffer: it grows, up to what a
			// relay holds (most sessions never need it).
			r.buf = append(r.buf[:r.n], make([]byte, min(2*len(r.buf), holdLimit+readSize)-r.n)...)
		}
		if r.n+readSize > len(r.buf) {
			r.startStream()
		}
		setIdleDeadline(r.src, r.idle)
		n, err := r.src.Read(r.buf[r.n : r.n+readSize])
		if n > 0 {
			r.n += n
			r.forward(now(), false)
			if r.dst.failed() {
				return errors.New("the receiver stopped reading")
			}
		}
		if err != nil {
			// Held frames go first, as decided or when their hold
			// time runs out. No injection may follow the last frame:
			// it may have no terminator, and a frame written after it
			// would land inside it.
			r.hold.closeWait()
			r.dst.close()
			r.forward(now(), true)
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// forward splits what is buffered and writes every complete frame.
func (r *relay) forward(at time.Duration, atEOF bool) {
	done := 0 // buf[:done] are complete frames (or a streamed frame's part)
	frames := int64(0)
	for r.scanned < r.n || atEOF {
		n, end := r.sp.Split(r.buf[r.scanned:r.n], atEOF)
		r.scanned += n
		if !end {
			if n == 0 {
				break
			}
			continue
		}
		frames++
		if r.stream {
			// The streamed frame ended: pass its tail on and let go.
			r.endStream(r.buf[:r.scanned], at)
			r.stream = false
			r.dst.release()
			r.shift(r.scanned)
			done = 0
			continue
		}
		if r.captures != nil && r.captures.active() {
			frame := r.buf[done:r.scanned]
			if r.captures.take(r.sp.Frame().Body(frame), at) {
				// The frames before it go out first; the answer itself
				// is recorded, not forwarded.
				r.flush(r.buf[:done], at)
				r.dst.record(item{at: at, dir: r.dir, data: r.buf[done:r.scanned], captured: true})
				r.dst.kicked()
				r.shift(r.scanned)
				done = 0
				continue
			}
		}
		if r.rivals != nil && r.rivals.active() && r.rivals.release(r.sp.Frame().Body(r.buf[done:r.scanned]), r.dir) {
			// The frames before it go out first, then a note says whose
			// the id is now, just before the request.
			r.flush(r.buf[:done], at)
			r.shift(done)
			done = 0
			if !r.dst.failed() {
				r.dst.record(item{at: at, event: &sessions.EventRecord{Kind: sessions.EventNote, Text: takenBack(r.dir)}})
			}
		}
		if r.hold.engaged() && r.hold.offer(r, r.buf[:done], r.buf[done:r.scanned], r.sp.Frame(), at) {
			// The frames before it went out; it is held.
			r.shift(r.scanned)
			done = 0
			continue
		}
		done = r.scanned
	}
	defer r.count(frames)
	if r.stream {
		r.streamPart(r.buf[:r.scanned], at)
		r.shift(r.scanned)
		return
	}
	r.flush(r.buf[:done], at)
	r.shift(done)
	r.seen.Store(uint32(r.sp.Framing()))
}

// count adds frames just relayed to those no one read, while no one does.
func (r *relay) count(frames int64) {
	if frames > 0 && !r.dst.on.Load() {
		r.unnoted.Add(frames)
	}
}

// takenBack is the note of a request that sender of dir's frames sent
// with the id an injected request still waited for its answer by.
func takenBack(dir classify.Direction) string {
	sender := "host"
	if dir == classify.S2H {
		sender = "server"
	}
	return "the " + sender + " sent the next request with the id of a request injected " + dir.Toward() + " that waits for its answer: an answer with that id now goes on to the " + sender + ", and the tap no longer keeps one from it"
}

// flush writes complete frames under the dest's lock.
func (r *relay) flush(b []byte, at time.Duration) {
	if len(b) == 0 {
		return
	}
	r.dst.mu.Lock()
	r.dst.boundary()
	r.write(b, at)
	r.dst.release()
}

func (r *relay) write(b []byte, at time.Duration) {
	if len(b) == 0 {
		return
	}
	// Recorded before it is written: what the receiver answers to it
	// must not be recorded first.
	if !r.dst.failed() {
		r.dst.record(item{at: at, dir: r.dir, data: b})
	}
	r.dst.writeLocked(b)
	r.dst.kicked()
}

// shift drops the first k bytes of the buffer.
func (r *relay) shift(k int) {
	if k == 0 {
		return
	}
	copy(r.buf, r.buf[k:r.n])
	r.n -= k
	r.scanned -= k
}

// startStream begins streaming the open frame: it is too large to hold.
func (r *relay) startStream() {
	if !r.stream {
		r.dst.mu.Lock()
		r.dst.boundary()
		r.stream = true
		if r.hold.engaged() {
			// A frame too large to hold: what is held goes first, as
			// it was, and the frame streams on behind it.
			r.hold.releaseLocked(sessions.HeldOverflow, fmt.Sprintf("a frame larger than %d MiB came", holdLimit>>20))
		}
		r.beginBig()
	}
	r.streamPart(r.buf[:r.scanned], now())
	r.shift(r.scanned)
}

// finish lets go of the dest for good and closes it.
func (r *relay) finish() {
	if !r.stream {
		if r.dst.failed() {
			r.hold.releaseAll(sessions.HeldEnded) // no one reads them
		}
		r.hold.closeWait()
		// An injection taken from the queue before it closed may be
		// being written: it goes before the end of the stream.
		r.dst.mu.Lock()
		r.dst.boundary()
	} else if r.big.deciding {
		r.letGo() // a frame left open: its bytes are the receiver's
	}
	r.stream = false
	r.dst.close()
	r.dst.record(item{at: now(), dir: r.dir, eof: true})
	r.dst.kicked()
	r.dst.mu.Unlock()
}
