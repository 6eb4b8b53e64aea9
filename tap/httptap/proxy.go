// Package httptap is the tap's HTTP sibling: a reverse proxy in front of
// a Streamable HTTP server that relays every request and response
// unchanged, streamed, and hands each JSON-RPC message it sees to a
// tap.Feed, which records, judges and serves it as the stdio tap does.
package httptap

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
)

// maxBody is how much of one body or SSE event the proxy holds to record
// it. A larger one is relayed all the same, and recorded as a frame of
// kind http that says it was too large.
const maxBody = 16 << 20

// Options configure a Proxy.
type Options struct {
	Target *url.URL // the server: scheme, host and the path the host is given
	Feed   *tap.Feed
	// Redactor masks secrets in the recorded header values and paths
	// (nil: none, as with --no-redact).
	Redactor *sessions.Redactor
	// Redact names more headers whose values are never recorded, beside
	// Authorization, Proxy-Authorization, Cookie and Set-Cookie.
	Redact []string
	// Transport sends the requests; nil: one with no timeout of its own.
	Transport http.RoundTripper
}

// A Proxy relays a host's HTTP requests to the target and records what
// crossed. It is an http.Handler; ServeHTTP may be called concurrently.
type Proxy struct {
	target    *url.URL
	feed      *tap.Feed
	redactor  *sessions.Redactor
	secret    map[string]bool // canonical names of headers recorded masked
	kept      []string        // the headers a record keeps, in order: mcpHeaders, then the --redact ones
	rp        *httputil.ReverseProxy
	exchanges atomic.Int64
	transport http.RoundTripper
	last      atomic.Pointer[http.Header] // what an injected request carries of the host's last POST
	smu       sync.Mutex
	streams   []*hostStream // the SSE streams open to the host, oldest first
}

// New makes a proxy to opts.Target.
func New(opts Options) *Proxy {
	p := &Proxy{target: opts.Target, feed: opts.Feed, redactor: opts.Redactor, secret: map[string]bool{}, kept: slices.Clone(mcpHeaders)}
	for _, n := range append([]string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}, opts.Redact...) {
		n = http.CanonicalHeaderKey(n)
		p.secret[n] = true
		if !slices.ContainsFunc(p.kept, func(k string) bool { return strings.EqualFold(k, n) }) {
			p.kept = append(p.kept, n)
		}
	}
	rt := opts.Transport
	if rt == nil {
		rt = NewTransport()
	}
	p.transport = rt
	if opts.Feed != nil {
		opts.Feed.OnInject(p.inject, p.injectHost)
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      rt,
		FlushInterval:  -1, // every write reaches the host at once: an SSE event is never held back
		ModifyResponse: p.response,
		ErrorHandler:   p.unreachable,
		// A body that broke off is the record's to say (responseBody):
		// nothing goes to rpctap's stderr under the host.
		ErrorLog: log.New(io.Discard, "", 0),
		// The copy buffers are reused: without, each response cost one
		// of 32 KiB, most of what a small POST allocated.
		BufferPool: buffers{},
	}
	return p
}

// buffers is the proxy's httputil.BufferPool.
type buffers struct{}

var bufferPool = sync.Pool{New: func() any { return new([32 << 10]byte) }}

func (buffers) Get() []byte { return bufferPool.Get().(*[32 << 10]byte)[:] }

func (buffers) Put(b []byte) {
	if len(b) == 32<<10 {
		bufferPool.Put((*[32 << 10]byte)(b))
	}
}

// NewTransport is the transport a Proxy sends with by default: the
// environment's proxy settings, and no timeout, retry or header of its
// own (the host's and the server's timeouts decide; an Accept-Encoding is
// the host's to send).
func NewTransport() *http.Transport {
	return &http.Transport{
		Proxy:              http.ProxyFromEnvironment,
		DialContext:        (&net.Dialer{}).DialContext,
		ForceAttemptHTTP2:  true,
		DisableCompression: true,
		MaxIdleConns:       100,
		// Many hosts (or one with many requests in flight) reuse the
		// connections to the one target rather than dial one for each
		// request beyond the default two idle.
		MaxIdleConnsPerHost: 100,
	}
}

