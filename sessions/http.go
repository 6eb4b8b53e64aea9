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
	EventID     string // the SSE event's id, when the frame came in one
	Retry       int64  // the SSE event's retry, in milliseconds, when it set one
	// Headers are the headers that matter to MCP, by their canonical
	// name, in the order the tap lists them.
	Headers []HTTPHeader
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
	field("error", h.Error)
	field("event", h.Event)
	field("endpoint", h.Endpoint)
	field("rewritten_from", h.EndpointFrom)
	return append(b, '}')
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
		Endpoint    string `json:"endpoint"`
		From        string `json:"rewritten_from"`
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
	if h.Endpoint != "" {
		parts = append(parts, "endpoint="+h.Endpoint)
	}
	if h.From != "" {
		parts = append(parts, "(rewritten from "+h.From+")")
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
