// Package diff compares two session files of the same kind of
// conversation, as rpctap diff does: the methods each side sent, the
// tools, prompts and resources each server listed, the answers to the
// same calls (paired as replay matches them: the same method and what it
// names, then the closest params), new findings, and latency shifts
// (Files, Report). It reads both files as streams and keeps a summary of
// each, not their payloads.
package diff

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// Options configure Files.
type Options struct {
	// Ignore leaves paths out of the comparison of params and outcomes.
	Ignore sessions.Ignore
	// A latency shift is reported when a group of calls' median latency
	// moved by at least DurationThreshold and by a factor of at least
	// DurationRatio (defaults 100 ms and 2).
	DurationThreshold time.Duration
	DurationRatio     float64
}

// Kinds of difference.
const (
	DiffMethodAdded     = "method added"
	DiffMethodRemoved   = "method removed"
	DiffToolAdded       = "tool added"
	DiffToolRemoved     = "tool removed"
	DiffToolChanged     = "tool changed"
	DiffPromptAdded     = "prompt added"
	DiffPromptRemoved   = "prompt removed"
	DiffPromptChanged   = "prompt changed"
	DiffResourceAdded   = "resource added"
	DiffResourceRemoved = "resource removed"
	DiffResourceChanged = "resource changed"
	DiffOutcome         = "outcome changed"
	DiffNewError        = "new error"         // an error where A has a result
	DiffFixed           = "fixed"             // a result where A has an error
	DiffArguments       = "arguments changed" // the call was made with other arguments
	DiffCallOnlyA       = "call only in A"
	DiffCallOnlyB       = "call only in B"
	DiffSlower          = "slower"
	DiffFaster          = "faster"
	DiffFinding         = "new finding"
)

// A Difference is one thing that differs between two sessions.
type Difference struct {
	Kind string
	// Name is what differs: a method ("h2s tools/call"), a tool, a
	// prompt, a resource's URI, a group of calls ("tools/call echo"), a
	// finding code.
	Name string
	// LineA and LineB are where it is in each file (0: not there).
	LineA, LineB int64
	// Changes are the differences in the value (a tool's definition, an
	// outcome), from A to B.
	Changes []sessions.Change
	// Detail says more, in words (latencies, a finding's count).
	Detail string
	// Regression says it fails --exit-code: a tool B listed without it,
	// a result changed or removed in part, a new error, a new error
	// finding, a latency past the thresholds. An error that became a
	// result is a fix, a result that only gained members is not one, and
	// neither is a call made with other arguments, or made in one
	// session only.
	Regression bool
}

// A Report is what Files found.
type Report struct {
	Differences []Difference
	// Frames counts the frames of each session.
	FramesA, FramesB int
}

// Regressions counts the differences that are regressions.
func (r *Report) Regressions() int {
	n := 0
	for _, d := range r.Differences {
		if d.Regression {
			n++
		}
	}
	return n
}

// Files compares two sessions of the same kind of conversation. It reads
// both files as streams, at once, and keeps a summary of each, not their
// payloads.
func Files(pathA, pathB string, opts Options) (*Report, error) {
	if opts.DurationThreshold <= 0 {
		opts.DurationThreshold = 100 * time.Millisecond
	}
	if opts.DurationRatio <= 0 {
		opts.DurationRatio = 2
	}
	type result struct {
		s   *summary
		err error
	}
	var results [2]chan result
	for i, path := range []string{pathA, pathB} {
		results[i] = make(chan result, 1)
		go func() {
			s, err := summarize(path, opts.Ignore)
			results[i] <- result{s, err}
		}()
	}
	ra, rb := <-results[0], <-results[1]
	if ra.err != nil {
		return nil, ra.err
	}
	if rb.err != nil {
		return nil, rb.err
	}
	defer ra.s.f.Close()
	defer rb.s.f.Close()
	return compareSummaries(ra.s, rb.s, opts)
}