// The X-Forwarded headers ReverseProxy takes off before Rewrite: the host
// sent them, so they go on.
var forwarded = []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "Forwarded"}

func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	pr.Out.URL.Scheme, pr.Out.URL.Host = p.target.Scheme, p.target.Host
	pr.Out.Host = "" // the target's, from the URL
	for _, h := range forwarded {
		if v, ok := pr.In.Header[h]; ok {
			pr.Out.Header[h] = v
		}
	}
}

// ServeHTTP relays one request and its response.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{p: p, n: p.exchanges.Add(1), method: r.Method, path: p.redactor.MaskString(r.URL.RequestURI())}
	x.w = w
	x.self = url.URL{Scheme: "http", Host: r.Host}
	if r.TLS != nil {
		x.self.Scheme = "https"
	}
	if r.Method == http.MethodPost {
		p.remember(r.Header)
		if p.feed.Capturing(classify.H2S) && p.captured(w, r, x) {
			return
		}
	}
	var relayed func() // a held request's: it has gone on
	if p.holdingRequests(r) {
		forward, done := p.hold(w, r, x)
		if !forward {
			done()
			return
		}
		if relayed = done; relayed != nil {
			defer relayed()
		}
	}
	body := &requestBody{x: x, in: r.Body, header: r.Header, held: hold{over: r.ContentLength > maxBody}, relayed: relayed}
	if relayed != nil {
		body.once.Do(func() {}) // recorded as it left the hold
	}
	r.Body = body
	r = r.WithContext(context.WithValue(r.Context(), exchangeKey{}, body))
	// The body goes on to the target while its answer comes back, as it
	// would without the proxy: by default the host's server would take
	// what is left of the body for itself once the answer's headers go
	// (HTTP/2 needs no leave: the call fails and changes nothing).
	http.NewResponseController(w).EnableFullDuplex()
	p.rp.ServeHTTP(w, r)
	body.record() // a request whose body the transport never finished
}

type exchangeKey struct{}

// An exchange is one request and its response.
type exchange struct {
	p      *Proxy
	n      int64
	method string
	path   string
	own    bool                // the proxy's own request: an injected frame's
	w      http.ResponseWriter // the host's, for a frame injected toward it; nil for the proxy's own
	self   url.URL             // the proxy, as the host reached it
	// asked holds the ids of the POST's requests that no event of its
	// stream has answered yet (set once the request is recorded, then
	// read and changed by the response's reader only).
	asked map[string]bool
}

// ask notes the requests of a POST body, to know at its stream's end
// whether the stream answered them.
func (x *exchange) ask(body []byte) {
	m := classify.Classify(body, classify.H2S, classify.MCP)
	each(&m, func(m *classify.Message) {
		if m.Kind == classify.KindRequest {
			if x.asked == nil {
				x.asked = map[string]bool{}
			}
			x.asked[string(m.ID().Raw)] = true
		}
	})
}

// answered notes the answers an SSE event carries.
func (x *exchange) answered(data []byte) {
	if len(x.asked) == 0 {
		return
	}
	m := classify.Classify(data, classify.S2H, classify.MCP)
	each(&m, func(m *classify.Message) {
		if m.Kind == classify.KindResponse {
			delete(x.asked, string(m.ID().Raw))
		}
	})
}

// each calls fn with m, or with each member of the batch m.
func each(m *classify.Message, fn func(*classify.Message)) {
	if m.Kind != classify.KindBatch {
		fn(m)
		return
	}
	for i := range m.Members {
		fn(&m.Members[i])
	}
}

// info is what HTTP said of a frame of x.
func (x *exchange) info(status int, h http.Header) *sessions.HTTPInfo {
	info := &sessions.HTTPInfo{Exchange: x.n, Method: x.method, Path: x.path, Status: status,
		ContentType: h.Get("Content-Type"), Headers: x.p.headers(h)}
	if status == 0 {
		info.Accept = h.Get("Accept") // the transport rules judge it
	}
	return info
}

// mcpHeaders are the headers that matter to MCP, as the records name them.
var mcpHeaders = []string{"Mcp-Method", "Mcp-Name", "Mcp-Session-Id", "MCP-Protocol-Version", "Last-Event-ID",
	"WWW-Authenticate", "Origin", "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie"}

