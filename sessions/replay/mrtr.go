package replay

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// This file holds what replay does with a multi round-trip call (MCP
// 2026-07-28): a request answered input_required, asking the host for
// input, then retried with the host's inputResponses and the result's
// requestState under a new id. Such a call is one call: as the server,
// replay answers a retry only from the recorded retry of the call it
// asked for input; as the host, it retries with the live server's
// requestState, and reports the call once.

// An inputAsked is an input_required result replay handed a host: the
// call's method and name, the requestState in it (raw JSON, nil when
// none), and the recorded answer it was (whose next is the recorded
// retry).
type inputAsked struct {
	method, name string
	state        []byte
	answer       int32
}

// maxAsked bounds the input_required results replay keeps for their
// retries; past it the oldest is forgotten (its retry then matches
// nothing).
const maxAsked = 256

// retryParts returns a request's requestState (nil when it has none, or
// null) and whether it carries inputResponses or requestState: whether it
// retries a multi round-trip call.
func retryParts(method string, body []byte) (state []byte, retry bool) {
	switch method {
	case "tools/call", "prompts/get", "resources/read":
	default:
		return nil, false
	}
	params := classify.Member(body, "params")
	if !bytes.Contains(params, []byte(`"requestState"`)) && !bytes.Contains(params, []byte(`"inputResponses"`)) {
		return nil, false
	}
	state = classify.Member(params, "requestState")
	responses := classify.Member(params, "inputResponses")
	if string(state) == "null" {
		state = nil
	}
	return state, state != nil || responses != nil && string(responses) != "null"
}

// sameState reports whether two requestStates are the same value: the
// same text when both are strings, else the same bytes.
func sameState(a, b []byte) bool {
	sa, okA := classify.StringValue(a)
	sb, okB := classify.StringValue(b)
	if okA && okB {
		return sa == sb
	}
	return bytes.Equal(a, b)
}

// showState is a requestState for an error: escaped, cut short.
func showState(st []byte) string {
	if st == nil {
		return "none"
	}
	return classify.EscapeString(string(st), 80)
}

// askedInput notes that replay answered a request of method with the
// recorded input_required result answer, for the retry to come. s.mu is
// held.
func (s *server) askedInput(method string, body []byte, answer int32) {
	rb, _, err := s.rec.read(answer)
	if err != nil {
		return
	}
	a := inputAsked{method: method, name: sessions.CallName(method, body), state: resultState(rb), answer: answer}
	if len(s.asked) == maxAsked {
		s.asked = append(s.asked[:0], s.asked[1:]...)
	}
	s.asked = append(s.asked, a)
}

// matchRetry picks the recorded retry that answers a host's retry, body,
// with state its requestState: the retry of the call replay asked for
// input (the latest with this requestState, else the latest of the same
// method and name). It must send back the requestState replay handed
// out, and differ from the recorded retry in nothing compared (its
// inputResponses above all). found is false when replay asked no such
// call for input.
func (s *server) matchRetry(method string, body, state []byte) (i int32, why string, found bool) {
	at := -1
	for k := len(s.asked) - 1; k >= 0 && state != nil; k-- {
		if a := &s.asked[k]; a.method == method && a.state != nil && sameState(a.state, state) {
			at = k
			break
		}
	}
	name := sessions.CallName(method, body)
	for k := len(s.asked) - 1; k >= 0 && at < 0; k-- {
		if a := &s.asked[k]; a.method == method && a.name == name {
			at = k
		}
	}
	if at < 0 {
		return -1, "", false
	}
	a := s.asked[at]
	answer := &s.rec.frames[a.answer]
	call := esc(method) + s.forCall(method, body)
	switch {
	case a.state == nil && state != nil:
		return -1, fmt.Sprintf("the retry of %s sends requestState %s, but the input_required result replay handed out (line %d of the recording) had none", call, showState(state), answer.line), true
	case a.state != nil && (state == nil || !sameState(a.state, state)):
		return -1, fmt.Sprintf("the retry of %s sends requestState %s, not %s, the one replay handed out (the input_required result of line %d of the recording)", call, showState(state), showState(a.state), answer.line), true
	case answer.next < 0:
		return -1, fmt.Sprintf("the recording has no retry of %s: its host never answered the input_required result of line %d", call, answer.line), true
	}
	next := answer.next
	if why := s.revisionDiffers(method, body, []related{{i: next}}); why != "" {
		return -1, why, true
	}
	rb, _, err := s.rec.read(next)
	if err != nil {
		return -1, "the recording could not be read back", true
	}
	ig := s.opts.Ignore
	if s.rec.frames[next].masked {
		ig = s.masked
	}
	if changes := ig.Diff(rb, body, 0); len(changes) > 0 {
		out := fmt.Sprintf("the retry of %s differs from the recorded retry of that call, line %d, at %s: %s", call, s.rec.frames[next].line,
			sessions.Count(len(changes), "path"), describeChanges(changes[:min(len(changes), maxDescribed)], "recorded", "sent"))
		if len(changes) > maxDescribed {
			out += fmt.Sprintf("; and %s more", sessions.Count(len(changes)-maxDescribed, "path"))
		}
		return -1, out, true
	}
	s.asked = append(s.asked[:at], s.asked[at+1:]...)
	return next, "", true
}

