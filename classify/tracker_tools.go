package classify

import (
	"encoding/json"
	"math"
	"slices"
	"time"
)

// This file holds what the tracker keeps of each MCP tool for ToolUse:
// the tools of the latest complete tools/list in their order, with the
// page that listed each, and per tool name its calls (a multi round-trip
// call counts once), how they ended (a protocol error, or a result with
// isError), the latency of each from its first request to its final
// result, and the drift the rules found in its definition.

// ToolUse is a snapshot of the session's tools so far. Its slices are
// copies, but for each Def, which the tracker shares and never changes:
// read it only.
type ToolUse struct {
	// Listed says a complete tools/list was seen; Stale that the server
	// said the list changed after it (notifications/tools/list_changed).
	Listed, Stale bool
	// ListSeq is the tools/list result that completed the latest list.
	ListSeq int64
	// Tools are the latest list's tools in its order, then the tools
	// called that it does not list, in the order first called.
	Tools []ToolStat
	// Untracked counts the calls of tools past the names followed
	// (maxToolNames, or a name longer than maxToolName).
	Untracked int64
}

// ToolStat is one tool of a ToolUse.
type ToolStat struct {
	Name string
	// Def is the tool's definition as the latest list gave it (raw JSON:
	// escape what is shown of it), nil for a tool the list does not
	// name; Seq is the tools/list result that listed it.
	Def json.RawMessage
	Seq int64
	// Calls counts its tools/call calls, the retries of a multi
	// round-trip call not counted again; Answered those that had their
	// final answer, Errors those answered with a JSON-RPC error (a
	// protocol error) and Failed those whose result says isError (the
	// tool failed). LastCall is the latest call's first request.
	Calls, Answered, Errors, Failed int64
	LastCall                        int64
	// P50 and P99 are the latencies of its answered calls, from the
	// first request to the final answer (0 when none).
	P50, P99 time.Duration
	// Drift is how many times a tools/list of the session changed the
	// tool's definition; DriftSeq and DriftFields the latest: the list's
	// result and the fields that changed.
	Drift       int
	DriftSeq    int64
	DriftFields []string
	// Baseline is how the tool differs from the baseline accepted for
	// the server (tool-drift), at BaselineSeq; the zero value: it does not.
	Baseline    BaselineDrift
	BaselineSeq int64
}

// BaselineDrift is how a tool differs from the accepted baseline: listed
// and not in it, in it and no longer listed, or changed in Fields.
type BaselineDrift struct {
	Added, Removed bool
	Fields         []string
}

// Bounds of what the tracker keeps of tools: the names followed, a
// name's length, and the latencies kept exact per tool (past them they
// go into a histogram of latencyBins bins, each 2^(1/8) wide).
const (
	maxToolNames = 1024
	maxToolName  = 1 << 10
	exactLatency = 128
	latencyBins  = 256
)

// toolsState is what the tracker keeps for ToolUse.
type toolsState struct {
	// order is the latest complete list's tools with the page that listed
	// each; next gathers those of a list under way.
	order, next []listedName
	listSeq     int64
	// use is each tool's record, by name, in the order first met.
	use       map[string]*toolRecord
	useOrder  []*toolRecord
	untracked int64
}

type listedName struct {
	name string
	seq  int64
}

type toolRecord struct {
	name                            string
	calls, answered, errors, failed int64
	lastCall                        int64
	// lat holds the latencies while there are at most exactLatency; past
	// that hist counts them by bin.
	lat         []time.Duration
	hist        *[latencyBins]uint32
	drift       int
	driftSeq    int64
	driftFields []string
	baseline    BaselineDrift
	baselineSeq int64
}

// toolRecord is the record of the tool name, made when new and the names
// followed are not all taken; nil past them.
func (t *Tracker) toolRecord(name []byte) *toolRecord {
	if r, ok := t.tools.use[string(name)]; ok {
		return r
	}
	if len(name) > maxToolName || len(t.tools.use) >= maxToolNames {
		return nil
	}
	if t.tools.use == nil {
		t.tools.use = map[string]*toolRecord{}
	}
	r := &toolRecord{name: string(name)}
	t.tools.use[r.name] = r
	t.tools.useOrder = append(t.tools.useOrder, r)
	return r
}

// toolCalled counts a tools/call request seq of the tool name that
// retries no earlier call.
func (t *Tracker) toolCalled(seq int64, name []byte) {
	r := t.toolRecord(name)
	if r == nil {
		t.tools.untracked++
		return
	}
	r.calls++
	r.lastCall = seq
}

// toolAnswered counts the answer m, at at, of the tools/call f: a final
// one ends the call (an input_required result does not: a retry goes on
// with it), its latency running from the call's first request.
func (t *Tracker) toolAnswered(at time.Duration, m *Message, f *flight) {
	if f.method != "tools/call" || m.Dir != S2H || len(f.tool) == 0 {
		return
	}
	res := m.Result()
	if s, _ := rawText(Member(res, "resultType")); string(s) == "input_required" {
		return
	}
	r := t.tools.use[string(f.tool)]
	if r == nil {
		return
	}
	r.answered++
	switch {
	case m.HasError():
		r.errors++
	case res != nil && mayBeError(res) && string(Member(res, "isError")) == "true":
		r.failed++
	}
	sent := f.sent
	if f.origin != 0 {
		sent = f.originSent
	}
	r.addLatency(at - sent)
}

