package replay

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/internal/textdist"
	"github.com/rpctap/rpctap/sessions"
)

// match picks the recorded request that answers a host request, or says
// why none does. Only a recorded request of the same call answers (the
// same method and identity, see identify): with --match best the one
// with the same inputs and the closest params, with strict the one with
// equal params, with sequential the first of the call not answered yet.
func (s *server) match(method string, body []byte) (int32, string) {
	if !slices.ContainsFunc(s.rec.byMethod[method], func(c int32) bool { return s.rec.frames[c].kind == classify.KindRequest }) {
		return -1, s.nearestMethod(method)
	}
	if method == "initialize" {
		return s.matchInitialize(s.requests(method), body)
	}
	hs := sessions.Hasher{Ignore: s.opts.Ignore}
	h, idn, _ := hs.HashCall(method, body)
	calls := s.sameCall(method, idn.Call, h, body)
	// A recorded retry answers only the retry of a call replay asked for
	// input (matchRetry); with --strict-version, only a request of the
	// host's revision answers.
	calls = slices.DeleteFunc(calls, func(c related) bool { return s.rec.frames[c.i].retry })
	if why := s.revisionDiffers(method, body, calls); why != "" {
		return -1, why
	}
	if s.opts.StrictVersion {
		want := requestRevision(body)
		calls = slices.DeleteFunc(calls, func(c related) bool { return s.rec.revisions[s.rec.frames[c.i].rev] != want })
	}
	if s.opts.Match == MatchSequential {
		for _, c := range calls {
			if !s.rec.frames[c.i].used {
				return c.i, ""
			}
		}
		if len(calls) > 0 {
			return -1, fmt.Sprintf("the recording has %d %s requests%s, all answered already (--match sequential)", len(calls), esc(method), s.forCall(method, body))
		}
		return -1, s.noMatch(method, body, calls)
	}
	// Equal params, each recorded request once before any again.
	reuse := int32(-1)
	for _, c := range calls {
		if c.equal {
			if !s.rec.frames[c.i].used {
				return c.i, ""
			}
			if reuse < 0 {
				reuse = c.i
			}
		}
	}
	if reuse >= 0 {
		return reuse, ""
	}
	if s.opts.Match == MatchBest {
		// None has equal params: the most alike of those with the same
		// inputs.
		var same []int32
		for _, c := range calls {
			if c.sameInputs {
				same = append(same, c.i)
			}
		}
		if len(same) > 0 {
			if best, _ := s.nearest(same, body); best >= 0 {
				return best, ""
			}
			return -1, "the recording could not be read back"
		}
	}
	return -1, s.noMatch(method, body, calls)
}

// requests are the recorded requests of method.
func (s *server) requests(method string) []int32 {
	var reqs []int32
	for _, c := range s.rec.byMethod[method] {
		if s.rec.frames[c].kind == classify.KindRequest {
			reqs = append(reqs, c)
		}
	}
	return reqs
}

// A related recorded request: how it compares with the host's.
type related struct {
	i                 int32
	sameInputs, equal bool
}

// sameCall returns the recorded requests of method that are the call the
// host's request body (its call id, its hash h) is, in recording order. A
// recorded request the recording masked a secret in is compared with the
// masks standing for any value.
func (s *server) sameCall(method string, id sessions.CallID, h uint64, body []byte) []related {
	out := s.related[:0]
	defer func() { s.related = out[:0] }()
	for _, c := range s.rec.byCall[id.Key] {
		f := &s.rec.frames[c]
		if f.method != method || f.masked {
			continue
		}
		same := f.call.Inputs == id.Inputs
		out = append(out, related{i: c, sameInputs: same, equal: same && f.hash == h})
	}
	masked := s.rec.masked[method]
	for k, c := range masked {
		if k == maxCompared {
			break
		}
		fb, _, err := s.rec.read(c)
		if err != nil {
			continue
		}
		r := related{i: c, sameInputs: true, equal: true}
		for _, ch := range s.masked.Diff(fb, body, 0) {
			part, input := sessions.IdentityPaths(method, ch.Path)
			if part {
				r.i = -1
				break
			}
			r.sameInputs = r.sameInputs && !input
			r.equal = false
		}
		if r.i >= 0 {
			out = append(out, r)
		}
	}
	if len(masked) > 0 {
		slices.SortFunc(out, func(a, b related) int { return cmp.Compare(a.i, b.i) })
	}
	return out
}