// revisionDiffers, with --strict-version, says why the recorded requests
// calls cannot answer the host's request body: the revision its
// params._meta names differs from each one's ("" when one has the
// host's, or without --strict-version).
func (s *server) revisionDiffers(method string, body []byte, calls []related) string {
	if !s.opts.StrictVersion || len(calls) == 0 {
		return ""
	}
	want := requestRevision(body)
	for _, c := range calls {
		if s.rec.revisions[s.rec.frames[c.i].rev] == want {
			return ""
		}
	}
	f := &s.rec.frames[calls[0].i]
	return fmt.Sprintf("the recording's %s request%s (line %d) carries revision %s in params._meta, the host's carries %s (--strict-version)",
		esc(method), s.forCall(method, body), f.line, showRevision(s.rec.revisions[f.rev]), showRevision(want))
}

// showRevision is a revision for an error, quoted; "none" for none.
func showRevision(v string) string {
	if v == "" {
		return "none"
	}
	return esc(strconv.Quote(v))
}

// A roundTrip is a multi round-trip call the recorded host made, as
// replay plays it against a live server: one call in the report, from
// its first request to its final answer, whatever the rounds on each
// side.
type roundTrip struct {
	call         CallResult // the first request's
	method, name string
	t0           int64     // the first request's time in the recording
	at           time.Time // and when it was sent live
	// The answers each side gave so far; liveState is the live server's
	// latest requestState (nil: none), and final its final answer once it
	// gave one (done).
	recorded, now int
	liveState     []byte
	done          bool
	final         liveAnswer
	changes       []sessions.Change
	changed       bool
	// lost says a live answer never came: the call is in the report as
	// missing, and its recorded retries are not sent.
	lost bool
}

// isInputRequired reports whether an answer is an MCP result that asks
// the host for input.
func isInputRequired(answer []byte) bool {
	if !bytes.Contains(answer, []byte(`"input_required"`)) {
		return false // most answers: a quick search first
	}
	res := classify.Member(answer, "result")
	rt, _ := classify.StringValue(classify.Member(res, "resultType"))
	return rt == "input_required"
}

// resultState is an input_required answer's requestState, nil when none.
func resultState(answer []byte) []byte {
	st := classify.Member(classify.Member(answer, "result"), "requestState")
	if string(st) == "null" {
		return nil
	}
	return bytes.Clone(st)
}

