package sessions

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/rpctap/rpctap/classify"
)

// TransportHTTP is what a session header's "transport" says of a session
// the HTTP tap recorded (Streamable HTTP); a header with none is a stdio
// session.
const TransportHTTP = "http"

// HTTPInfo is the "http" object of a frame record of an HTTP session:
// which exchange (request and its response) the frame belongs to and what
// HTTP said of it. Header values are as the tap masked them.
type HTTPInfo struct {
	Exchange    int64  // the exchange's number in the session, from 1
	Method      string // the request's method (POST, GET, DELETE)
	Path        string // the request's path and query
	Status      int    // the response's status; 0 on a request's frame
	ContentType string // the Content-Type of the message that carried the frame
	Accept      string // the request's Accept, on a frame of the request
	EventID     string // the SSE event's id, when the frame came in one
	Retry       int64  // the SSE event's retry, in milliseconds, when it set one
	// Headers are the headers that matter to MCP, by their canonical
	// name, in the order the tap lists them.
	Headers []HTTPHeader
	// StreamEnd says the frame marks the end of a text/event-stream
	// response: no event of it comes after (a frame of kind http, or the
	// stream's only one).
	StreamEnd bool
	// Error says why the frame holds no message where one could be: the
	// proxy answered itself (the target could not be reached), or the
	// body was too large or encoded.
	Error string
	// Event is the SSE event's type, when it named one other than
	// "message". Endpoint is the URL an "endpoint" event of the legacy
	// HTTP+SSE transport gave the host to POST to, and EndpointFrom the
	// one the server sent, when the proxy rewrote it to point at itself.
	Event, Endpoint, EndpointFrom string
}

// An HTTPHeader is one header of an HTTPInfo.
type HTTPHeader struct{ Name, Value string }

// appendHTTP appends h as the record's "http" field.
func appendHTTP(b []byte, h *HTTPInfo) []byte {
	b = append(b, `,"http":{"exchange":`...)
	b = strconv.AppendInt(b, h.Exchange, 10)
	field := func(name, v string) {
		if v != "" {
			b = append(b, `,"`...)
			b = append(b, name...)
			b = append(b, `":`...)
			b = classify.AppendString(b, v)
		}
	}
	field("method", h.Method)
	field("path", h.Path)
	if h.Status != 0 {
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(h.Status), 10)
	}
	field("content_type", h.ContentType)
	field("accept", h.Accept)
	field("event_id", h.EventID)
	if h.Retry > 0 {
		b = append(b, `,"retry_ms":`...)
		b = strconv.AppendInt(b, h.Retry, 10)
	}
	if len(h.Headers) > 0 {
		b = append(b, `,"headers":{`...)
		for i, hd := range h.Headers {
			if i > 0 {
				b = append(b, ',')
			}
			b = classify.AppendString(b, hd.Name)
			b = append(b, ':')
			b = classify.AppendString(b, hd.Value)
		}
		b = append(b, '}')
	}
	if h.StreamEnd {
		b = append(b, `,"stream_end":true`...)
	}
	field("error", h.Error)
	field("event", h.Event)
	field("endpoint", h.Endpoint)
	field("rewritten_from", h.EndpointFrom)
	return append(b, '}')
}

// Facts is what the transport rules judge of the frame h describes
// (classify's HTTP): the tap gives them with each frame it relays, and
// a reader of the session file the same from the record (HTTPFacts).
func (h *HTTPInfo) Facts() *classify.HTTP {
	f := &classify.HTTP{Exchange: h.Exchange, Method: h.Method, Status: h.Status, ContentType: h.ContentType, Accept: h.Accept,
		EventID: h.EventID, StreamEnd: h.StreamEnd}
	for _, hd := range h.Headers {
		switch strings.ToLower(hd.Name) {
		case "mcp-session-id":
			f.SessionID = hd.Value
		case "mcp-protocol-version":
			f.ProtocolVersion = hd.Value
		case "mcp-method":
			f.McpMethod = hd.Value
		case "mcp-name":
			f.McpName = hd.Value
		case "www-authenticate":
			f.WWWAuthenticate = hd.Value
		}
	}
	return f
}

// HTTPFacts reads a record's http object (Event.HTTP) into the facts the
// transport rules judge, as the tap gave them live; nil when raw is not
// an http object.
func HTTPFacts(raw []byte) *classify.HTTP {
	h, ok := ParseHTTP(raw)
	if !ok {
		return nil
	}
	return h.Facts()
}