func (r *toolRecord) addLatency(d time.Duration) {
	if r.hist == nil && len(r.lat) < exactLatency {
		r.lat = append(r.lat, d)
		return
	}
	if r.hist == nil {
		r.hist = new([latencyBins]uint32)
		for _, l := range r.lat {
			r.hist[latencyBin(l)]++
		}
		r.lat = nil
	}
	if b := &r.hist[latencyBin(d)]; *b < math.MaxUint32 {
		*b++
	}
}

// latencyBin is the histogram bin of d: bin b holds the latencies of
// 2^(b/8) µs up to 2^((b+1)/8) µs (bin 0 also those under a µs).
func latencyBin(d time.Duration) int {
	us := float64(d) / float64(time.Microsecond)
	if us < 1 {
		return 0
	}
	return min(int(8*math.Log2(us)), latencyBins-1)
}

// percentiles are the record's p50 and p99: exact while the latencies
// are kept, else the middle of their bins (within 4.5%).
func (r *toolRecord) percentiles() (p50, p99 time.Duration) {
	if r.hist == nil {
		if len(r.lat) == 0 {
			return 0, 0
		}
		s := slices.Clone(r.lat)
		slices.Sort(s)
		pick := func(q float64) time.Duration { return s[min(int(q*float64(len(s))), len(s)-1)] }
		return pick(0.50), pick(0.99)
	}
	var n uint64
	for _, c := range r.hist {
		n += uint64(c)
	}
	pick := func(q float64) time.Duration {
		rank := min(uint64(q*float64(n)), n-1)
		var seen uint64
		for b, c := range r.hist {
			if seen += uint64(c); seen > rank {
				return time.Duration(math.Exp2((float64(b)+0.5)/8) * float64(time.Microsecond))
			}
		}
		return 0
	}
	return pick(0.50), pick(0.99)
}

// toolsListed makes the list under way, completed by the result seq, the
// latest list.
func (t *Tracker) toolsListed(seq int64) {
	t.tools.order, t.tools.next = t.tools.next, t.tools.order[:0]
	t.tools.listSeq = seq
}

// toolDrifted notes that the list completed by the result seq changed
// the definition of the tool name in fields.
func (t *Tracker) toolDrifted(seq int64, name string, fields []string) {
	if r := t.toolRecord([]byte(name)); r != nil {
		r.drift++
		r.driftSeq, r.driftFields = seq, fields
	}
}

// toolOffBaseline notes how the tool of change c differs from the
// baseline, as the list completed by the result seq shows.
func (t *Tracker) toolOffBaseline(seq int64, c DefinitionChange) {
	if r := t.toolRecord([]byte(c.Name)); r != nil {
		r.baseline = BaselineDrift{Added: c.Added, Removed: c.Removed, Fields: c.Fields}
		r.baselineSeq = seq
	}
}

// ToolUse is a snapshot of the session's tools so far (see the type).
func (t *Tracker) ToolUse() ToolUse {
	if s := t.shown(); s != t {
		return s.ToolUse()
	}
	u := ToolUse{Listed: t.mcp.toolsSeen, Stale: t.mcp.toolsStale, Untracked: t.tools.untracked}
	stat := func(name string, r *toolRecord) ToolStat {
		s := ToolStat{Name: name}
		if r != nil {
			s.Calls, s.Answered, s.Errors, s.Failed, s.LastCall = r.calls, r.answered, r.errors, r.failed, r.lastCall
			s.P50, s.P99 = r.percentiles()
			s.Drift, s.DriftSeq, s.DriftFields = r.drift, r.driftSeq, slices.Clone(r.driftFields)
			s.Baseline, s.BaselineSeq = r.baseline, r.baselineSeq
			s.Baseline.Fields = slices.Clone(r.baseline.Fields)
		}
		return s
	}
	listed := map[string]int{}
	if u.Listed {
		u.ListSeq = t.tools.listSeq
		u.Tools = make([]ToolStat, 0, len(t.tools.order))
		for _, l := range t.tools.order {
			if i, ok := listed[l.name]; ok {
				u.Tools[i].Seq = l.seq // listed twice: the rules keep the last
				continue
			}
			listed[l.name] = len(u.Tools)
			s := stat(l.name, t.tools.use[l.name])
			if t.mcp.schemas != nil {
				s.Def, _ = t.mcp.schemas.Definition(l.name)
			}
			s.Seq = l.seq
			u.Tools = append(u.Tools, s)
		}
	}
	for _, r := range t.tools.useOrder {
		if _, ok := listed[r.name]; !ok && (r.calls > 0 || r.baseline.Removed) {
			u.Tools = append(u.Tools, stat(r.name, r))
		}
	}
	return u
}
