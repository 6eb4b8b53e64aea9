package playhost

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
)

// conn is the host's end of one server: it writes frames in the server's
// framing, numbers rpctap's requests, hands each answer to the request
// that waits for it, and answers each of the server's requests as soon as
// it reads it, with the reply that fits its method (inject.HostReply).
type conn struct {
	out     *classify.FrameWriter
	lsp     bool // Content-Length framing (else one frame a line)
	profile classify.Profile
	host    inject.Host

	mu      sync.Mutex
	next    int
	answers map[string]chan classify.Message
	done    chan error // the server's output ended (nil) or a write failed
}

func newConn(w io.Writer, r io.Reader, lsp bool, p classify.Profile, host inject.Host) *conn {
	framing := classify.FramingNDJSON
	if lsp {
		framing = classify.FramingLSP
	}
	c := &conn{out: classify.NewFrameWriter(w, framing), lsp: lsp, profile: p, host: host, answers: map[string]chan classify.Message{}, done: make(chan error, 1)}
	go c.read(r)
	return c
}

func (c *conn) write(body string) error { return c.out.WriteFrame([]byte(body)) }

// ask sends a request of rpctap's host; the channel gets its answer.
func (c *conn) ask(method, params string) (chan classify.Message, error) {
	ch := make(chan classify.Message, 1)
	c.mu.Lock()
	c.next++
	id := fmt.Sprintf(`"rpctap-host-%d"`, c.next)
	c.answers[id] = ch
	c.mu.Unlock()
	frame := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
	if params != "" {
		frame += `,"params":` + params
	}
	return ch, c.write(frame + "}")
}

// notify sends a notification of rpctap's host.
func (c *conn) notify(method, params string) error {
	frame := `{"jsonrpc":"2.0","method":"` + method + `"`
	if params != "" {
		frame += `,"params":` + params
	}
	return c.write(frame + "}")
}

// wait is the answer on ch, or false when ctx ends or the server's
// output does first.
func (c *conn) wait(ctx context.Context, ch chan classify.Message) (classify.Message, bool) {
	select {
	case m := <-ch:
		return m, true
	case <-ctx.Done():
	case err := <-c.done:
		c.done <- err
	}
	return classify.Message{}, false
}

func (c *conn) read(r io.Reader) {
	framing := classify.FramingNDJSON
	if c.lsp {
		framing = classify.FramingLSP
	}
	fr := classify.NewFrameReader(r, framing, 0)
	for {
		f, err := fr.Next()
		if err != nil {
			c.done <- nil
			return
		}
		m := classify.ClassifyFramed(f.Body(), f.Info, classify.S2H, c.profile)
		switch m.Kind {
		case classify.KindResponse:
			if m.HasID() {
				c.mu.Lock()
				ch := c.answers[string(m.ID().Raw)]
				delete(c.answers, string(m.ID().Raw))
				c.mu.Unlock()
				if ch != nil {
					m.Frame = append([]byte(nil), m.Frame...)
					ch <- m
				}
			}
		case classify.KindRequest:
			if err := c.write(string(inject.HostReply(&m, c.host))); err != nil {
				c.done <- err
				return
			}
		}
	}
}
