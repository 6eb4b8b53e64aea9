package sessions

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// A Span is the OpenTelemetry span of one request/response pair, as the
// OTLP export writes it and a live exporter may send it: one span per
// pair, named after the method, with attributes after the semantic
// conventions for RPC (rpc.system "jsonrpc", rpc.method,
// rpc.jsonrpc.request_id, rpc.jsonrpc.error_code).
type Span struct {
	TraceID [16]byte
	SpanID  [8]byte
	// Parent is the parent span's id from the request's
	// params._meta.traceparent (W3C trace context); zero when there is
	// none, and the span is a root of the session's own trace.
	Parent     [8]byte
	Flags      byte // the traceparent's trace flags, when there was one
	Name       string
	Start, End time.Time
	// Attributes in order; values are string, int64 or bool.
	Attributes []SpanAttribute
	// Error says the answer was a JSON-RPC error; ErrorMessage is its
	// message.
	Error        bool
	ErrorMessage string
	// Answered is false for a request with no answer in the session (End
	// is then Start).
	Answered bool
}

// A SpanAttribute is one attribute of a Span.
type SpanAttribute struct {
	Key   string
	Value any // string, int64 or bool
}

// A SpanPair is what PairSpan builds a span from.
type SpanPair struct {
	// SessionID names the session: spans of a session without trace
	// context share a trace whose id derives from it, and span ids
	// derive from it and the request's line.
	SessionID string
	// Request is the request (a batch member on its own); Response its
	// answer, or nil.
	Request, Response *classify.Message
	// RequestLine and ResponseLine are their lines in the session file;
	// Member is the request's index in its batch, or -1.
	RequestLine, ResponseLine int64
	Member                    int
	Start, End                time.Time
	// RequestFate and ResponseFate are what became of each in the tap
	// (injected, held, dropped, captured, …): the span says them in the
	// attributes rpctap.request.fate and rpctap.response.fate.
	RequestFate, ResponseFate Fate
	// RequestHTTP and ResponseHTTP are the records' http objects in a
	// session the HTTP tap recorded (nil in a stdio session): the span
	// says what HTTP did (AppendHTTPAttributes) in the exchange that
	// carried the answer, or with none, the request.
	RequestHTTP, ResponseHTTP []byte
}

// PairSpan builds the span of a pair. Ids are derived, not random, so
// that an export of the same session gives the same spans.
func PairSpan(p SpanPair) Span {
	var s Span
	PairSpanIn(&s, p)
	return s
}

// PairSpanIn builds the span of a pair in s, reusing its attributes' memory.
func PairSpanIn(s *Span, p SpanPair) {
	*s = Span{Name: p.Request.Method(), Start: p.Start, End: p.Start, Attributes: s.Attributes[:0]}
	if s.Name == "" {
		s.Name = "jsonrpc"
	}
	s.SpanID = spanID(p.SessionID, p.RequestLine, p.Member)
	if tid, parent, flags, ok := ParseTraceparent(traceparentOf(p.Request)); ok {
		s.TraceID, s.Parent, s.Flags = tid, parent, flags
	} else {
		s.TraceID = sessionTraceID(p.SessionID)
	}
	c := RPCCall{Method: p.Request.Method(), HasID: p.Request.HasID(), Dir: p.Request.Dir}
	if c.HasID {
		c.ID = p.Request.ID().Text()
	}
	s.Attributes = AppendRPCAttributes(s.Attributes, c)
	s.Attributes = append(s.Attributes, SpanAttribute{"rpctap.request_line", p.RequestLine})
	if h, ok := ParseHTTP(p.ResponseHTTP); ok && p.Response != nil {
		s.Attributes = AppendHTTPAttributes(s.Attributes, SpanHTTP{Method: h.Method, Path: h.Path, Status: h.Status})
	} else if h, ok := ParseHTTP(p.RequestHTTP); ok {
		s.Attributes = AppendHTTPAttributes(s.Attributes, SpanHTTP{Method: h.Method, Path: h.Path})
	}
	if words := p.RequestFate.Words(); len(words) > 0 {
		s.Attributes = append(s.Attributes, SpanAttribute{"rpctap.request.fate", strings.Join(words, " ")},
			SpanAttribute{"rpctap.request.fate_text", p.RequestFate.Text()})
	}
	if words := p.ResponseFate.Words(); len(words) > 0 && p.Response != nil {
		s.Attributes = append(s.Attributes, SpanAttribute{"rpctap.response.fate", strings.Join(words, " ")},
			SpanAttribute{"rpctap.response.fate_text", p.ResponseFate.Text()})
	}
	if r := p.Response; r != nil {
		s.Answered, s.End = true, p.End
		s.Attributes = append(s.Attributes, SpanAttribute{"rpctap.response_line", p.ResponseLine})
		if r.HasError() {
			s.Error = true
			if code, ok := r.ErrorCode(); ok {
				s.Attributes = append(s.Attributes, SpanAttribute{"rpc.jsonrpc.error_code", code})
			}
			if msg, ok := ErrorMessage(r); ok {
				s.ErrorMessage = msg
				s.Attributes = append(s.Attributes, SpanAttribute{"rpc.jsonrpc.error_message", msg})
			}
		}
	} else {
		s.Attributes = append(s.Attributes, SpanAttribute{"rpctap.answered", false})
	}
}

