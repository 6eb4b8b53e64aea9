package export

import (
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// An exportPair is one request (a batch member on its own) with its
// answer, masked and classified, for the formats made of pairs.
type exportPair struct {
	reqPos  int
	req     *sessions.Entry
	reqEv   *sessions.Event
	reqMsg  *classify.Message // the request (the member of a batch)
	member  int               // the member's index in its batch, or -1
	resp    *sessions.Entry   // nil when unanswered
	respEv  *sessions.Event
	respMsg *classify.Message
	latency time.Duration
}

// status is how the request ended: ok, error, or the request's status
// when unanswered (pending, timed out, cancelled, untracked, or dropped:
// the user dropped it in the tap, and its receiver never read it).
func (p *exportPair) status() string {
	switch {
	case p.resp != nil && p.resp.Call.InputRequired:
		return "input_required"
	case p.respMsg == nil && p.reqEv.Held == sessions.HeldDropped:
		return "dropped"
	case p.respMsg == nil && p.req.Status == sessions.StatusOK:
		return sessions.StatusPending.String() // a batch member left unanswered
	case p.respMsg == nil:
		return p.req.Status.String()
	case p.respMsg.HasError():
		return sessions.StatusError.String()
	}
	return sessions.StatusOK.String()
}

// eachPair calls fn with each request of the session in order, with its
// answer when it has one.
func (s *exporter) eachPair(fn func(p *exportPair) error) error {
	var answerMsgs []classify.Message // the answers classified, each once for all the members
	m, p := &s.reqMsg, &s.pair        // reused from request to request
	return s.walkEntries(false, func(it *walkItem, answers []walkItem) error {
		*m = s.classify(&it.ev)
		answerMsgs = answerMsgs[:0]
		for k := range answers {
			answerMsgs = append(answerMsgs, s.classify(&answers[k].ev))
		}
		one := func(req *classify.Message, member int) error {
			*p = exportPair{reqPos: it.pos, req: &it.e, reqEv: &it.ev, reqMsg: req, member: member}
			for k := range answers {
				a := &answers[k]
				rm := &answerMsgs[k]
				answer := rm
				if rm.Kind == classify.KindBatch || member >= 0 {
					answer = answerIn(rm, req)
				}
				if answer == nil {
					continue
				}
				p.resp, p.respEv, p.respMsg, p.latency = &a.e, &a.ev, answer, a.latency
				break
			}
			s.res.Pairs++
			return fn(p)
		}
		if m.Kind == classify.KindBatch {
			for j := range m.Members {
				if m.Members[j].Kind == classify.KindRequest {
					if err := one(&m.Members[j], j); err != nil {
						return err
					}
				}
			}
			return nil
		}
		return one(m, -1)
	}, nil)
}

// answerIn finds the answer to req in the response m (a batch: its member
// with req's id).
func answerIn(m *classify.Message, req *classify.Message) *classify.Message {
	if !req.HasID() {
		return nil
	}
	if m.Kind != classify.KindBatch {
		if m.HasID() && m.ID().Equal(req.ID()) {
			return m
		}
		return nil
	}
	for j := range m.Members {
		if mm := &m.Members[j]; mm.Kind == classify.KindResponse && mm.HasID() && mm.ID().Equal(req.ID()) {
			return mm
		}
	}
	return nil
}

// pairFindings are the findings about a pair's request and answer.
func (s *exporter) pairFindings(p *exportPair) (req, resp []sessions.EntryFinding) {
	if !p.req.Codes.Empty() {
		req = s.findings(p.reqPos)
	}
	if p.resp != nil && !p.resp.Codes.Empty() {
		if i, ok := s.x.BySeq(p.resp.Seq); ok {
			resp = s.findings(i)
		}
	}
	return req, resp
}