// A summary is what diff keeps of one session.
type summary struct {
	f       *os.File
	frames  int
	methods map[string]int64 // "h2s tools/call" → first line
	// tools, prompts and resources are the definitions the server definition
	// (the last listing of each name wins), as compact JSON.
	tools, prompts, resources map[string]definition
	// calls are the requests answered, by their structural hash (id
	// left out): the first of each.
	calls map[uint64]call
	// listed says the session listed tools, prompts, resources.
	listed [3]bool
	// answered says the server has answered a request: what was asked
	// before waited for its start-up too.
	answered bool
	// latency holds each group's latencies (µs).
	latency map[string][]int32
	// findings by code: how many, and the first.
	findings map[classify.Code]*findingCount
	// user are the lines of the frames the user wrote toward the server
	// (injected, edited): findings about them, or that link to them, are
	// the user's, and no difference between the servers.
	user     sessions.UserLines
	interned map[string]string
	hdr      sessions.Header
}

type definition struct {
	line int64
	def  []byte
}

type call struct {
	req, resp       int64 // lines
	reqOff, respOff int64
	key             uint64 // its call (sessions.CallID.Key)
	params, outcome uint64 // structural hashes of the request and its answer
	method          string
	name            string // what it calls, for people: "tools/call echo"
	masked          bool   // the recording masked a secret in the request or its answer
}

type findingCount struct {
	n       int
	line    int64
	sev     classify.Severity
	message string
}

type pendingCall struct {
	call                sessions.CallID
	params              uint64
	method, group, name string
	off                 int64
	startup             bool // asked before the server answered anything
	masked              bool
}

func summarize(path string, ig sessions.Ignore) (*summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot compare: %w", err)
	}
	s := &summary{f: f, methods: map[string]int64{}, tools: map[string]definition{}, prompts: map[string]definition{}, resources: map[string]definition{},
		calls: map[uint64]call{}, latency: map[string][]int32{}, findings: map[classify.Code]*findingCount{}, interned: map[string]string{}}
	rd := sessions.NewReader(f)
	hdr, hasHeader := rd.Header()
	s.hdr = hdr
	framing, _ := classify.ParseFraming(hdr.FramingOrDefault())
	profile, _ := classify.ParseProfile(hdr.ProfileOrDefault())
	tr := classify.NewTracker(classify.TrackerOptions{Profile: profile, LSPFraming: framing == classify.FramingLSP})
	inFlight := map[int64]pendingCall{}
	records := 0
	var hs sessions.Hasher
	hs.Ignore = ig
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		records++
		at := time.Duration(ev.T) * time.Microsecond
		if ev.Kind == sessions.EventNote && ev.Text == sessions.NoteFramingLSP {
			tr.UseLSPFraming()
		}
		if !ev.IsFrame() || ev.Dir == classify.Err {
			s.sessionFindings(tr.Advance(at))
			continue
		}
		s.frames++
		// The server's conversation, as replay reads it: not what the
		// user wrote in the server's place, nor a host frame the server
		// never read, and a server frame the user edited as the server
		// wrote it.
		frame, _, ok := sessions.ServerSide(ev)
		if !ok {
			continue
		}
		line := int64(ev.Line)
		fate := sessions.FateOf(ev)
		if ev.Dir == classify.H2S && fate.ByUser() {
			s.user.Add(line)
		}
		m := hdr.Classify(frame, ev.Dir, tr.Profile())
		obs := tr.ObserveDelivery(line, at, &m, fate.Delivery())
		if !s.user.Has(line) {
			s.frameFindings(line, &m)
		}
		s.sessionFindings(obs.Findings)
		if method := m.Method(); method != "" && (m.Kind == classify.KindRequest || m.Kind == classify.KindNotification) {
			key := s.intern(ev.Dir.String() + " " + method)
			if _, ok := s.methods[key]; !ok {
				s.methods[key] = line
			}
		}
		switch m.Kind {
		case classify.KindRequest:
			if ev.Dir == classify.H2S {
				method := s.intern(m.Method())
				h, idn, _ := hs.HashCall(method, frame)
				name, group := method, method
				if n := sessions.CallNameOf(method, idn.Parts); n != "" {
					name = s.intern(method + " " + n)
					if groupedByName(method) {
						group = name
					}
				}
				inFlight[line] = pendingCall{call: idn.Call, params: h, method: method, group: group, name: name, off: rd.Offset(),
					startup: !s.answered, masked: ev.Redacted}
			}
		case classify.KindResponse:
			if ev.Dir == classify.S2H {
				s.answered = true
			}
			for _, p := range obs.Pairs {
				pc, ok := inFlight[p.Request]
				if !ok {
					continue
				}
				delete(inFlight, p.Request)
				// A request asked before the server's first answer
				// waited for the server to start: not a call's latency.
				if lat := p.Latency.Microseconds(); lat >= 0 && !pc.startup {
					s.latency[pc.group] = append(s.latency[pc.group], int32(min(lat, math.MaxInt32)))
				}
				// A listing's answer is compared item by item instead.
				if _, seen := s.calls[pc.params]; !seen && !isListing(p.Method) {
					out, _ := hs.Hash(frame)
					s.calls[pc.params] = call{req: p.Request, resp: line, reqOff: pc.off, respOff: rd.Offset(),
						key: pc.call.Key, params: pc.params, outcome: out, method: pc.method, name: pc.name, masked: pc.masked || ev.Redacted}
				}
				s.listing(p.Method, line, frame)
			}
		}
	}
	if !hasHeader && records == 0 {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, sessions.ErrNoRecords)
	}
	return s, nil
}