// An RPCCall is what AppendRPCAttributes says of a call.
type RPCCall struct {
	Method string
	// ID is the request's id as ID.Text names it, when HasID.
	ID    string
	HasID bool
	// Dir is the request's direction.
	Dir classify.Direction
}

// AppendRPCAttributes appends the attributes every span of a call begins
// with, the file export's and the live exporter's: rpc.system,
// rpc.method, rpc.jsonrpc.version, rpc.jsonrpc.request_id (when the call
// has an id) and rpctap.direction. Each appends its own after them.
func AppendRPCAttributes(dst []SpanAttribute, c RPCCall) []SpanAttribute {
	dst = append(dst,
		SpanAttribute{"rpc.system", "jsonrpc"},
		SpanAttribute{"rpc.method", c.Method},
		SpanAttribute{"rpc.jsonrpc.version", "2.0"},
	)
	if c.HasID {
		dst = append(dst, SpanAttribute{"rpc.jsonrpc.request_id", c.ID})
	}
	return append(dst, SpanAttribute{"rpctap.direction", c.Dir.String()})
}

// SpanHTTP is what AppendHTTPAttributes says of a call over HTTP.
type SpanHTTP struct {
	Method string // the request's HTTP method
	Path   string // its path and query, as recorded (masked)
	Status int    // the status of the response that carried the answer; 0 when it had none
}

// AppendHTTPAttributes appends what HTTP did in a call over the HTTP
// transport, after OpenTelemetry's semantic conventions for HTTP: of the
// exchange that carried the answer, http.request.method, url.path,
// url.query (when the path has one) and http.response.status_code (when
// the answer came in a response; a host's answer to a server's request
// goes in a request, and has none). The file export and the live
// exporter both append them.
func AppendHTTPAttributes(dst []SpanAttribute, h SpanHTTP) []SpanAttribute {
	if h.Method != "" {
		dst = append(dst, SpanAttribute{"http.request.method", h.Method})
	}
	if h.Path != "" {
		path, query, hasQuery := strings.Cut(h.Path, "?")
		dst = append(dst, SpanAttribute{"url.path", path})
		if hasQuery {
			dst = append(dst, SpanAttribute{"url.query", query})
		}
	}
	if h.Status != 0 {
		dst = append(dst, SpanAttribute{"http.response.status_code", int64(h.Status)})
	}
	return dst
}

// ErrorMessage is the message of a response's error object.
func ErrorMessage(r *classify.Message) (string, bool) {
	return classify.StringValue(classify.Member(r.Error(), "message"))
}

// traceparentOf is the request's params._meta.traceparent, or "".
func traceparentOf(m *classify.Message) string {
	s, _ := classify.StringValue(classify.Member(m.Meta(), "traceparent"))
	return s
}

// ParseTraceparent reads a W3C traceparent header value
// ("00-<trace id>-<parent id>-<flags>"); ok is false when it is not one,
// or its ids are all zeros.
func ParseTraceparent(s string) (trace [16]byte, parent [8]byte, flags byte, ok bool) {
	if len(s) < 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' || (len(s) > 55 && (s[:2] == "00" || s[55] != '-')) {
		return trace, parent, 0, false
	}
	var ver, fl [1]byte
	if !lowerHex(s[:2], ver[:]) || ver[0] == 0xff || !lowerHex(s[3:35], trace[:]) || !lowerHex(s[36:52], parent[:]) || !lowerHex(s[53:55], fl[:]) {
		return trace, parent, 0, false
	}
	if trace == ([16]byte{}) || parent == ([8]byte{}) {
		return trace, parent, 0, false
	}
	return trace, parent, fl[0], true
}

// lowerHex decodes s, lower-case hex only, into dst.
func lowerHex(s string, dst []byte) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	_, err := hex.Decode(dst, []byte(s))
	return err == nil
}

// sessionTraceID is the trace of a session's spans that carry no trace
// context.
func sessionTraceID(session string) [16]byte {
	sum := sha256.Sum256([]byte("rpctap trace\x00" + session))
	var id [16]byte
	copy(id[:], sum[:])
	return id
}

// spanID is the id of the span of the request on line seq (member of
// its batch, or -1).
func spanID(session string, seq int64, member int) [8]byte {
	var buf [128]byte // most session ids fit: no allocation a span
	b := buf[:0]
	b = append(b, "rpctap span\x00"...)
	b = append(b, session...)
	b = binary.BigEndian.AppendUint64(append(b, 0), uint64(seq))
	b = binary.BigEndian.AppendUint32(b, uint32(member))
	sum := sha256.Sum256(b)
	var id [8]byte
	copy(id[:], sum[:])
	if id == ([8]byte{}) {
		id[7] = 1
	}
	return id
}
