package tap

import (
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// A Call is one request and the response that answered it, as the tap saw
// them cross: what an exporter of traces makes a span of. Its text comes
// from the frames as they are recorded, with secrets masked.
type Call struct {
	// Dir is the request's direction (H2S: the host called the server).
	Dir    classify.Direction
	Method string
	// ID is the request's id: a string id's content, a number as written.
	ID string
	// Start is when the request crossed the tap, End when its answer did.
	Start, End time.Time
	// HasError says the answer was an error, with ErrorCode its code when
	// HasCode.
	HasError, HasCode bool
	ErrorCode         int64
	// TraceParent and TraceState are the W3C trace context the request
	// carried in params._meta ("" when none).
	TraceParent, TraceState string
	// HTTP is what HTTP did, when the answer came through the HTTP tap:
	// its exchange's method and path, and the status of the response
	// that carried it (zero for a call over stdio).
	HTTP sessions.SpanHTTP
}

// maxOpenCalls bounds the traced requests (those that carry a trace
// context) a tap keeps for Options.Calls while they wait for their answer,
// as many as the tracker follows: past it, the oldest is forgotten, and
// its answer makes a Call without its trace context.
const maxOpenCalls = 10_000

// maxTraceParent and maxTraceState bound the trace context kept of a
// request (as JSON text, escapes included).
const (
	maxTraceParent = 128
	maxTraceState  = 1024
)

// traceContext is what a traced request carried, kept until its answer.
type traceContext struct{ parent, state string }

type callKey struct {
	seq int64
	id  string // the id's key (classify.ID.Key)
}

// calls makes the Calls of Options.Calls, on the committer's goroutine
// (under the recorder's mu). The tracker's pairs give a call's method and
// latency, the answer its id and error; only the trace context of a
// request is kept here, for requests that carry one, bounded by
// maxOpenCalls. A request without one costs nothing until it is answered.
type calls struct {
	send  func(Call)
	epoch time.Time // the wall time of the session clock's zero
	open  map[callKey]traceContext
	order []callKey // keys in the order they were opened; some are gone
	head  int
}

func newCalls(send func(Call), epoch time.Time) *calls {
	return &calls{send: send, epoch: epoch, open: map[callKey]traceContext{}}
}

// observe takes a frame the tracker has just seen, at t on the session
// clock, with the pairs it found.
func (c *calls) observe(seq int64, t time.Duration, m *classify.Message, pairs []classify.Pair, h *sessions.HTTPInfo) {
	switch m.Kind {
	case classify.KindRequest:
		c.opened(seq, m)
	case classify.KindBatch:
		for i := range m.Members {
			if m.Members[i].Kind == classify.KindRequest {
				c.opened(seq, &m.Members[i])
			}
		}
	}
	if len(pairs) == 0 {
		return
	}
	if m.Kind != classify.KindBatch {
		c.answered(pairs[0], t, m, h)
		return
	}
	for _, p := range pairs {
		if p.Member < len(m.Members) {
			c.answered(p, t, &m.Members[p.Member], h)
		}
	}
}

func (c *calls) opened(seq int64, m *classify.Message) {
	meta := m.Meta()
	if meta == nil {
		return
	}
	// W3C bounds both (55 and 512 characters): a peer's longer value is
	// not trace context, and is not kept.
	raw := classify.Member(meta, "traceparent")
	if len(raw) > maxTraceParent+2 {
		return
	}
	parent, ok := classify.StringValue(raw)
	if !ok || parent == "" {
		return
	}
	var state string
	if raw := classify.Member(meta, "tracestate"); len(raw) <= maxTraceState+2 {
		state, _ = classify.StringValue(raw)
	}
	if len(c.open) >= maxOpenCalls {
		c.forgetOldest()
	}
	k := callKey{seq, m.ID().Key()}
	if _, dup := c.open[k]; !dup {
		if len(c.order)-c.head >= 2*maxOpenCalls {
			c.compact()
		}
		c.order = append(c.order, k)
	}
	c.open[k] = traceContext{parent, state}
}

// compact drops from order the keys of requests answered since, so that
// order stays bounded while some request is always open.
func (c *calls) compact() {
	kept := c.order[:0]
	for _, k := range c.order[c.head:] {
		if _, ok := c.open[k]; ok {
			kept = append(kept, k)
		}
	}
	c.order, c.head = kept, 0
}

// forgetOldest drops the traced request that has waited longest.
func (c *calls) forgetOldest() {
	for c.head < len(c.order) {
		k := c.order[c.head]
		c.head++
		if _, ok := c.open[k]; ok {
			delete(c.open, k)
			break
		}
	}
	if c.head > len(c.order)/2 {
		c.order = append(c.order[:0], c.order[c.head:]...)
		c.head = 0
	}
}

// answered sends the Call of pair p, answered by r at t (in an HTTP
// response h said of, or nil).
func (c *calls) answered(p classify.Pair, t time.Duration, r *classify.Message, h *sessions.HTTPInfo) {
	call := Call{Dir: r.Dir.Opposite(), Method: p.Method, Start: c.epoch.Add(t - p.Latency), End: c.epoch.Add(t), HasError: r.HasError()}
	if h != nil {
		call.HTTP = sessions.SpanHTTP{Method: h.Method, Path: h.Path, Status: h.Status}
	}
	if r.HasID() {
		call.ID = r.ID().Text()
	}
	call.ErrorCode, call.HasCode = r.ErrorCode()
	if len(c.open) > 0 {
		k := callKey{p.Request, ""}
		if r.HasID() {
			k.id = r.ID().Key()
		}
		tc, ok := c.open[k]
		if !ok && (!r.HasID() || r.ID().IsNull()) {
			// An error that names no request, paired with the one the
			// tracker knows it answers (MCP's failed initialize).
			for key, v := range c.open {
				if key.seq == p.Request {
					k, tc, ok = key, v, true
					break
				}
			}
		}
		if ok {
			delete(c.open, k)
			if len(c.open) == 0 {
				c.order, c.head = c.order[:0], 0
			}
			call.TraceParent, call.TraceState = tc.parent, tc.state
		}
	}
	c.send(call)
}
