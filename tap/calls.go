package tap

import (
	"time"

	"github.com/rpctap/rpctap/classify"
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
}

// maxOpenCalls bounds the requests a tap keeps for Options.Calls while
// they wait for their answer (as many as the tracker follows): past it,
// the oldest is forgotten and its answer makes no Call.
const maxOpenCalls = 10_000

// openCall is a request in flight, kept until its answer comes.
type openCall struct {
	method, id  string
	start       time.Duration
	parent, tst string
}

type callKey struct {
	seq int64
	id  string // the id's key (classify.ID.Key)
}

// calls pairs requests with their answers for Options.Calls, on the
// committer's goroutine (under the recorder's mu). Its memory is bounded
// by maxOpenCalls.
type calls struct {
	send  func(Call)
	epoch time.Time // the wall time of the session clock's zero
	open  map[callKey]openCall
	order []callKey // keys in the order they were opened; some are gone
	head  int
}

func newCalls(send func(Call), epoch time.Time) *calls {
	return &calls{send: send, epoch: epoch, open: map[callKey]openCall{}}
}

// observe takes a frame the tracker has just seen, at t on the session
// clock, with the pairs it found.
func (c *calls) observe(seq int64, t time.Duration, m *classify.Message, pairs []classify.Pair) {
	switch m.Kind {
	case classify.KindRequest:
		c.opened(seq, t, m)
	case classify.KindBatch:
		for i := range m.Members {
			if m.Members[i].Kind == classify.KindRequest {
				c.opened(seq, t, &m.Members[i])
			}
		}
	}
	if len(pairs) == 0 {
		return
	}
	if m.Kind != classify.KindBatch {
		c.answered(pairs[0], t, m, true)
		return
	}
	for _, p := range pairs {
		for i := range m.Members {
			if c.answered(p, t, &m.Members[i], false) {
				break
			}
		}
	}
}

func (c *calls) opened(seq int64, t time.Duration, m *classify.Message) {
	if len(c.open) >= maxOpenCalls {
		c.forgetOldest()
	}
	oc := openCall{method: m.Method(), id: idText(m.ID()), start: t}
	if meta := m.Meta(); meta != nil {
		oc.parent, _ = classify.StringValue(classify.Member(meta, "traceparent"))
		oc.tst, _ = classify.StringValue(classify.Member(meta, "tracestate"))
	}
	k := callKey{seq, m.ID().Key()}
	if _, dup := c.open[k]; !dup {
		if len(c.order)-c.head >= 2*maxOpenCalls {
			c.compact()
		}
		c.order = append(c.order, k)
	}
	c.open[k] = oc
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

// forgetOldest drops the request that has waited longest.
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

// answered sends the Call of pair p when response r answers it; a lone
// response (only) that names no request, such as an error with a null
// id, answers the request the tracker paired it with.
func (c *calls) answered(p classify.Pair, t time.Duration, r *classify.Message, lone bool) bool {
	k := callKey{p.Request, r.ID().Key()}
	oc, ok := c.open[k]
	if !ok && lone {
		for key, v := range c.open {
			if key.seq == p.Request && v.method == p.Method {
				k, oc, ok = key, v, true
				break
			}
		}
	}
	if !ok {
		return false
	}
	delete(c.open, k)
	if len(c.open) == 0 {
		c.order, c.head = c.order[:0], 0
	}
	call := Call{Dir: r.Dir.Opposite(), Method: oc.method, ID: oc.id, Start: c.epoch.Add(oc.start), End: c.epoch.Add(t),
		HasError: r.HasError(), TraceParent: oc.parent, TraceState: oc.tst}
	call.ErrorCode, call.HasCode = r.ErrorCode()
	c.send(call)
	return true
}

// idText is an id as a span names it: a string's content, a number as
// written.
func idText(id classify.ID) string {
	if s, ok := classify.StringValue(id.Raw); ok {
		return s
	}
	return string(id.Raw)
}
