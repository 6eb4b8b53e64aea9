package replay

import (
	"bytes"
	"strconv"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// A Forward is the real server behind replay --as-server --unmatched
// forward: requests that match nothing in the recording go to it, and its
// answers come back to the host. It gets the host's handshake too (its
// initialize under an id of replay's own, whose answer only replay reads,
// and every notification), so that it is ready when a request comes.
type Forward struct {
	To   interface{ Write([]byte) (int, error) } // the real server's input
	From FrameSource                             // its output
	// Close closes To, when the host has closed its input.
	Close func() error
}

// forwarding is the state of a Forward; server.mu guards it.
type forwarding struct {
	fw      *Forward
	framing classify.Framing
	next    int
	host    map[string]bool // ids of host requests waiting for the real server
	asked   map[string]bool // ids of the real server's requests to the host
	ended   bool
	// out carries the frames to the real server to a goroutine that
	// writes them, so that no write waits while server.mu is held.
	out chan []byte
}

func newForwarding(fw *Forward, framing classify.Framing) *forwarding {
	return &forwarding{fw: fw, framing: framing, host: map[string]bool{}, asked: map[string]bool{},
		out: make(chan []byte, 4096)}
}

// forwardFrame queues a frame for the real server. s.mu is held.
func (s *server) forwardFrame(body []byte) {
	if s.closing {
		return // out is closed
	}
	s.fwd.out <- classify.AppendFrame(nil, s.fwd.framing, body, nil)
}

// writeForward writes the queued frames to the real server, and closes
// its input once the host has closed replay's (out is closed).
func (s *server) writeForward() {
	failed := false
	for b := range s.fwd.out {
		if _, err := s.fwd.fw.To.Write(b); err != nil && !failed {
			failed = true
			s.mu.Lock()
			s.log("the real server no longer reads: %v", err)
			s.mu.Unlock()
		}
	}
	if s.fwd.fw.Close != nil {
		s.fwd.fw.Close()
	}
}

// forwardRequest sends a host request that matched nothing to the real
// server. s.mu is held.
func (s *server) forwardRequest(m *classify.Message, body []byte) {
	s.fwd.host[m.ID().Key()] = true
	s.stats.Forwarded++
	s.log("%s id %s: no recorded answer; forwarded to the real server", esc(m.Method()), esc(m.ID().String()))
	s.forwardFrame(body)
}

// forwardHandshake gives the real server the host's initialize, under an
// id of replay's own. s.mu is held.
func (s *server) forwardHandshake(body []byte) {
	s.fwd.next++
	id := strconv.AppendQuote(nil, "rpctap-forward-"+strconv.Itoa(s.fwd.next))
	s.forwardFrame(withID(body, id))
}

// forwardAnswer passes the host's answer to a request of the real server
// on, and reports whether it was one. s.mu is held.
func (s *server) forwardAnswer(key string, body []byte) bool {
	if s.fwd == nil || !s.fwd.asked[key] {
		return false
	}
	delete(s.fwd.asked, key)
	s.forwardFrame(body)
	return true
}

// waitingForward reports whether a forwarded request still waits for the
// real server's answer. s.mu is held.
func (s *server) waitingForward() bool {
	return s.fwd != nil && !s.fwd.ended && len(s.fwd.host) > 0
}

// readForward reads the real server's frames: answers to forwarded
// requests and its own requests go to the host; other answers (to
// replay's own initialize) and its notifications (the recording plays its
// own) do not.
func (s *server) readForward() {
	profile := classify.JSONRPC
	for {
		body, err := s.fwd.fw.From.Next()
		s.mu.Lock()
		if err != nil {
			s.fwd.ended = true
			if len(s.fwd.host) > 0 {
				s.log("the real server ended with %d forwarded requests unanswered", len(s.fwd.host))
			}
			s.mu.Unlock()
			s.poke()
			return
		}
		m := classify.Classify(body, classify.S2H, profile)
		key := ""
		if m.HasID() {
			key = m.ID().Key()
		}
		switch {
		case m.Kind == classify.KindResponse && s.fwd.host[key]:
			delete(s.fwd.host, key)
			s.push(outItem{due: time.Now(), raw: bytes.Clone(body), answer: true})
		case m.Kind == classify.KindRequest:
			s.fwd.asked[key] = true
			s.push(outItem{due: time.Now(), raw: bytes.Clone(body)})
		}
		s.mu.Unlock()
	}
}
