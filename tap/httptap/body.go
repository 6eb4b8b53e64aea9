package httptap

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// requestBody relays a request's body to the transport and keeps it (up
// to maxBody) to record it once it has all gone, or once the response
// comes, whichever is first.
type requestBody struct {
	x      *exchange
	in     io.ReadCloser
	header http.Header
	mu     sync.Mutex
	buf    []byte
	over   bool
	once   sync.Once
	// relayed, for a request the user held, says it is being sent.
	relayed func()
}

func (b *requestBody) Read(p []byte) (int, error) {
	if b.relayed != nil {
		b.relayed()
	}
	n, err := b.in.Read(p)
	b.mu.Lock()
	b.buf, b.over = keep(b.buf, b.over, p[:n])
	b.mu.Unlock()
	if err == io.EOF {
		b.record()
	}
	return n, err
}

func (b *requestBody) Close() error { return b.in.Close() }

// record records the request's frame: its body, or a frame of kind http
// when it has none (a GET that opens a stream, a DELETE).
func (b *requestBody) record() {
	b.once.Do(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		info := b.x.info(0, b.header)
		if b.over {
			info.Error = tooLarge
			b.buf = nil
		}
		b.x.p.feed.Frame(classify.H2S, b.buf, info)
	})
}

const tooLarge = "the body is larger than rpctap holds to record (16 MiB); it was relayed whole"

// keep appends p to buf, up to maxBody; over says it went past.
func keep(buf []byte, over bool, p []byte) ([]byte, bool) {
	if over || len(buf)+len(p) > maxBody {
		return nil, true
	}
	return append(buf, p...), false
}

type mode uint8

const (
	modeOpaque mode = iota // no JSON-RPC in it: one frame of kind http
	modeJSON               // one JSON body
	modeSSE                // a stream of events, a frame each
)

// responseBody relays a response's body to the host and records its
// frames as they pass: each SSE event as soon as its blank line has been
// read, a JSON body at its end.
type responseBody struct {
	x      *exchange
	in     io.ReadCloser
	info   *sessions.HTTPInfo
	mode   mode
	buf    []byte // the JSON body, or the SSE bytes not yet split into lines
	over   bool
	events sse
	frames int // frames recorded
	ended  bool
	host   *hostStream // an SSE stream to the host, which a frame may be injected into; nil: none
}

func (b *responseBody) Read(p []byte) (int, error) {
	b.host.written()
	n, err := b.in.Read(p)
	b.host.relaying()
	switch b.mode {
	case modeSSE:
		b.events.feed(p[:n], b.event)
	default:
		b.buf, b.over = keep(b.buf, b.over, p[:n])
	}
	if err != nil {
		b.end()
	}
	b.host.returned(b.events.atBoundary(), err != nil)
	return n, err
}

func (b *responseBody) Close() error {
	err := b.in.Close()
	b.end()
	b.host.returned(false, true)
	return err
}

// event records one SSE event that carried data.
func (b *responseBody) event(e event) {
	info := *b.info
	info.EventID, info.Retry = e.id, e.retry
	if e.over {
		info.Error = tooLarge
	}
	b.frames++
	b.x.s2h(e.data, &info)
}

// end records what the body held once it has ended: the JSON body, or a
// frame of kind http for a body that held no message.
func (b *responseBody) end() {
	if b.ended {
		return
	}
	b.ended = true
	info := b.info
	switch {
	case b.mode == modeJSON && b.over:
		info.Error = tooLarge
	case b.mode == modeJSON && len(bytes.TrimSpace(b.buf)) > 0:
		b.x.s2h(b.buf, info)
		return
	case b.mode == modeSSE && b.frames > 0:
		return
	}
	b.x.s2h(nil, info)
}

// An event is one SSE event that carried data.
type event struct {
	data  []byte
	id    string
	retry int64
	over  bool
}

// sse splits a text/event-stream into events, as the bytes come.
type sse struct {
	line    []byte // the open line (its first maxBody bytes)
	lineCR  bool   // the last byte was a CR (a CRLF's LF is no second line end)
	longer  bool   // the open line is longer than maxBody
	data    []byte
	hasData bool
	over    bool
	id      string // the open event's id, when it sets one
	retry   int64
	open    bool // a line of an event came since the last blank line
}

// atBoundary reports whether the bytes fed so far end between two
// events: no line is open, and no event has begun.
func (s *sse) atBoundary() bool { return len(s.line) == 0 && !s.longer && !s.open }

func (s *sse) feed(p []byte, emit func(event)) {
	for len(p) > 0 {
		if s.lineCR && p[0] == '\n' {
			p = p[1:]
			s.lineCR = false
			continue
		}
		s.lineCR = false
		i := bytes.IndexAny(p, "\r\n")
		if i < 0 {
			s.addLine(p)
			return
		}
		s.addLine(p[:i])
		s.lineCR = p[i] == '\r'
		p = p[i+1:]
		s.endLine(emit)
	}
}

// addLine adds p to the open line. Of a line longer than maxBody the
// first bytes are kept, so that its field is known (a data line's event
// is too large to record) and it is not taken for the blank line that
// ends an event.
func (s *sse) addLine(p []byte) {
	if room := maxBody - len(s.line); len(p) > room {
		p, s.longer = p[:max(room, 0)], true
	}
	s.line = append(s.line, p...)
}

func (s *sse) endLine(emit func(event)) {
	line, longer := s.line, s.longer
	s.line, s.longer = s.line[:0], false
	if len(line) == 0 {
		if s.hasData {
			emit(event{data: bytes.Clone(s.data), id: s.id, retry: s.retry, over: s.over})
		}
		s.data, s.hasData, s.over, s.id, s.retry, s.open = s.data[:0], false, false, "", 0, false
		return
	}
	s.open = true
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "data":
		if s.hasData {
			s.data = append(s.data, '\n')
		}
		s.data, s.over = keep(s.data, s.over || longer, value)
		s.hasData = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			s.id = string(value)
		}
	case "retry":
		if n, err := strconv.ParseInt(string(value), 10, 64); err == nil && n >= 0 {
			s.retry = n
		}
	}
}
