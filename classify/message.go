package classify

import (
	"strconv"
)

// span is a value's position in a frame; a zero span means absent.
type span struct {
	start, end int32
	typ        valType
}

func (s span) present() bool { return s.typ != valNone }

func (s span) of(frame []byte) []byte {
	if !s.present() || int(s.end) > len(frame) {
		return nil
	}
	return frame[s.start:s.end]
}

// A Message is what one frame is: its kind, its envelope members, the
// findings it carries on its own, and the answer a strict receiver owes.
//
// A Message aliases the frame it was read from (nothing is copied): the
// caller must not change those bytes while the Message is in use.
type Message struct {
	Kind Kind
	Dir  Direction
	// Profile is the profile that judged the frame (never Auto).
	Profile Profile
	// Frame is the frame's bytes as given to Classify.
	Frame []byte
	// Size is the frame's full length; larger than len(Frame) when the
	// frame was classified from a prefix (finding oversize).
	Size int64
	// Findings are the frame's own findings, most severe first within
	// the order the rules run.
	Findings []Finding
	// Answer is what a strict receiver must reply, or nil when nothing is
	// owed.
	Answer *Answer
	// Members holds each element of a batch, classified on its own.
	Members []Message
	// HTTP is what the HTTP transport said of the frame, or nil (stdio):
	// set by the caller before a Tracker observes the frame (http.go).
	HTTP *HTTP

	id, method, params, result, err, meta, jsonrpc span
	errCode                                        int64
	errCodeOK                                      bool
	methodEscaped                                  bool
}

// HasID reports whether the frame has an id member (even "id": null).
func (m *Message) HasID() bool { return m.id.present() }

// ID is the frame's id, exactly as on the wire.
func (m *Message) ID() ID { return ID{Raw: m.id.of(m.Frame), typ: m.id.typ} }

// HasMethod reports whether the frame's method member is a string.
func (m *Message) HasMethod() bool { return m.method.typ == valString }

// Method is the decoded method name, or "" when the method is absent or not
// a string. Well-known method names cost no allocation.
func (m *Message) Method() string {
	if m.method.typ != valString {
		return ""
	}
	raw := m.method.of(m.Frame)
	raw = raw[1 : len(raw)-1]
	if !m.methodEscaped {
		if name, ok := knownMethod(raw); ok {
			return name
		}
		return string(raw)
	}
	dec, _ := unescape(nil, raw)
	return string(dec)
}

// MethodIs compares the method with name without allocating.
func (m *Message) MethodIs(name string) bool {
	if m.method.typ != valString {
		return false
	}
	raw := m.method.of(m.Frame)
	return keyIs(raw[1:len(raw)-1], m.methodEscaped, name)
}

// Params is the raw params value, or nil when absent.
func (m *Message) Params() []byte { return m.params.of(m.Frame) }

// Result is the raw result value, or nil when absent.
func (m *Message) Result() []byte { return m.result.of(m.Frame) }

// Error is the raw error value, or nil when absent.
func (m *Message) Error() []byte { return m.err.of(m.Frame) }

// HasResult and HasError report whether those members are present.
func (m *Message) HasResult() bool { return m.result.present() }
func (m *Message) HasError() bool  { return m.err.present() }

// ErrorCode is the error object's integer code, when it has one.
func (m *Message) ErrorCode() (int64, bool) { return m.errCode, m.errCodeOK }

// Meta is the raw value of params._meta, or nil.
func (m *Message) Meta() []byte { return m.meta.of(m.Frame) }

// Worst is the highest severity among the frame's findings (and its batch
// members'), or 0 when it has none.
func (m *Message) Worst() Severity {
	var w Severity
	for _, f := range m.Findings {
		w = max(w, f.Severity)
	}
	for i := range m.Members {
		w = max(w, m.Members[i].Worst())
	}
	return w
}

// Has reports whether the frame carries a finding with code c.
func (m *Message) Has(c Code) bool {
	for _, f := range m.Findings {
		if f.Code == c {
			return true
		}
	}
	return false
}

// OwesAnswer reports whether a strict receiver must reply with an error.
func (m *Message) OwesAnswer() bool { return m.Answer != nil }

// An Answer is the error reply a strict receiver owes a frame.
type Answer struct {
	Code    int
	Message string
	// ID is the id the answer carries: the frame's id when it was a string
	// or a number; nil otherwise (then "id": null, or no id in MCP).
	ID []byte
	// Batch holds the answers to a batch's members, when the frame is a
	// batch; the reply is then a JSON array of them.
	Batch []Answer
	// OmitNullID renders an answer without an id as having no id member
	// (MCP) instead of "id": null (JSON-RPC).
	OmitNullID bool
}

// JSON renders the answer as the receiver would send it.
func (a *Answer) JSON() []byte { return a.AppendJSON(nil) }

// AppendJSON appends the rendered answer to dst.
func (a *Answer) AppendJSON(dst []byte) []byte {
	if a.Batch != nil {
		dst = append(dst, '[')
		for i := range a.Batch {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = a.Batch[i].AppendJSON(dst)
		}
		return append(dst, ']')
	}
	dst = append(dst, `{"jsonrpc":"2.0",`...)
	switch {
	case a.ID != nil:
		dst = append(dst, `"id":`...)
		dst = append(dst, a.ID...)
		dst = append(dst, ',')
	case !a.OmitNullID:
		dst = append(dst, `"id":null,`...)
	}
	dst = append(dst, `"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(a.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, a.Message)
	return append(dst, "}}"...)
}

// Standard JSON-RPC error codes.
const (
	ParseError     = -32700
	InvalidRequest = -32600
	MethodNotFound = -32601
	InvalidParams  = -32602
	InternalError  = -32603
)

// appendJSONString appends s as a JSON string. Bytes that are not valid
// UTF-8 become U+FFFD; control characters, U+2028 and U+2029 are escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst, _ = appendQuoted(dst, s, false, false)
	return dst
}
