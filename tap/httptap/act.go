package httptap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// Acting on the session over HTTP: a frame the user injects toward the
// server goes as the proxy's own POST, with the headers of the host's last
// request, and its answer is recorded, captured: the host never reads it.
// A request the user holds is read whole before it is forwarded, and goes
// on (or not) as the user decides.

// carried are the headers of the host's last POST that an injected
// request is sent with: its session, its revision and its credentials,
// as the host sent them (the records mask them; these are the live
// values, never recorded as they are).
var carried = []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Authorization", "Cookie", "Origin", "Mcp-Method"}

// remember keeps what an injected request is sent with from a host's POST.
func (p *Proxy) remember(h http.Header) {
	kept := make(http.Header, len(carried))
	for _, name := range carried {
		if vs := h.Values(name); len(vs) > 0 {
			kept[http.CanonicalHeaderKey(name)] = vs
		}
	}
	for name := range p.secret {
		if vs := h.Values(name); len(vs) > 0 {
			kept[name] = vs
		}
	}
	p.last.Store(&kept)
}

// errNoHostRequest refuses an injection before the host's first POST.
var errNoHostRequest = errors.New("the host has sent no request yet: rpctap sends an injected frame with the headers of the host's last request (its session id, protocol version and credentials), so inject once the host has started its session")

// inject sends body to the target as the proxy's own POST and records
// its answer, captured, as it comes; it returns once the response's
// headers came, or with why none could.
func (p *Proxy) inject(body []byte) error {
	last := p.last.Load()
	if last == nil {
		return errNoHostRequest
	}
	h := last.Clone()
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	nameMCPHeaders(h, body)
	req, err := http.NewRequest(http.MethodPost, p.target.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = h
	x := &exchange{p: p, n: p.exchanges.Add(1), method: http.MethodPost, path: p.redactor.MaskString(p.target.RequestURI()), own: true}
	p.feed.Injected(classify.H2S, body, x.info(0, h))
	resp, err := p.transport.RoundTrip(req)
	if err != nil {
		why := p.redactor.MaskString("rpctap could not reach the target " + p.target.Redacted() + ": " + err.Error())
		info := x.info(http.StatusBadGateway, nil)
		info.Error = why
		p.feed.Captured(classify.S2H, nil, info)
		return errors.New(why)
	}
	rb := p.responseBody(x, resp)
	go func() {
		io.Copy(io.Discard, rb)
		rb.Close()
	}()
	return nil
}

// nameMCPHeaders sets Mcp-Method and Mcp-Name to what body says, when h
// carries Mcp-Method (the host speaks a revision that has them): a
// request whose headers disagree with its body is refused.
func nameMCPHeaders(h http.Header, body []byte) {
	if h.Get("Mcp-Method") == "" {
		return
	}
	h.Del("Mcp-Name")
	m := classify.Classify(body, classify.H2S, classify.JSONRPC)
	method := m.Method()
	if method == "" {
		h.Del("Mcp-Method")
		return
	}
	h.Set("Mcp-Method", method)
	member := map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}[method]
	var name string
	if member != "" && json.Unmarshal(classify.Member(classify.Member(body, "params"), member), &name) == nil && name != "" {
		h.Set("Mcp-Name", name)
	}
}

// hold reads a host's POST whole and offers it to the intercept before it
// is forwarded. It reports whether the request goes on to the target,
// with r's body (and, for an edit, its length and MCP headers) set to what
// the user decided. relayed, for a request that was held (and is recorded
// already), is to be called once it has been handed on: the request held
// after it waits for that. A request that did not go on has been
// answered, or left for the host to give up.
func (p *Proxy) hold(w http.ResponseWriter, r *http.Request, x *exchange) (forward bool, relayed func()) {
	buf, ok := readWhole(r)
	if !ok {
		return true, nil
	}
	out, ok := p.feed.Hold(classify.H2S, buf, x.info(0, r.Header))
	if !ok {
		return true, nil
	}
	switch out.How {
	case sessions.HeldDropped:
		if classify.Classify(buf, classify.H2S, classify.JSONRPC).Kind == classify.KindRequest {
			// Its answer never comes, as on a pipe: the host's own
			// timeout decides how long it waits.
			out.Relayed()
			<-r.Context().Done()
			return false, out.Relayed
		}
		// Nothing to answer: what a server says of it.
		w.WriteHeader(http.StatusAccepted)
		p.feed.Frame(classify.S2H, nil, x.info(http.StatusAccepted, w.Header()))
		return false, out.Relayed
	case sessions.HeldAnswered:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(out.Reply)
		p.feed.Injected(classify.S2H, out.Reply, x.info(http.StatusOK, w.Header()))
		return false, out.Relayed
	case sessions.HeldEdited:
		r.Body = io.NopCloser(bytes.NewReader(out.Body))
		r.ContentLength = int64(len(out.Body))
		r.Header.Del("Content-Length")
		nameMCPHeaders(r.Header, out.Body)
	}
	if len(out.Body) == 0 {
		out.Relayed() // no body for the transport to read
	}
	return true, out.Relayed
}

