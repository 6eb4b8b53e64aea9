package replay

import (
	"bytes"
	"fmt"
	"strconv"

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
	a := inputAsked{method: method, name: sessions.CallName(method, body), answer: answer}
	if st := classify.Member(classify.Member(rb, "result"), "requestState"); st != nil && string(st) != "null" {
		a.state = bytes.Clone(st)
	}
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
	want := metaRevision(classify.Member(classify.Member(body, "params"), "_meta"))
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