// withRequestState returns a retry with its params' requestState made
// state (added when the retry has none); frame itself when it has no
// params object, or state is nil.
func withRequestState(frame, state []byte) []byte {
	if state == nil {
		return frame
	}
	ps, pe, ok := sessions.MemberSpan(frame, "params")
	if !ok {
		return frame
	}
	params := frame[ps:pe]
	var out []byte
	if s, e, ok := sessions.MemberSpan(params, "requestState"); ok {
		out = append(out, frame[:ps+s]...)
		out = append(out, state...)
		return append(out, frame[ps+e:]...)
	}
	open := bytes.IndexByte(params, '{')
	if open < 0 {
		return frame
	}
	out = append(out, frame[:ps+open+1]...)
	out = append(out, `"requestState":`...)
	out = append(out, state...)
	if rest := bytes.TrimSpace(params[open+1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, frame[ps+open+1:]...)
}

// roundOf is the multi round-trip call a recorded host request retries:
// the latest of the same method and name awaiting a retry; nil when the
// request is no retry.
func (p *player) roundOf(m *classify.Message) *roundTrip {
	if len(p.trips) == 0 {
		return nil
	}
	if _, retry := retryParts(m.Method(), m.Frame); !retry {
		return nil
	}
	name := sessions.CallName(m.Method(), m.Frame)
	for k := len(p.trips) - 1; k >= 0; k-- {
		if rt := p.trips[k]; rt.method == m.Method() && rt.name == name {
			return rt
		}
	}
	return nil
}

// sendRetry sends the recorded host's retry of rt: with the live
// server's requestState in place of the recorded one; not at all when
// the live server has already given its final answer (the recorded
// answer to the retry is then compared with that).
func (p *player) sendRetry(ev *sessions.Event, m *classify.Message, rt *roundTrip, header []byte) error {
	key := m.ID().Key()
	s := sent{call: rt.call, key: key, t: ev.T, trip: rt, at: time.Now()}
	if rt.lost {
		return nil
	}
	if rt.done {
		p.log("line %d %s: not sent: the server gave the call of line %d its final answer already", ev.Line, esc(m.Method()), rt.call.Line)
		p.requests[key] = s
		return nil
	}
	p.requests[key] = s
	p.unstamped = append(p.unstamped, key)
	frame := withRequestState(m.Frame, rt.liveState)
	if len(frame) != len(m.Frame) || !bytes.Equal(frame, m.Frame) {
		header = nil
	}
	return p.send(frame, header)
}

// maxTrips bounds the multi round-trip calls the player follows at
// once; past it the oldest is forgotten (its retries then play as
// requests of their own).
const maxTrips = 256

// startTrip follows the multi round-trip call whose first request is s,
// the oldest followed forgotten past maxTrips.
func (p *player) startTrip(s sent) *roundTrip {
	rt := &roundTrip{call: s.call, method: s.call.Method, name: s.call.Name, t0: s.t, at: s.at}
	if len(p.trips) == maxTrips {
		p.trips = p.trips[1:]
	}
	p.trips = append(p.trips, rt)
	return rt
}

// tripAnswer takes the answer to a round of a multi round-trip call,
// or to a request whose recorded answer asks for input (its first
// round): recorded, at t in the recording, and the live one, got. It
// reports false for a request of no such call, to compare as any; else
// the call is in the report once its recorded final answer is compared
// with the live final one (a live server may take fewer rounds, or more),
// from its first request to its final answer.
func (p *player) tripAnswer(s sent, t int64, recorded []byte, got liveAnswer, masked bool) bool {
	rt := s.trip
	recIR := isInputRequired(recorded)
	if rt == nil {
		if !recIR {
			return false
		}
		rt = p.startTrip(s)
	}
	rt.recorded++
	fresh := !rt.done // got answers this round (else it is the final answer given already)
	if fresh {
		rt.now++
		if isInputRequired(got.frame) {
			rt.liveState = resultState(got.frame)
		} else {
			rt.done, rt.final = true, liveAnswer{frame: bytes.Clone(got.frame), at: got.at}
		}
	}
	if recIR {
		if fresh && !rt.done {
			// Both ask for input: compared, but for the requestState,
			// which is each server's own.
			c := CallResult{Outcome: OutcomeSame}
			p.compareAs(&c, recorded, got.frame, masked, true)
			rt.changed = rt.changed || c.Outcome != OutcomeSame
			rt.changes = append(rt.changes, c.Changes...)
		}
		if fresh {
			p.release(got.frame)
		}
		return true
	}
	p.trips = slices.DeleteFunc(p.trips, func(x *roundTrip) bool { return x == rt })
	final := got
	if rt.done {
		final = rt.final
	}
	c := rt.call
	c.Recorded = time.Duration(t-rt.t0) * time.Microsecond
	c.Now = final.at.Sub(rt.at)
	c.Outcome, c.Rounds, c.RecordedRounds = OutcomeSame, rt.now, rt.recorded
	p.compareAs(&c, recorded, final.frame, masked, false)
	c.Changes = append(rt.changes, c.Changes...)
	if c.Outcome == OutcomeSame && (rt.changed || rt.now != rt.recorded) {
		c.Outcome = OutcomeChanged
		p.log("line %d %s: %s (%d rounds, recorded %d)", c.Line, esc(c.Method), c.Outcome, rt.now, rt.recorded)
	}
	if fresh {
		p.release(got.frame)
	}
	p.rep.Retries += rt.recorded - 1
	p.addCall(c)
	return true
}

// tripLost ends a multi round-trip call whose live answer to a round
// never came (recorded is the recorded one): it is missing from the
// report once, and its recorded retries are not sent. It reports false
// for a request of no such call.
func (p *player) tripLost(s sent, recorded []byte) bool {
	rt := s.trip
	if rt == nil {
		if !isInputRequired(recorded) {
			return false
		}
		rt = p.startTrip(s)
	}
	rt.lost = true
	c := rt.call
	c.Outcome, c.Rounds, c.RecordedRounds = OutcomeMissing, rt.now, rt.recorded+1
	p.rep.Retries += rt.recorded
	p.addCall(c)
	return true
}
