package tap

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// This file holds how a relay passes on a frame too large to hold (over
// holdLimit): streamed to its receiver as it comes, the dest's lock held
// from its first byte to its last. While an injected request waits for
// its answer on this stream, such a frame may be that answer, which must
// never reach the receiver, and its id may come anywhere among its
// members. So its bytes wait in a file, not in memory, until its id is
// read and no capture waits for it (then they go on, and the rest streams
// behind them), or until its end: an answer a capture waits for is then
// recorded and never written. A frame whose id comes first, as peers
// write it, is told apart within its first holdLimit bytes and waits for
// nothing. While a request injected the other way waits for its answer,
// such a frame's id is read too: a request of the sender's own with that
// id takes the capture back (see captureSet.release).

// A bigFrame is what a relay knows of the frame it streams.
type bigFrame struct {
	// scan reads the frame's id; nil when no one needs it (no capture
	// waited when the frame began, or its id settled everything).
	scan *classify.IDScanner
	read int64 // the frame's bytes read so far, header included
	// deciding: the frame may be a captured answer, and its bytes wait
	// in wait (made when the first bytes do) instead of being written.
	deciding bool
	wait     *waitFile
	rival    bool // its id is read for the rivals (see relay.rivals)
}

// beginBig starts streaming a frame: while a capture waits on either side,
// its id is read, and while one waits on this side, its bytes wait.
func (r *relay) beginBig() {
	r.big = bigFrame{}
	capture := r.captures != nil && r.captures.active()
	rival := r.rivals != nil && r.rivals.active()
	if !capture && !rival {
		return
	}
	if r.scanner == nil {
		r.scanner = new(classify.IDScanner)
	}
	*r.scanner = classify.IDScanner{}
	r.big.scan, r.big.rival, r.big.deciding = r.scanner, rival, capture
}

// streamPart passes on b, bytes of the streamed frame before its end.
func (r *relay) streamPart(b []byte, at time.Duration) {
	r.look(b, r.sp.HeaderRead())
	if r.big.deciding && r.noCapture() {
		r.letGo()
	}
	if r.big.deciding && r.big.wait == nil {
		var err error
		if r.big.wait, err = newWaitFile(r.spoolDir); err != nil {
			r.cannotWait(err)
		}
	}
	if !r.big.deciding {
		r.write(b, at)
		return
	}
	if !r.dst.failed() {
		r.dst.record(item{at: at, dir: r.dir, data: b})
	}
	if n, err := r.big.wait.write(b); err != nil {
		r.cannotWait(err)
		r.dst.writeLocked(b[n:])
		r.dst.kicked()
	}
}

// endStream passes on tail, the bytes that end the streamed frame: the
// captured answer's are recorded, never written.
func (r *relay) endStream(tail []byte, at time.Duration) {
	info := r.sp.Frame()
	r.look(tail, info.HeaderLen)
	defer func() { r.big = bigFrame{} }()
	s := r.big.scan
	if s == nil {
		r.write(tail, at)
		return
	}
	s.End()
	if r.big.deciding {
		if id, ok := s.Response(); ok {
			if key, waiting := r.captures.waitingID(id); waiting && r.captures.hand(key, Captured{Size: info.BodyLen, At: at}) {
				r.dst.record(item{at: at, dir: r.dir, data: tail, captured: true})
				r.dst.kicked()
				if r.big.wait != nil {
					r.big.wait.close()
				}
				return
			}
		}
		r.letGo()
	}
	if id, ok := s.Request(); ok && r.big.rival {
		if key, waiting := r.rivals.waitingID(id); waiting && r.rivals.giveBack(key) && !r.dst.failed() {
			// Before the request's last byte, so before its receiver
			// can answer it; recorded before the frame, as a frame
			// that takes a capture back is otherwise.
			r.dst.record(item{at: at, event: &sessions.EventRecord{Kind: sessions.EventNote, Text: takenBack(r.dir)}})
		}
	}
	r.write(tail, at)
}

// look has the scanner read b, the frame's next bytes (header bytes of
// them: those of the frame's first header that are in b are skipped).
func (r *relay) look(b []byte, header int) {
	start := r.big.read
	r.big.read += int64(len(b))
	s := r.big.scan
	if s == nil {
		return
	}
	if skip := int64(header) - start; skip > 0 {
		b = b[min(skip, int64(len(b))):]
	}
	s.Write(b)
	if !r.big.deciding && !r.big.rival {
		r.big.scan = nil // it settled what the frame's bytes do
	} else if id, read := s.ID(); read && !r.big.deciding {
		if _, waiting := r.rivals.waitingID(id); !waiting {
			r.big.scan = nil
		}
	}
}

// noCapture reports whether the frame's bytes so far show it is no
// answer a capture waits for.
func (r *relay) noCapture() bool {
	s := r.big.scan
	if s.NotResponse() {
		return true
	}
	id, read := s.ID()
	if !read {
		return false
	}
	_, waiting := r.captures.waitingID(id)
	return !waiting
}

// letGo writes what waits of the frame, which goes on, and has the rest
// stream behind it.
func (r *relay) letGo() {
	w := r.big.wait
	r.big.deciding, r.big.wait = false, nil
	if w == nil {
		return
	}
	if err := w.copyTo(r.dst); err != nil {
		r.warn(fmt.Sprintf("a frame of over %d MiB %s waited in a file while it might be the answer to an injected request, and the file could not be read back (%v): its receiver misses part of it", holdLimit>>20, r.dir.Toward(), err))
	}
	w.close()
	r.dst.kicked()
}

// cannotWait lets the frame go on as it comes when its bytes cannot wait
// in a file (err): what did goes first. The tap says so: the frame may
// be an answer its receiver never asked for.
func (r *relay) cannotWait(err error) {
	r.letGo()
	text := fmt.Sprintf("a frame of over %d MiB %s could not wait in a file to have its id read (%v): it went on as it came, and if it is the answer to an injected request, its receiver reads it", holdLimit>>20, r.dir.Toward(), err)
	r.warn(text)
	if !r.dst.failed() {
		r.dst.record(item{at: now(), event: &sessions.EventRecord{Kind: sessions.EventNote, Text: text}})
	}
}

// A waitFile holds a streamed frame's bytes in an unlinked temporary
// file, unbuffered: after a failed write it still holds exactly the bytes
// it took.
type waitFile struct {
	f    *os.File
	size int64
}

func newWaitFile(dir string) (*waitFile, error) {
	f, err := os.CreateTemp(dir, ".rpctap-wait-*")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name())
	return &waitFile{f: f}, nil
}

func (w *waitFile) write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.size += int64(n)
	return n, err
}

// copyTo writes the file's bytes to d, whose lock the caller holds.
func (w *waitFile) copyTo(d *dest) error {
	buf := make([]byte, readSize)
	for off := int64(0); off < w.size; {
		n, err := w.f.ReadAt(buf[:min(int64(len(buf)), w.size-off)], off)
		if n > 0 {
			d.writeLocked(buf[:n])
			off += int64(n)
		}
		if err != nil && err != io.EOF {
			return err
		}
		if n == 0 {
			return io.ErrUnexpectedEOF
		}
	}
	return nil
}

func (w *waitFile) close() { w.f.Close() }