// headers lists the headers of h that a record keeps: those that matter
// to MCP and the --redact ones, secrets masked.
func (p *Proxy) headers(h http.Header) []sessions.HTTPHeader {
	var out []sessions.HTTPHeader
	for _, name := range p.kept {
		vs := h.Values(name)
		if len(vs) == 0 {
			continue
		}
		v := strings.Join(vs, ", ")
		if p.secret[http.CanonicalHeaderKey(name)] {
			v = masked(name, v)
		} else {
			v = p.redactor.MaskString(v)
		}
		out = append(out, sessions.HTTPHeader{Name: name, Value: v})
	}
	return out
}

// masked is what a record says of a secret header's value: the
// authorization scheme (Bearer, Basic), which is no secret, then a mask
// that names the header.
func masked(name, v string) string {
	mask := "***" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "***"
	if scheme, _, ok := strings.Cut(v, " "); ok && strings.HasSuffix(strings.ToLower(name), "authorization") {
		return scheme + " " + mask
	}
	return mask
}

// response sets up the recording of a response's frames as its body is
// relayed.
func (p *Proxy) response(resp *http.Response) error {
	body, _ := resp.Request.Context().Value(exchangeKey{}).(*requestBody)
	if body == nil {
		return nil
	}
	body.record() // the request's frames go first
	var recorded bool
	var relayed func()
	if p.feed.Holding(classify.S2H) {
		var err error
		if recorded, relayed, err = p.holdAnswer(body.x, resp); err != nil {
			return err
		}
	}
	rb := p.responseBody(body.x, resp)
	rb.recorded = recorded
	if relayed != nil {
		rb.pending = append(rb.pending, relayed)
	}
	resp.Body = rb
	return nil
}

// responseBody is resp's body, recording x's response frames as it is read.
func (p *Proxy) responseBody(x *exchange, resp *http.Response) *responseBody {
	info := x.info(resp.StatusCode, resp.Header)
	rb := &responseBody{x: x, in: resp.Body, info: info, held: hold{over: resp.ContentLength > maxBody}}
	switch enc := encoding(resp.Header); {
	case enc != "" && !decodable(enc):
		rb.mode = modeOpaque
		info.Error = notRead(resp.Header)
	case enc != "":
		rb.decodeAs(enc, mediaType(info.ContentType))
	case mediaType(info.ContentType) == "text/event-stream":
		rb.mode = modeSSE
		if x.method == http.MethodGet {
			rb.endpoint = &endpointRewriter{in: resp.Body, target: p.target, self: x.self}
			rb.in = rb.endpoint
		}
	case mediaType(info.ContentType) == "application/json":
		rb.mode = modeJSON
	default:
		rb.mode = modeOther
	}
	if rb.mode == modeSSE && rb.enc == "" && x.w != nil && resp.ContentLength < 0 { // bytes written as they are, of no set length
		rb.host = &hostStream{x: x, info: info, w: x.w, boundary: true}
		rb.holdable = true
	}
	return rb
}

// notRead is what a record says of a body in an encoding rpctap does not
// decode.
func notRead(h http.Header) string {
	return "the body is encoded (" + h.Get("Content-Encoding") + "); rpctap relayed it without reading its messages"
}

func mediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// unreachable answers a request the target could not be asked or did not
// answer: 502, with a JSON body that says why, recorded as a frame.
func (p *Proxy) unreachable(w http.ResponseWriter, r *http.Request, err error) {
	body, _ := r.Context().Value(exchangeKey{}).(*requestBody)
	if body != nil {
		body.record()
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the host went away: there is no one to answer
	}
	why := "rpctap could not reach the target " + p.target.Redacted() + ": " + err.Error()
	if unknown := (x509.UnknownAuthorityError{}); errors.As(err, &unknown) {
		why += "; if a CA of your own signed the server's certificate, have rpctap trust it: --ca-file ca.pem (or SSL_CERT_FILE=ca.pem in its environment)"
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadGateway)
	msg := classify.AppendString([]byte(`{"error":`), p.redactor.MaskString(why))
	w.Write(append(msg, "}\n"...))
	if body != nil {
		info := body.x.info(http.StatusBadGateway, w.Header())
		info.Error = p.redactor.MaskString(why)
		body.x.s2h(nil, info)
	}
}
