package replay

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// A HostConn is replay --as-host's end of a tap, with no goroutine of its
// own in between: the tap reads the host's frames from ServerInput, which
// takes each burst the player writes without waiting for it to be read,
// and writes the server's frames to ServerOutput, which splits them and
// hands them to the player in the tap's own goroutine. Give both to the
// tap (as its host's stdout and stdin), then call Play.
type HostConn struct {
	p   *player
	in  hostInput
	out serverOutput
}

// NewHostConn opens the recording at path for Play, and makes the ends of
// a tap of the given framing (FramingOf).
func NewHostConn(path string, framing classify.Framing, opts HostOptions) (*HostConn, error) {
	p, err := newPlayer(path, opts)
	if err != nil {
		return nil, err
	}
	c := &HostConn{p: p}
	c.in.wake = make(chan struct{}, 1)
	c.in.space = make(chan struct{}, 1)
	c.out.p = p
	c.out.sp = classify.NewSplitter(framing)
	p.to = &c.in
	return c, nil
}

// ServerInput is what the tap reads as the host's output.
func (c *HostConn) ServerInput() io.ReadCloser { return &c.in }

// ServerOutput is where the tap writes the server's frames for the host.
func (c *HostConn) ServerOutput() io.WriteCloser { return &c.out }

// Play plays the recorded host, as PlayHost does: it ends ServerInput
// once the recording is played, and returns when the tap has closed
// ServerOutput.
func (c *HostConn) Play(ctx context.Context) (*HostReport, error) {
	err := c.p.run(ctx)
	c.in.closeWrite()
	if err != nil {
		return nil, err
	}
	select {
	case <-c.out.done():
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.p.finish()
	return c.p.rep, nil
}

// hostInputLimit is how many bytes the player may write ahead of the
// tap's reads before it waits.
const hostInputLimit = 4 << 20

// hostInput is a pipe whose writer does not wait for the reader, up to
// hostInputLimit bytes.
type hostInput struct {
	mu      sync.Mutex
	data    []byte
	off     int
	wclosed bool // the player is done
	rclosed bool // the tap no longer reads
	wake    chan struct{}
	space   chan struct{}
}

var errServerInputClosed = errors.New("the server's input is closed")

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (h *hostInput) Write(b []byte) (int, error) {
	h.mu.Lock()
	for len(h.data)-h.off >= hostInputLimit && !h.rclosed {
		h.mu.Unlock()
		<-h.space
		h.mu.Lock()
	}
	if h.rclosed || h.wclosed {
		h.mu.Unlock()
		return 0, errServerInputClosed
	}
	if h.off == len(h.data) {
		h.data, h.off = h.data[:0], 0
	}
	h.data = append(h.data, b...)
	h.mu.Unlock()
	poke(h.wake)
	return len(b), nil
}

// closeWrite ends what the tap reads, after what was written.
func (h *hostInput) closeWrite() {
	h.mu.Lock()
	h.wclosed = true
	h.mu.Unlock()
	poke(h.wake)
}

func (h *hostInput) Read(p []byte) (int, error) {
	h.mu.Lock()
	for h.off == len(h.data) && !h.wclosed && !h.rclosed {
		h.mu.Unlock()
		<-h.wake
		h.mu.Lock()
	}
	defer h.mu.Unlock()
	if h.off == len(h.data) {
		return 0, io.EOF
	}
	n := copy(p, h.data[h.off:])
	h.off += n
	poke(h.space)
	return n, nil
}

// Close is the tap's: what the player writes after it fails.
func (h *hostInput) Close() error {
	h.mu.Lock()
	h.rclosed = true
	h.mu.Unlock()
	poke(h.space)
	poke(h.wake)
	return nil
}

// serverOutput splits what the tap writes into frames and gives each to
// the player, keeping at most classify.MaxParse bytes of one.
type serverOutput struct {
	mu      sync.Mutex
	p       *player
	sp      *classify.Splitter
	pend    []byte // bytes the splitter has not consumed
	frame   []byte // the open frame's consumed bytes
	closed  bool
	endedCh chan struct{}
}

func (s *serverOutput) done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.endedCh == nil {
		s.endedCh = make(chan struct{})
		if s.closed {
			close(s.endedCh)
		}
	}
	return s.endedCh
}

func (s *serverOutput) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, io.ErrClosedPipe
	}
	s.split(b, false)
	return len(b), nil
}

// Close ends the last frame; the live server's output has ended.
func (s *serverOutput) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.split(nil, true)
		s.closed = true
		if s.endedCh != nil {
			close(s.endedCh)
		}
	}
	s.mu.Unlock()
	s.p.end()
	return nil
}

// split hands the frames that end in what came to the player. s.mu is
// held.
func (s *serverOutput) split(b []byte, atEOF bool) {
	data := b
	if len(s.pend) > 0 {
		s.pend = append(s.pend, b...)
		data = s.pend
	}
	now := time.Now()
	delivered := false
	for {
		n, end := s.sp.Split(data, atEOF)
		whole := data[:n]
		data = data[n:]
		if !end {
			if keep := classify.MaxParse - len(s.frame); keep > 0 {
				s.frame = append(s.frame, whole[:min(n, keep)]...)
			}
			if n == 0 {
				break
			}
			continue
		}
		frame := whole
		if len(s.frame) > 0 {
			if keep := classify.MaxParse - len(s.frame); keep > 0 {
				s.frame = append(s.frame, whole[:min(n, keep)]...)
			}
			frame = s.frame
		} else if len(frame) > classify.MaxParse {
			frame = frame[:classify.MaxParse]
		}
		if body := s.sp.Frame().Body(frame); len(body) > 0 {
			s.p.deliver(body, now)
			delivered = true
		}
		s.frame = s.frame[:0]
	}
	s.pend = append(s.pend[:0], data...)
	if delivered {
		s.p.poke()
	}
}