// nearest returns the recorded request of cands most alike body (one not
// answered yet, of two as alike), and its bytes; -1 when none could be
// read back.
func (s *server) nearest(cands []int32, body []byte) (int32, []byte) {
	best, bestScore, bestBody := int32(-1), -1.0, []byte(nil)
	for k, c := range cands {
		if k == maxCompared {
			break
		}
		fb, _, err := s.rec.read(c)
		if err != nil {
			continue
		}
		ig := s.opts.Ignore
		if s.rec.frames[c].masked {
			ig = s.masked
		}
		score := ig.Similarity(fb, body)
		if !s.rec.frames[c].used {
			score += 1e-9
		}
		if score > bestScore {
			best, bestScore, bestBody = c, score, fb
		}
	}
	return best, bestBody
}

// forCall is " for NAME" when requests of method name what they call.
func (s *server) forCall(method string, body []byte) string {
	if name := sessions.CallName(method, body); name != "" {
		return " for " + esc(name)
	}
	return ""
}

// maxDescribed bounds the paths an error names.
const maxDescribed = 100

// noMatch says why no recorded request of method answers the host's,
// body: none of the same call (calls is empty), or none with its inputs or
// params; and how the nearest of them differs, path by path.
func (s *server) noMatch(method string, body []byte, calls []related) string {
	var why string
	var near []int32
	switch {
	case len(calls) == 0:
		why = fmt.Sprintf("the recording has no %s request%s", esc(method), s.forCall(method, body))
	case s.opts.Match == MatchStrict:
		why = fmt.Sprintf("no recorded %s request%s has equal params (--match strict)", esc(method), s.forCall(method, body))
	default:
		what := "params"
		if len(sessions.IdentityRuleOf(method).Inputs) > 0 {
			what = "arguments"
		}
		why = fmt.Sprintf("no recorded %s request%s has these %s", esc(method), s.forCall(method, body), what)
	}
	for _, c := range calls {
		near = append(near, c.i)
	}
	if near == nil {
		near = s.requests(method)
	}
	best, bestBody := s.nearest(near, body)
	if best < 0 {
		return why + "; the recording could not be read back"
	}
	ig := s.opts.Ignore
	if s.rec.frames[best].masked {
		ig = s.masked
	}
	changes := ig.Diff(bestBody, body, 0)
	nearName := esc(method)
	if name := sessions.CallName(method, bestBody); name != "" {
		nearName += " " + esc(name)
	}
	out := fmt.Sprintf("%s; the nearest is %s, line %d, which differs at %s: %s", why, nearName, s.rec.frames[best].line,
		sessions.Count(len(changes), "path"), describeChanges(changes[:min(len(changes), maxDescribed)], "recorded", "sent"))
	if len(changes) > maxDescribed {
		out += fmt.Sprintf("; and %s more", sessions.Count(len(changes)-maxDescribed, "path"))
	}
	return out
}

// matchInitialize answers the MCP handshake from the recording whatever
// protocol version the host asks for, unless StrictVersion.
func (s *server) matchInitialize(reqs []int32, body []byte) (int32, string) {
	version := func(b []byte) string {
		v, _ := classify.StringValue(classify.Member(classify.Member(b, "params"), "protocolVersion"))
		return v
	}
	want := version(body)
	pick, recorded := int32(-1), ""
	for _, c := range reqs {
		if s.opts.StrictVersion {
			fb, _, err := s.rec.read(c)
			if err != nil {
				continue
			}
			if recorded = version(fb); recorded != want {
				continue
			}
		}
		if pick < 0 || !s.rec.frames[c].used && s.rec.frames[pick].used {
			pick = c
		}
	}
	if pick < 0 {
		return -1, fmt.Sprintf("the recording's initialize (line %d) asked for protocol version %s, the host asks for %s (--strict-version)",
			s.rec.frames[reqs[0]].line, esc(strconv.Quote(recorded)), esc(strconv.Quote(want)))
	}
	return pick, ""
}

// maxCompared bounds the recorded requests read back to find the most
// alike one.
const maxCompared = 500

// nearestMethod says which recorded request is nearest to a method that
// was never recorded.
func (s *server) nearestMethod(method string) string {
	best, bestD := "", -1
	for m, idx := range s.rec.byMethod {
		if s.rec.frames[idx[0]].kind != classify.KindRequest {
			continue
		}
		if d := textdist.Distance(m, method); bestD < 0 || d < bestD || d == bestD && m < best {
			best, bestD = m, d
		}
	}
	if best == "" {
		return fmt.Sprintf("the recording has no request %s, and no requests at all", esc(method))
	}
	return fmt.Sprintf("the recording has no request %s; the nearest is %s, line %d", esc(method), esc(best), s.rec.frames[s.rec.byMethod[best][0]].line)
}

// describeChanges puts the first changes in words.
func describeChanges(cs []sessions.Change, was, now string) string {
	if len(cs) == 0 {
		return "only in paths left out"
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = sessions.DescribeChange(c, was, now)
	}
	return strings.Join(parts, "; ")
}