func (s *summary) intern(v string) string { return sessions.InternIn(s.interned, v) }

// groupedByName reports whether the latencies of method's calls are
// grouped by what they call (one tool, prompt or resource), and not by
// the method alone: MCP's calls of one thing (an LSP request's document
// and position would make a group a call).
func groupedByName(method string) bool {
	switch method {
	case "tools/call", "prompts/get", "resources/read":
		return true
	}
	return false
}

func isListing(method string) bool {
	return method == "tools/list" || method == "prompts/list" || method == "resources/list"
}

// listing keeps the definitions in a tools/list, prompts/list or
// resources/list answer.
func (s *summary) listing(method string, line int64, frame []byte) {
	var into map[string]definition
	var member, key string
	var kind int
	switch method {
	case "tools/list":
		into, member, key, kind = s.tools, "tools", "name", 0
	case "prompts/list":
		into, member, key, kind = s.prompts, "prompts", "name", 1
	case "resources/list":
		into, member, key, kind = s.resources, "resources", "uri", 2
	default:
		return
	}
	list := classify.Member(classify.Member(frame, "result"), member)
	if list == nil {
		return
	}
	s.listed[kind] = true
	var defs []json.RawMessage
	if err := json.Unmarshal(list, &defs); err != nil {
		return
	}
	for _, d := range defs {
		name, ok := classify.StringValue(classify.Member(d, key))
		if !ok {
			continue
		}
		var b bytes.Buffer
		if json.Compact(&b, d) == nil {
			into[name] = definition{line: line, def: b.Bytes()}
		}
	}
}

func (s *summary) frameFindings(line int64, m *classify.Message) {
	for _, f := range m.Findings {
		s.count(line, f)
	}
	for i := range m.Members {
		for _, f := range m.Members[i].Findings {
			s.count(line, f)
		}
	}
}

// sessionFindings counts the tracker's findings, but the user's.
func (s *summary) sessionFindings(fs []classify.SessionFinding) {
	for _, f := range fs {
		if !sessions.FindingByUser(f.Seq, f.Related, s.user.Has) {
			s.count(f.Seq, f.Finding)
		}
	}
}

func (s *summary) count(line int64, f classify.Finding) {
	fc := s.findings[f.Code]
	if fc == nil {
		s.findings[f.Code] = &findingCount{n: 1, line: line, sev: f.Severity, message: f.Message}
		return
	}
	fc.n++
	fc.sev = max(fc.sev, f.Severity)
}

// readFrameAt reads back the frame of the record at off, as the server
// read or wrote it (sessions.ServerSide).
func readFrameAt(f io.ReaderAt, off int64) []byte {
	r := sessions.NewReaderAt(f, off)
	ev, err := r.Next()
	if err != nil {
		return nil
	}
	frame, _, ok := sessions.ServerSide(ev)
	if !ok {
		return nil
	}
	return bytes.Clone(frame)
}

