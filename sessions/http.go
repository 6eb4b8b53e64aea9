package sessions

import (
	"encoding/json"
	"slices"
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
	var r struct {
		Exchange    int64             `json:"exchange"`
		Method      string            `json:"method"`
		Status      int               `json:"status"`
		ContentType string            `json:"content_type"`
		Accept      string            `json:"accept"`
		EventID     string            `json:"event_id"`
		Headers     map[string]string `json:"headers"`
		StreamEnd   bool              `json:"stream_end"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &r) != nil {
		return nil
	}
	h := HTTPInfo{Exchange: r.Exchange, Method: r.Method, Status: r.Status, ContentType: r.ContentType, Accept: r.Accept, EventID: r.EventID, StreamEnd: r.StreamEnd}
	for name, v := range r.Headers {
		h.Headers = append(h.Headers, HTTPHeader{Name: name, Value: v})
	}
	return h.Facts()
}

// HTTPSummary says in a few words what a record's http object (Event.HTTP)
// says: "POST /mcp 202", "GET /mcp 200 text/event-stream id=e1", with
// its error after a colon; "" when raw is not an http object. The text is
// the peer's: escape it before it reaches a terminal.
func HTTPSummary(raw []byte) string {
	var h struct {
		Method      string `json:"method"`
		Path        string `json:"path"`
		Status      int    `json:"status"`
		ContentType string `json:"content_type"`
		EventID     string `json:"event_id"`
		Error       string `json:"error"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &h) != nil {
		return ""
	}
	parts := []string{h.Method, h.Path}
	if h.Status != 0 {
		parts = append(parts, strconv.Itoa(h.Status))
	}
	if h.ContentType != "" {
		parts = append(parts, h.ContentType)
	}
	if h.EventID != "" {
		parts = append(parts, "id="+h.EventID)
	}
	s := strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), " ")
	if h.Error != "" {
		s += ": " + h.Error
	}
	return s
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
