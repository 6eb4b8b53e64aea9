package diff

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// compareCalls pairs the calls of two sessions, as replay matches them:
// by their call (the method and what it names), equal params first, then
// the closest; it reports the calls made in one session only, those made
// with other arguments, and the answers that changed, in A's order (a
// call only in B, in B's). The first MaxDetailed answers changed keep
// their changes.
func compareCalls(a, b *summary, ig sessions.Ignore) []Difference {
	type item struct {
		ca, cb   call
		inA, inB bool
	}
	var items []item
	// Equal requests pair at once (each is once in its session); only
	// those whose answers differ are kept. The others are grouped by
	// their call, to pair by the closest params.
	restA, restB := map[uint64][]call{}, map[uint64][]call{}
	for h, ca := range a.calls {
		if cb, ok := b.calls[h]; ok {
			if ca.outcome != cb.outcome || ca.rounds != cb.rounds {
				items = append(items, item{ca: ca, cb: cb, inA: true, inB: true})
			}
			continue
		}
		restA[ca.key] = append(restA[ca.key], ca)
	}
	for h, cb := range b.calls {
		if _, ok := a.calls[h]; !ok {
			restB[cb.key] = append(restB[cb.key], cb)
		}
	}
	byLine := func(x, y call) int { return cmp.Compare(x.req, y.req) }
	keys := slices.Collect(maps.Keys(restA))
	for k := range restB {
		if _, ok := restA[k]; !ok {
			keys = append(keys, k)
		}
	}
	for _, key := range keys { // the pairs are sorted below
		as, bs := restA[key], restB[key]
		slices.SortFunc(as, byLine)
		slices.SortFunc(bs, byLine)
		pairs, onlyA, onlyB := pairClosest(a, b, as, bs, ig)
		for _, c := range onlyA {
			items = append(items, item{ca: c, inA: true})
		}
		for _, c := range onlyB {
			items = append(items, item{cb: c, inB: true})
		}
		for _, p := range pairs {
			items = append(items, item{ca: p[0], cb: p[1], inA: true, inB: true})
		}
	}
	line := func(it item) (int64, int64) {
		if !it.inA {
			return math.MaxInt64, it.cb.req
		}
		return it.ca.req, it.cb.req
	}
	slices.SortFunc(items, func(x, y item) int {
		xa, xb := line(x)
		ya, yb := line(y)
		return cmp.Or(cmp.Compare(xa, ya), cmp.Compare(xb, yb))
	})
	// A secret either recording masked stands for any text, in the calls
	// that say they masked one.
	masked := ig.WithMasks(append(slices.Clone(a.hdr.Redact), b.hdr.Redact...), len(a.hdr.Redact) == 0 || len(b.hdr.Redact) == 0, true)
	var out []Difference
	detailed := 0
	for _, it := range items {
		switch {
		case !it.inB:
			out = append(out, Difference{Kind: DiffCallOnlyA, Name: it.ca.name, LineA: it.ca.req})
		case !it.inA:
			out = append(out, Difference{Kind: DiffCallOnlyB, Name: it.cb.name, LineB: it.cb.req})
		default:
			cig := ig
			if it.ca.masked || it.cb.masked {
				cig = masked
			}
			if d, ok := compareCall(a, b, it.ca, it.cb, cig, detailed < sessions.MaxDetailed); ok {
				if len(d.Changes) > 0 {
					detailed++
				}
				out = append(out, d)
			}
		}
	}
	return out
}

// maxPaired bounds the pairs of calls of one kind compared by their
// params to find the closest: past it, those left are paired in order.
const maxPaired = 10_000