// ParseHTTP reads a record's http object (Event.HTTP) in one pass over
// its bytes, headers and all; ok is false when raw is not an object.
// Its text is the peer's: escape it before it reaches a terminal.
func ParseHTTP(raw []byte) (h HTTPInfo, ok bool) {
	var f httpFields
	if !f.parse(raw) {
		return h, false
	}
	h = HTTPInfo{Exchange: f.exchange, Method: jsonText(f.method), Path: jsonText(f.path), Status: f.status,
		ContentType: jsonText(f.contentType), EventID: jsonText(f.eventID), Retry: f.retry, Error: jsonText(f.err),
		Event: jsonText(f.event), Endpoint: jsonText(f.endpoint), EndpointFrom: jsonText(f.endpointFrom),
		Accept: jsonText(f.accept), StreamEnd: f.streamEnd}
	h.Headers = parseHeaders(f.headers, nil)
	return h, true
}

// httpFields are the members of an http object as they are in its
// bytes: each string raw, with its quotes, decoded only when one is
// wanted as text.
type httpFields struct {
	exchange, retry                         int64
	status                                  int
	method, path, contentType, eventID, err []byte
	headers                                 []byte
	event, endpoint, endpointFrom           []byte
	accept                                  []byte
	streamEnd                               bool
}

// parse reads the http object raw into f. It walks the object's members
// once, in any order, skipping those it does not know. The reader took
// raw as one valid JSON object (classify.SkipValue), so its values are
// skipped without being judged again.
func (f *httpFields) parse(raw []byte) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return true
	}
	for i < len(raw) && raw[i] == '"' {
		kEnd := skipJSON(raw, i)
		key := raw[i+1 : max(kEnd-1, i+1)]
		i = skipSpace(raw, kEnd)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = skipSpace(raw, i+1)
		vEnd := skipJSON(raw, i)
		if vEnd <= i {
			return false
		}
		v := raw[i:vEnd]
		switch string(key) {
		case "exchange":
			f.exchange, _ = strconv.ParseInt(string(v), 10, 64)
		case "method":
			f.method = v
		case "path":
			f.path = v
		case "status":
			n, _ := strconv.ParseInt(string(v), 10, 32)
			f.status = int(n)
		case "content_type":
			f.contentType = v
		case "event_id":
			f.eventID = v
		case "retry_ms":
			f.retry, _ = strconv.ParseInt(string(v), 10, 64)
		case "headers":
			f.headers = v
		case "error":
			f.err = v
		case "event":
			f.event = v
		case "endpoint":
			f.endpoint = v
		case "rewritten_from":
			f.endpointFrom = v
		case "accept":
			f.accept = v
		case "stream_end":
			f.streamEnd = string(v) == "true"
		}
		i = skipSpace(raw, vEnd)
		if i >= len(raw) {
			return false
		}
		if raw[i] == '}' {
			return true
		}
		if raw[i] != ',' {
			return false
		}
		i = skipSpace(raw, i+1)
	}
	return false
}

// skipJSON returns the index after the JSON value at b[i], which is
// known to be valid: a string to its closing quote, an object or array
// to its closing bracket, anything else to the next delimiter.
func skipJSON(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			open := i
			for {
				j := bytes.IndexByte(b[i+1:], '"')
				if j < 0 {
					return len(b)
				}
				i += 1 + j
				k := i // a quote after an odd run of backslashes is escaped
				for k > open+1 && b[k-1] == '\\' {
					k--
				}
				if (i-k)%2 == 0 {
					break
				}
			}
			i++
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return i
}

// parseHeaders appends the members of the headers object obj, in order.
func parseHeaders(obj []byte, dst []HTTPHeader) []HTTPHeader {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return dst
	}
	i = skipSpace(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		kEnd := skipJSON(obj, i)
		name := jsonText(obj[i:kEnd])
		i = skipSpace(obj, kEnd)
		if i >= len(obj) || obj[i] != ':' {
			return dst
		}
		i = skipSpace(obj, i+1)
		vEnd := skipJSON(obj, i)
		dst = append(dst, HTTPHeader{Name: name, Value: jsonText(obj[i:vEnd])})
		i = skipSpace(obj, vEnd)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
	return dst
}

// jsonText is the text of the raw JSON string v ("" when it is none).
func jsonText(v []byte) string {
	return string(appendText(nil, v))
}

// appendText appends the text of the raw JSON string v: its bytes as
// they are when they hold no escape, else decoded.
func appendText(dst, v []byte) []byte {
	if len(v) < 2 || v[0] != '"' {
		return dst
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return append(dst, v[1:len(v)-1]...)
	}
	s, _ := classify.StringValue(v)
	return append(dst, s...)
}