func compareSummaries(a, b *summary, opts Options) (*Report, error) {
	rep := &Report{FramesA: a.frames, FramesB: b.frames}
	add := func(d Difference) { rep.Differences = append(rep.Differences, d) }

	for _, k := range sessions.SortedKeys(a.methods, b.methods) {
		la, inA := a.methods[k]
		lb, inB := b.methods[k]
		switch {
		case inA && !inB:
			add(Difference{Kind: DiffMethodRemoved, Name: k, LineA: la})
		case inB && !inA:
			add(Difference{Kind: DiffMethodAdded, Name: k, LineB: lb})
		}
	}
	// A definition is removed only from a session that listed them, and
	// added only to one whose other session did.
	defs := []struct {
		a, b                    map[string]definition
		listedA, listedB        bool
		added, removed, changed string
		removedIsRegression     bool
	}{
		{a.tools, b.tools, a.listed[0], b.listed[0], DiffToolAdded, DiffToolRemoved, DiffToolChanged, true},
		{a.prompts, b.prompts, a.listed[1], b.listed[1], DiffPromptAdded, DiffPromptRemoved, DiffPromptChanged, false},
		{a.resources, b.resources, a.listed[2], b.listed[2], DiffResourceAdded, DiffResourceRemoved, DiffResourceChanged, false},
	}
	for _, d := range defs {
		for _, k := range sessions.SortedKeys(d.a, d.b) {
			va, inA := d.a[k]
			vb, inB := d.b[k]
			switch {
			case inA && !inB:
				if d.listedB {
					add(Difference{Kind: d.removed, Name: k, LineA: va.line, Regression: d.removedIsRegression})
				}
			case inB && !inA:
				if d.listedA {
					add(Difference{Kind: d.added, Name: k, LineB: vb.line})
				}
			default:
				if cs := opts.Ignore.Diff(va.def, vb.def, sessions.MaxChanges); len(cs) > 0 {
					add(Difference{Kind: d.changed, Name: k, LineA: va.line, LineB: vb.line, Changes: cs})
				}
			}
		}
	}

	rep.Differences = append(rep.Differences, compareCalls(a, b, opts.Ignore)...)

	for _, g := range sessions.SortedKeys(a.latency, b.latency) {
		la, lb := a.latency[g], b.latency[g]
		if len(la) == 0 || len(lb) == 0 {
			continue
		}
		ma, mb := median(la), median(lb)
		shift := mb - ma
		ratio := math.Inf(1)
		if ma > 0 {
			ratio = float64(mb) / float64(ma)
		}
		if shift < 0 {
			shift = -shift
			ratio = math.Inf(1)
			if mb > 0 {
				ratio = float64(ma) / float64(mb)
			}
		}
		if shift < opts.DurationThreshold || ratio < opts.DurationRatio {
			continue
		}
		kind := DiffSlower
		if mb < ma {
			kind = DiffFaster
		}
		add(Difference{Kind: kind, Name: g, Regression: kind == DiffSlower,
			Detail: fmt.Sprintf("median %v in A (%d calls), %v in B (%d calls)", roundLatency(ma), len(la), roundLatency(mb), len(lb))})
	}

	codes := make([]classify.Code, 0, len(b.findings))
	for c := range b.findings {
		if _, inA := a.findings[c]; !inA {
			codes = append(codes, c)
		}
	}
	slices.Sort(codes)
	for _, c := range codes {
		fc := b.findings[c]
		add(Difference{Kind: DiffFinding, Name: c.String(), LineB: fc.line, Regression: fc.sev == classify.Error,
			Detail: fmt.Sprintf("%s, %d in B, none in A; the first: %s", fc.sev, fc.n, fc.message)})
	}
	return rep, nil
}

func median(v []int32) time.Duration {
	s := slices.Clone(v)
	slices.Sort(s)
	return time.Duration(s[len(s)/2]) * time.Microsecond
}

func roundLatency(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(100 * time.Microsecond)
}

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
			if ca.outcome != cb.outcome {
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
	switch {
	case len(asked) > 0:
		// Another call: what it answered is no regression.
		d.Kind = DiffArguments
		d.Changes = append(asked, answered...)
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
	}
	if !detail {
		d.Changes = nil
	} else if len(d.Changes) > sessions.MaxChanges {
		d.Changes = d.Changes[:sessions.MaxChanges]
	}
	return d, true
}

// isError reports whether an answer is an error: a JSON-RPC error, or an
// MCP tool's result that says it is one.
func isError(answer []byte) bool {
	if classify.Member(answer, "error") != nil {
		return true
	}
	return string(classify.Member(classify.Member(answer, "result"), "isError")) == "true"
}
