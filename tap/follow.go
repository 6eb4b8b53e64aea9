package tap

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpctap/rpctap/sessions"
)

// Follow attaches to a live tap that records and returns its session file
// as a stream: the file's bytes from the start, as far as the tap has
// written them, waiting for more until the session ends (then io.EOF).
// The tap only says how far the file is written; the bytes are read here,
// so a view costs the tap nothing per record.
func Follow(info Info) (*Follower, error) {
	if info.Session == "" {
		return nil, fmt.Errorf("the tap %s records no session file to follow; attach for its records instead", info.Name)
	}
	f, err := os.Open(info.Session)
	if err != nil {
		return nil, fmt.Errorf("cannot read the session file of the tap %s: %w", info.Name, err)
	}
	// A file with no header (its tap could not write one) is taken on trust.
	if h, ok := sessions.NewReader(io.NewSectionReader(f, 0, 1<<20)).Header(); ok && info.ID != "" && h.ID != info.ID {
		f.Close()
		return nil, fmt.Errorf("%s is not the session file of the tap %s (its header names session %q, the tap's is %q)", info.Session, info.Name, h.ID, info.ID)
	}
	c, err := Dial(info.Socket)
	if err != nil {
		f.Close()
		return nil, err
	}
	if _, err := io.WriteString(c, followFileLine); err != nil {
		f.Close()
		c.Close()
		return nil, fmt.Errorf("cannot attach to the tap %s: %w", info.Name, err)
	}
	return newFollower(f, c), nil
}

// newFollower reads f as far as the notes on c say it is written.
func newFollower(f *os.File, c net.Conn) *Follower {
	r := &Follower{f: f, c: c, born: time.Now(), more: make(chan struct{}, 1), quit: make(chan struct{})}
	go r.readNotes(bufio.NewReader(c))
	return r
}

// A Follower reads a session file up to the size its tap last announced.
// The tap's notes are read as they come by a goroutine of its own, so that
// Busy is up to date while the reader is far behind.
type Follower struct {
	f    *os.File
	c    net.Conn
	pos  int64 // next byte to read
	wait func()

	// Set by readNotes; more gets a token each time they change.
	size   atomic.Int64 // bytes the tap has written
	ended  atomic.Bool  // no more notes: size is final
	err    atomic.Pointer[error]
	born   time.Time    // when the follower started: busyAt counts from it (a monotonic clock)
	busyAt atomic.Int64 // when the tap's last note said it was busy, in ns since born; 0 when it said not
	more   chan struct{}
	quit   chan struct{}
	closer sync.Once
	// behind is size-pos as of the last read, for other goroutines.
	behind atomic.Int64
}

// busyHold is how long a note saying the tap is busy counts while no
// other note comes. A busy tap says so again with each flush, and says
// when it no longer is (see serveFollow); but a tap short of CPU may send
// its notes late, and a view that took a late note for the end of the
// busy spell would take CPU from the tap just when it has least, which
// makes its notes later still. The hold only ends the wait for a tap that
// stopped saying anything (killed, or stopped).
const busyHold = time.Second

// OnWait sets a func called each time the follower has given every byte
// written so far and is about to wait for more.
func (r *Follower) OnWait(f func()) { r.wait = f }

func (r *Follower) Read(p []byte) (int, error) {
	for r.pos >= r.size.Load() {
		// Closing ends the notes too: say closed, not a session's end.
		select {
		case <-r.quit:
			return 0, net.ErrClosed
		default:
		}
		// ended is set after the last size: once it is seen, size is final.
		if r.ended.Load() {
			if r.pos >= r.size.Load() {
				if e := r.err.Load(); e != nil {
					return 0, *e
				}
				return 0, io.EOF
			}
			break
		}
		select {
		case <-r.more:
			continue
		default:
		}
		if r.wait != nil {
			r.wait()
		}
		select {
		case <-r.more:
		case <-r.quit:
			return 0, net.ErrClosed
		}
	}
	n, err := r.f.ReadAt(p[:min(int64(len(p)), r.size.Load()-r.pos)], r.pos)
	r.pos += int64(n)
	r.behind.Store(r.size.Load() - r.pos)
	if errors.Is(err, io.EOF) && n > 0 {
		err = nil
	}
	return n, err
}

// readNotes reads the tap's notes until the session ends, the tap goes
// away or the follower is closed.
func (r *Follower) readNotes(notes *bufio.Reader) {
	defer func() {
		r.ended.Store(true)
		r.poke()
	}()
	for {
		line, err := notes.ReadBytes('\n')
		if err != nil {
			select {
			case <-r.quit:
				return
			default:
			}
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
				// The tap went away without saying the session ended: the
				// file holds what it wrote; read to the end of that.
				if st, serr := r.f.Stat(); serr == nil && st.Size() > r.size.Load() {
					r.size.Store(st.Size())
				}
				return
			}
			r.err.Store(&err)
			return
		}
		var note struct {
			Size *int64 `json:"size"`
			End  bool   `json:"end"`
			Busy bool   `json:"busy"`
		}
		if err := json.Unmarshal(line, &note); err != nil || note.Size == nil {
			err := fmt.Errorf("the tap sent %q where it should say how far its session file is written", line)
			r.err.Store(&err)
			return
		}
		if note.Busy {
			r.busyAt.Store(max(int64(time.Since(r.born)), 1))
		} else {
			r.busyAt.Store(0)
		}
		if *note.Size > r.size.Load() {
			r.size.Store(*note.Size)
		}
		if note.End {
			return
		}
		r.poke()
	}
}

func (r *Follower) poke() {
	select {
	case r.more <- struct{}{}:
	default:
	}
}

// Behind is how many bytes the tap has written that the reader has not
// read yet: how far a view is catching up.
func (r *Follower) Behind() int64 { return r.behind.Load() }

// Busy reports whether the tap's last note, within busyHold, said it is
// short of CPU (its traffic waits for its recorder, or it needs the
// machine's cores): a view on the same machine that can wait (catching
// up later from the file) should.
func (r *Follower) Busy() bool {
	at := r.busyAt.Load()
	return at != 0 && time.Since(r.born)-time.Duration(at) < busyHold
}

// Close detaches from the tap and closes the file.
func (r *Follower) Close() error {
	var err error
	r.closer.Do(func() {
		close(r.quit)
		r.c.Close()
		err = r.f.Close()
	})
	return err
}