// HTTPSummary says in a few words what a record's http object (Event.HTTP)
// says: "POST /mcp 202", "GET /mcp 200 text/event-stream id=e1", with
// its error after a colon; "" when raw is not an http object. The text is
// the peer's: escape it before it reaches a terminal. It reads raw once,
// and allocates only the text it returns.
func HTTPSummary(raw []byte) string {
	var f httpFields
	if len(raw) == 0 || !f.parse(raw) {
		return ""
	}
	var buf [256]byte
	b := buf[:0]
	word := func(w []byte) {
		if len(w) <= 2 { // "" or none
			return
		}
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = appendText(b, w)
	}
	word(f.method)
	word(f.path)
	if f.status != 0 {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(f.status), 10)
	}
	word(f.contentType)
	if len(f.eventID) > 2 {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = appendText(append(b, "id="...), f.eventID)
	}
	if len(f.endpoint) > 2 {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = appendText(append(b, "endpoint="...), f.endpoint)
	}
	if len(f.endpointFrom) > 2 {
		b = append(appendText(append(b, " (rewritten from "...), f.endpointFrom), ')')
	}
	if len(f.err) > 2 {
		b = appendText(append(b, ": "...), f.err)
	}
	return string(b)
}

// HTTPObject is a record's http object (Event.HTTP) as a value for
// PrintJSON, which escapes its strings as every JSON rpctap prints; nil
// when raw is not an object.
func HTTPObject(raw []byte) map[string]any {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// HTTPLabel is what a list of frames shows, in place of a method, for a
// frame of kind http (one that holds no JSON-RPC message) with the http
// object raw: "HTTP 202", "HTTP 404 Not Found", "GET stream opened",
// "DELETE session". It says what HTTP did in a few words drawn from a
// small set (no path, id or peer text), so that an index keeps each
// once; "" when raw is not an http object.
func HTTPLabel(raw []byte) string {
	var f httpFields
	if len(raw) == 0 || !f.parse(raw) {
		return ""
	}
	h := HTTPInfo{Status: f.status}
	switch m := string(f.method); m { // no allocation: a comparison
	case `"GET"`, `"POST"`, `"DELETE"`, `"PUT"`, `"PATCH"`, `"HEAD"`, `"OPTIONS"`:
		h.Method = m[1 : len(m)-1]
	}
	if len(f.contentType) > 2 {
		h.ContentType = jsonText(f.contentType)
	}
	if len(f.eventID) > 2 {
		h.EventID = "yes"
	}
	if len(f.err) > 2 {
		h.Error = "yes"
	}
	if len(f.endpoint) > 2 {
		h.Endpoint = "yes"
	}
	return h.Label()
}

// Label is the HTTPLabel of h.
func (h *HTTPInfo) Label() string {
	method := h.Method
	switch method {
	case "GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS":
	default:
		method = "HTTP"
	}
	stream := MediaType(h.ContentType) == "text/event-stream"
	switch {
	case h.Status == 0 && h.Error != "":
		return method + " body not recorded"
	case h.Status == 0 && method == "GET":
		return "GET stream opened"
	case h.Status == 0 && method == "DELETE":
		return "DELETE session"
	case h.Status == 0:
		return method + " with no body"
	case h.Status >= 400:
		return statusLabel(h.Status, true)
	case h.Endpoint != "":
		return "SSE endpoint event" // the legacy transport's: the URL to POST to
	case h.Error != "" && stream && h.EventID != "":
		return "SSE event not recorded"
	case h.Error != "" && stream && method == "GET":
		return "GET stream ended early" // cut, or not decoded: the detail says which
	case h.Error != "" && stream:
		return "SSE stream ended early"
	case h.Error != "":
		return statusLabel(h.Status, false) + " body not recorded"
	case stream && h.EventID != "":
		return "SSE priming event"
	case stream && method == "GET":
		return "GET stream ended"
	case stream:
		return "SSE stream ended"
	}
	return statusLabel(h.Status, false)
}

// statusLabel is "HTTP 202", or with text "HTTP 404 Not Found"; the
// usual ones are made once.
func statusLabel(status int, text bool) string {
	switch {
	case status == 200 && !text:
		return "HTTP 200"
	case status == 202 && !text:
		return "HTTP 202"
	}
	s := "HTTP " + strconv.Itoa(status)
	if t := http.StatusText(status); text && t != "" {
		s += " " + t
	}
	return s
}

// MediaType is a Content-Type's media type, lower case, without its
// parameters ("text/event-stream; charset=utf-8" is text/event-stream).
func MediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}
