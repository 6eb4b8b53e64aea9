package httptap

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
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
	held   hold
	once   sync.Once
	// relayed, for a request the user held, says it is being sent.
	relayed func()
	// ended: in has given its end. It is not read again: the transport
	// reads once more past a Content-Length, and the host's server may
	// have closed the body by then, once the answer's headers went (a
	// Read would fail, and the transport close the connection to the
	// target in mid-answer).
	ended bool
}

func (b *requestBody) Read(p []byte) (int, error) {
	if b.ended {
		return 0, io.EOF
	}
	if b.relayed != nil {
		b.relayed()
	}
	n, err := b.in.Read(p)
	b.mu.Lock()
	b.held.add(p[:n])
	b.mu.Unlock()
	if err == io.EOF {
		b.ended = true
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
		body := b.held.bytes()
		switch e := encoding(b.header); {
		case b.held.over:
			info.Error = tooLarge
		case e != "" && !decodable(e):
			info.Error, body = notRead(b.header), nil
		case e != "" && len(body) > 0:
			var err error
			if body, err = decodeHeld(e, body); err != nil {
				info.Error = undecodable(e, err)
			}
		}
		if b.x.method == http.MethodPost && info.Error == "" {
			b.x.ask(body)
		}
		b.x.p.feed.Frame(classify.H2S, body, info)
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

// A hold keeps the first maxBody bytes of a body to record it, in chunks
// that grow to holdChunk: a body that turns out larger than maxBody cost
// no copies as it grew, and is let go at once.
type hold struct {
	chunks [][]byte
	n      int
	over   bool // the body is larger than maxBody: nothing is held
}

const holdChunk = 64 << 10

func (h *hold) add(p []byte) {
	if h.over {
		return
	}
	if h.n+len(p) > maxBody {
		*h = hold{over: true}
		return
	}
	h.n += len(p)
	for len(p) > 0 {
		if k := len(h.chunks); k == 0 || len(h.chunks[k-1]) == cap(h.chunks[k-1]) {
			h.chunks = append(h.chunks, make([]byte, 0, min(max(h.n, 512), holdChunk)))
		}
		c := &h.chunks[len(h.chunks)-1]
		m := min(len(p), cap(*c)-len(*c))
		*c = append(*c, p[:m]...)
		p = p[m:]
	}
}

// bytes is what h holds, in one piece.
func (h *hold) bytes() []byte {
	if len(h.chunks) > 1 {
		h.chunks = [][]byte{bytes.Join(h.chunks, nil)}
	}
	if len(h.chunks) == 0 {
		return nil
	}
	return h.chunks[0]
}

type mode uint8

const (
	modeOpaque mode = iota // no JSON-RPC in it: one frame of kind http
	modeJSON               // one JSON body
	modeSSE                // a stream of events, a frame each
	modeOther              // another content type: a frame if it holds JSON, for the rules to judge
)

// responseBody relays a response's body to the host and records its
// frames as they pass: each SSE event as soon as its blank line has been
// read, a JSON body at its end.
type responseBody struct {
	x      *exchange
	in     io.ReadCloser
	info   *sessions.HTTPInfo
	mode   mode
	held   hold           // the JSON body (as it came, in its encoding)
	enc    string         // the body's Content-Encoding, which rpctap decodes
	dec    *streamDecoder // decodes an SSE stream in enc
	events sse
	frames int // frames recorded
	ended  bool
	host   *hostStream // an SSE stream to the host, which a frame may be injected into; nil: none
	read   int64       // bytes relayed
	// cut says why the body ended before its end, when it did: the
	// target's connection broke off, or the host stopped reading.
	cut string
	// endpoint rewrites a GET stream's legacy endpoint event; nil for
	// other responses.
	endpoint *endpointRewriter

	// Holding what goes to the host (see readHeld). holdable: the body
	// is a stream of the host's own whose events may be held; recorded:
	// a JSON body held whole, recorded as it left the hold.
	holdable, recorded bool
	raw                []byte   // the open event's bytes, as they came
	rawSent            bool     // part of the open event went on unheld
	lfOwed, lfPass     bool     // the last event's CRLF lacks its LF; it goes on with the event
	out                []byte   // what goes to the host next
	inErr              error    // how the server's body ended, once it has
	scratch            []byte   // what the server's bytes are read into
	pending            []func() // the Relayed of held frames handed on
}

func (b *responseBody) Read(p []byte) (int, error) {
	b.host.written()
	if b.read > 0 {
		b.wentOn() // what Read returned last has been written
	}
	if b.holdsEvents() {
		return b.readHeld(p)
	}
	n, err := b.in.Read(p)
	b.host.relaying()
	b.read += int64(n)
	switch {
	case b.dec != nil:
		b.dec.write(p[:n])
	case b.mode == modeSSE:
		b.events.feed(p[:n], b.event)
	default:
		b.held.add(p[:n])
	}
	b.ending(err)
	b.host.returned(b.between(), err != nil)
	return n, err
}

// between reports whether the stream relayed so far ends between two
// events. Of an encoded stream, whose events a decoder reads apart,
// Read cannot tell: never.
func (b *responseBody) between() bool { return b.dec == nil && b.events.atBoundary() }

// ending notes how the body ended, when err says it did.
func (b *responseBody) ending(err error) {
	switch {
	case err == nil || err == io.EOF:
	case errors.Is(err, context.Canceled) && b.mode == modeSSE && b.between():
		// The host closed the stream between events, as a host ends a
		// stream it no longer wants: a whole end, not a break.
	case errors.Is(err, context.Canceled):
		b.cut = "was not relayed whole: the host closed its connection after " + strconv.FormatInt(b.read, 10) + " bytes"
	default:
		b.cut = "broke off after " + strconv.FormatInt(b.read, 10) + " bytes: " + err.Error()
	}
	if err != nil {
		b.end()
	}
}

// Close ends the body; before its end, the proxy could not write to the
// host (it went, or closed its stream).
func (b *responseBody) Close() error {
	err := b.in.Close()
	if !b.ended {
		b.cut = "was not relayed whole: the host stopped reading (its connection ended) after " + strconv.FormatInt(b.read, 10) + " bytes"
	}
	b.end()
	b.host.returned(false, true)
	b.wentOn()
	return err
}

// event records one SSE event that carried data.
func (b *responseBody) event(e event) {
	b.recordEvent(e, b.eventInfo(e))
}

// eventInfo is what HTTP said of an SSE event.
func (b *responseBody) eventInfo(e event) *sessions.HTTPInfo {
	info := *b.info
	info.EventID, info.Retry = e.id, e.retry
	if e.typ != "message" {
		info.Event = e.typ
	}
	if e.over {
		info.Error = tooLarge
	}
	return &info
}

// recordEvent records an SSE event as it goes on to the host.
func (b *responseBody) recordEvent(e event, info *sessions.HTTPInfo) {
	b.frames++
	if e.typ == "endpoint" {
		b.endpointFrame(e, info)
		return
	}
	if !e.over {
		b.x.answered(e.data)
	}
	b.x.s2h(e.data, info)
}

// end records what the body held once it has ended: the JSON body, or a
// frame of kind http for a body that held no message.
func (b *responseBody) end() {
	if b.ended {
		return
	}
	b.ended = true
	info := b.info
	if b.mode == modeSSE {
		// The stream's end is a frame of its own, after its events: the
		// rules judge a request it left unanswered.
		end := *info
		end.StreamEnd = true
		info = &end
	}
	decodeErr := b.decoded()
	if cut := b.cutText(); cut != "" {
		info := *info
		info.Error = cut
		b.x.s2h(nil, &info)
		return
	}
	if decodeErr != nil {
		info.Error = undecodable(b.enc, decodeErr)
		b.x.s2h(nil, info)
		return
	}
	switch {
	case b.mode == modeSSE && b.x.method == http.MethodPost && b.frames > 0 && len(b.x.asked) == 0:
		// The stream answered every request of its POST: its end, whole,
		// says nothing the events did not (a frame each would double the
		// rows of a session whose server answers in streams).
		return
	case b.mode == modeJSON && b.recorded:
		return // as it left the hold
	case b.mode == modeJSON && b.held.over:
		info.Error = tooLarge
	case b.mode == modeJSON && len(bytes.TrimSpace(b.held.bytes())) > 0, b.mode == modeOther && !b.held.over && looksJSON(b.held.bytes()):
		b.x.s2h(b.held.bytes(), info)
		return
	}
	b.x.s2h(nil, info)
}

// looksJSON reports whether a body of another content type holds JSON: an
// object or an array.
func looksJSON(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

// decodeAs sets b to read its messages from a copy decoded from enc, of
// a body of media type mt.
func (b *responseBody) decodeAs(enc, mt string) {
	b.enc = enc
	switch mt {
	case "text/event-stream":
		b.mode = modeSSE
		b.dec = decodeStream(enc, func(p []byte) { b.events.feed(p, b.event) })
	case "application/json":
		b.mode = modeJSON
	default:
		b.mode = modeOpaque
	}
}

// decoded ends the decoding of an encoded body: the rest of an SSE
// stream's events are recorded, and a JSON body held is decoded. It says
// why the body could not be decoded, if it could not.
func (b *responseBody) decoded() error {
	switch {
	case b.dec != nil:
		return b.dec.close()
	case b.enc != "" && b.mode == modeJSON && !b.held.over && b.held.n > 0:
		data, err := decodeHeld(b.enc, b.held.bytes())
		if err != nil {
			return err
		}
		b.held = hold{chunks: [][]byte{data}, n: len(data)}
	}
	return nil
}

// cutText says how the body ended before its end, or an SSE stream in
// the middle of an event: "" when it ended whole. What of it was relayed
// went to the host; a message cut short is not recorded as one.
func (b *responseBody) cutText() string {
	midEvent := b.mode == modeSSE && (b.events.hasData || len(b.events.line) > 0)
	switch {
	case b.cut != "" && midEvent:
		return "the stream " + strings.Replace(b.cut, "after", "in the middle of an event, after", 1)
	case b.cut != "" && b.mode == modeSSE:
		return "the stream " + b.cut
	case b.cut != "":
		return "the body " + b.cut
	case midEvent:
		return "the stream ended in the middle of an event, after " + strconv.FormatInt(b.read, 10) + " bytes"
	}
	return ""
}

// endpointFrame records a legacy endpoint event, which carries a URL,
// not a message: as a frame of kind http that says which URL the host
// got, and the one the server sent when the proxy rewrote it.
func (b *responseBody) endpointFrame(e event, info *sessions.HTTPInfo) {
	mask := b.x.p.redactor.MaskString
	info.Endpoint = mask(string(e.data))
	if rw := b.endpoint; rw != nil && rw.given != rw.sent && rw.given == string(e.data) {
		info.EndpointFrom = mask(rw.sent)
	}
	if rw := b.endpoint; rw != nil && rw.other != "" && info.Error == "" {
		info.Error = mask("the endpoint is on another server (" + rw.other + "): the host sends its messages there, around rpctap")
	}
	b.x.s2h(nil, info)
}

// An event is one SSE event that carried data.
type event struct {
	data  []byte
	typ   string // its type, when it named one
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
	open    bool   // a line of an event came since the last blank line
	typ     string // the open event's type, when it names one
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
			emit(event{data: bytes.Clone(s.data), typ: s.typ, id: s.id, retry: s.retry, over: s.over})
		}
		s.data, s.hasData, s.over, s.id, s.retry, s.typ, s.open = s.data[:0], false, false, "", 0, "", false
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
	case "event":
		s.typ = string(value)
	case "retry":
		if n, err := strconv.ParseInt(string(value), 10, 64); err == nil && n >= 0 {
			s.retry = n
		}
	}
}