// s2h records a frame of x's response: captured when x is the proxy's
// own request (an injected one), whose answer the host never reads.
func (x *exchange) s2h(body []byte, info *sessions.HTTPInfo) {
	if x.own {
		x.p.feed.Captured(classify.S2H, body, info)
		return
	}
	x.p.feed.Frame(classify.S2H, body, info)
}

// readWhole reads r's body, up to maxBody, and sets r's body to read the
// same bytes again; false when it is larger, or could not be read whole
// (then r's body reads what was read, then the rest).
func readWhole(r *http.Request) ([]byte, bool) {
	buf, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(buf) > maxBody {
		r.Body = readCloser{io.MultiReader(bytes.NewReader(buf), r.Body), r.Body}
		return nil, false
	}
	r.Body = io.NopCloser(bytes.NewReader(buf))
	return buf, true
}

type readCloser struct {
	io.Reader
	io.Closer
}

// holdingRequests reports whether a host's request must be offered to
// the intercept: a POST, while the user holds frames either way (a filter
// toward the host that names a method holds the answers to the requests
// the intercept saw).
func (p *Proxy) holdingRequests(r *http.Request) bool {
	return r.Method == http.MethodPost && (p.feed.Holding(classify.H2S) || p.feed.Holding(classify.S2H))
}

// A hostStream is an SSE response on its way to the host, which a frame
// the user injects toward the host is written into, as an event of its
// own, between two of the server's. The relay (ReverseProxy's copy loop)
// holds mu from when Read returns bytes until it asks for more, that is
// while it writes them to the host: an injector that gets mu writes
// between the relay's writes, and only where the bytes written so far end
// between two events.
type hostStream struct {
	x    *exchange
	info *sessions.HTTPInfo
	w    http.ResponseWriter

	mu       sync.Mutex
	boundary bool // under mu: the bytes written end between two events
	ended    bool // under mu

	// The relay's own, never an injector's.
	held, listed bool
}

// written is the relay's, as it asks for more: what Read returned last
// has been written to the host.
func (h *hostStream) written() {
	if h == nil {
		return
	}
	if !h.listed {
		h.listed = true // the response's header has been written: events may go
		h.x.p.addStream(h)
	}
	if h.held {
		h.held = false
		h.mu.Unlock()
	}
}

// relaying is the relay's, once the server's bytes came and before they
// are returned to be written.
func (h *hostStream) relaying() {
	if h != nil && !h.held {
		h.mu.Lock()
		h.held = true
	}
}

// returned is the relay's, as Read returns: boundary says whether the
// bytes end between two events; ended, that the stream is over.
func (h *hostStream) returned(boundary, ended bool) {
	if h == nil {
		return
	}
	h.relaying()
	h.boundary = boundary
	if ended {
		h.ended = true
		h.x.p.dropStream(h)
		h.held = false
		h.mu.Unlock()
	}
}

// inject writes body to the host as an event of its own, recorded as the
// user's.
func (h *hostStream) inject(body []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.ended:
		return errNoStream
	case !h.boundary:
		return errors.New("the stream toward the host is in the middle of a server's event; inject again once it has ended")
	}
	info := *h.info
	h.x.p.feed.Injected(classify.S2H, body, &info)
	var ev []byte
	for line := range bytes.Lines(body) {
		ev = append(append(ev, "data: "...), bytes.TrimRight(line, "\r\n")...)
		ev = append(ev, '\n')
	}
	if _, err := h.w.Write(append(ev, '\n')); err != nil {
		return fmt.Errorf("the host's stream would not take the frame: %w", err)
	}
	http.NewResponseController(h.w).Flush()
	return nil
}

// errNoStream refuses a frame toward the host when no stream is open.
var errNoStream = errors.New("no response stream to the host is open: over HTTP, rpctap writes a frame toward the host as an event of an open SSE stream (the host's GET stream, or a POST's streamed answer); inject once the host has one open")

func (p *Proxy) addStream(h *hostStream) {
	p.smu.Lock()
	p.streams = append(p.streams, h)
	p.smu.Unlock()
}

func (p *Proxy) dropStream(h *hostStream) {
	p.smu.Lock()
	p.streams = slices.DeleteFunc(p.streams, func(s *hostStream) bool { return s == h })
	p.smu.Unlock()
}

// injectHost writes body into a stream open to the host: the latest GET
// stream (the one a server's own messages go on), else the latest POST
// stream.
func (p *Proxy) injectHost(body []byte) error {
	p.smu.Lock()
	var h *hostStream
	for _, s := range p.streams {
		if h == nil || s.x.method == http.MethodGet || h.x.method != http.MethodGet {
			h = s
		}
	}
	p.smu.Unlock()
	if h == nil {
		return errNoStream
	}
	return h.inject(body)
}

// captured keeps from the server a host's POST that answers a request
// the user injected toward the host: it is recorded, captured, and the
// host is answered 202, as a server would. It reports whether it did;
// otherwise r's body is as it was.
func (p *Proxy) captured(w http.ResponseWriter, r *http.Request, x *exchange) bool {
	buf, ok := readWhole(r)
	if !ok {
		return false
	}
	if !p.feed.Take(classify.H2S, buf, x.info(0, r.Header)) {
		return false
	}
	w.WriteHeader(http.StatusAccepted)
	p.feed.Frame(classify.S2H, nil, x.info(http.StatusAccepted, w.Header()))
	return true
}