// pairClosest pairs the calls of one kind made in A (as) and in B (bs),
// none with the params of another: each of A's, in A's order, with the
// closest of B's left.
func pairClosest(a, b *summary, as, bs []call, ig sessions.Ignore) (pairs [][2]call, onlyA, onlyB []call) {
	if len(as) == 0 || len(bs) == 0 {
		return nil, as, bs
	}
	if len(as)*len(bs) > maxPaired {
		n := min(len(as), len(bs))
		for i := range n {
			pairs = append(pairs, [2]call{as[i], bs[i]})
		}
		return pairs, as[n:], bs[n:]
	}
	reqB := make([][]byte, len(bs))
	for j, cb := range bs {
		reqB[j] = readFrameAt(b.f, cb.reqOff)
	}
	used := make([]bool, len(bs))
	for _, ca := range as {
		reqA := readFrameAt(a.f, ca.reqOff)
		best, score := -1, -1.0
		for j := range bs {
			if used[j] {
				continue
			}
			if sim := ig.Similarity(reqA, reqB[j]); sim > score {
				best, score = j, sim
			}
		}
		if best < 0 {
			onlyA = append(onlyA, ca)
			continue
		}
		used[best] = true
		pairs = append(pairs, [2]call{ca, bs[best]})
	}
	for j, cb := range bs {
		if !used[j] {
			onlyB = append(onlyB, cb)
		}
	}
	return pairs, onlyA, onlyB
}

// compareCall compares a call made in both sessions: ok is false when
// nothing differs. detail keeps the changes (at most MaxChanges); without
// it, each message's diff stops at what decides the kind of difference.
func compareCall(a, b *summary, ca, cb call, ig sessions.Ignore, detail bool) (Difference, bool) {
	d := Difference{Name: ca.name, LineA: ca.req, LineB: cb.req}
	limit := 1
	if detail {
		limit = sessions.MaxChanges
	}
	var asked []sessions.Change
	if ca.params != cb.params {
		asked, _ = ig.DiffCall(readFrameAt(a.f, ca.reqOff), readFrameAt(b.f, cb.reqOff), limit, sessions.IdentityRuleOf(ca.method).Inputs)
	}
	var answered []sessions.Change
	onlyAdds := true
	fa, fb := []byte(nil), []byte(nil)
	if ca.outcome != cb.outcome {
		fa, fb = readFrameAt(a.f, ca.respOff), readFrameAt(b.f, cb.respOff)
		answered, onlyAdds = ig.DiffCall(fa, fb, limit, nil)
	}
	rounds := roundsText(ca.rounds, cb.rounds)
	switch {
	case len(asked) > 0:
		// Another call: what it answered is no regression.
		d.Kind = DiffArguments
		d.Changes = append(asked, answered...)
	case len(answered) == 0 && rounds != "":
		// The same final answer, in other rounds: a change, no regression.
		d.Kind, d.Detail = DiffRounds, rounds+"; the same final answer"
	case len(answered) == 0:
		return Difference{}, false // equal once decoded
	default:
		errA, errB := isError(fa), isError(fb)
		switch {
		case errB && !errA:
			d.Kind, d.Regression = DiffNewError, true
		case errA && !errB:
			d.Kind, d.Detail = DiffFixed, "an error in A, a result in B"
		case errA && errB:
			d.Kind, d.Detail = DiffOutcome, "an error in both"
		default:
			d.Kind = DiffOutcome
			if onlyAdds {
				d.Detail = "B's answer only adds to A's"
			} else {
				d.Regression = true
			}
		}
		d.Changes = answered
		if rounds != "" {
			d.Detail = strings.TrimPrefix(d.Detail+"; "+rounds, "; ")
		}
	}
	if !detail {
		d.Changes = nil
	} else if len(d.Changes) > sessions.MaxChanges {
		d.Changes = d.Changes[:sessions.MaxChanges]
	}
	return d, true
}

// roundsText says how the rounds of a multi round-trip call differ
// between A and B (0: a call of one round); "" when they do not.
func roundsText(a, b int) string {
	a, b = max(a, 1), max(b, 1)
	if a == b {
		return ""
	}
	return fmt.Sprintf("%s in A, %d in B (an MCP multi round-trip call: answered input_required, then retried)", sessions.Count(a, "round"), b)
}

// isError reports whether an answer is an error: a JSON-RPC error, or an
// MCP tool's result that says it is one.
func isError(answer []byte) bool {
	if classify.Member(answer, "error") != nil {
		return true
	}
	return string(classify.Member(classify.Member(answer, "result"), "isError")) == "true"
}
