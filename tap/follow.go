package tap

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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
	c, err := net.DialTimeout("unix", info.Socket, time.Second)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot attach to the tap %s: %w", info.Name, err)
	}
	if _, err := io.WriteString(c, `{"op":"attach","follow":true}`+"\n"); err != nil {
		f.Close()
		c.Close()
		return nil, fmt.Errorf("cannot attach to the tap %s: %w", info.Name, err)
	}
	return &Follower{f: f, c: c, notes: bufio.NewReader(c)}, nil
}

// A Follower reads a session file up to the size its tap last announced.
type Follower struct {
	f     *os.File
	c     net.Conn
	notes *bufio.Reader
	pos   int64 // next byte to read
	size  int64 // bytes the tap has written
	// behind is size-pos as of the last read, for other goroutines.
	behind atomic.Int64
	ended  bool
	wait   func()
}

// OnWait sets a func called each time the follower has given every byte
// written so far and is about to wait for more.
func (r *Follower) OnWait(f func()) { r.wait = f }

func (r *Follower) Read(p []byte) (int, error) {
	for r.pos >= r.size {
		if r.ended {
			return 0, io.EOF
		}
		if r.wait != nil && r.notes.Buffered() == 0 {
			r.wait()
		}
		if err := r.next(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.ReadAt(p[:min(int64(len(p)), r.size-r.pos)], r.pos)
	r.pos += int64(n)
	r.behind.Store(r.size - r.pos)
	if errors.Is(err, io.EOF) && n > 0 {
		err = nil
	}
	return n, err
}

// next waits for the tap's next size line.
func (r *Follower) next() error {
	line, err := r.notes.ReadBytes('\n')
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
			// The tap went away without saying the session ended: the
			// file holds what it wrote; read to the end of that.
			st, serr := r.f.Stat()
			if serr == nil && st.Size() > r.pos {
				r.size = st.Size()
			}
			r.ended = true
			return nil
		}
		return err
	}
	var note struct {
		Size *int64 `json:"size"`
		End  bool   `json:"end"`
	}
	if err := json.Unmarshal(line, &note); err != nil || note.Size == nil {
		return fmt.Errorf("the tap sent %q where it should say how far its session file is written", line)
	}
	r.size = max(r.size, *note.Size)
	r.ended = note.End
	return nil
}

// Behind is how many bytes the tap has written that the reader has not
// read yet: how far a view is catching up.
func (r *Follower) Behind() int64 { return r.behind.Load() }

// Close detaches from the tap and closes the file.
func (r *Follower) Close() error {
	r.c.Close()
	return r.f.Close()
}
