package sessions

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// DiffOptions configure Diff.
type DiffOptions struct {
	// Ignore leaves paths out of the comparison of params and outcomes.
	Ignore Ignore
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
	Changes []Change
	// Detail says more, in words (latencies, a finding's count).
	Detail string
	// Regression says it fails --exit-code: a removed tool, a changed
	// outcome, a new error finding, a latency past the thresholds.
	Regression bool
}

// A DiffReport is what Diff found.
type DiffReport struct {
	Differences []Difference
	// Frames counts the frames of each session.
	FramesA, FramesB int
}

// Regressions counts the differences that are regressions.
func (r *DiffReport) Regressions() int {
	n := 0
	for _, d := range r.Differences {
		if d.Regression {
			n++
		}
	}
	return n
}

// Diff compares two sessions of the same kind of conversation. It reads
// both files as streams, at once, and keeps a summary of each, not their
// payloads.
func Diff(pathA, pathB string, opts DiffOptions) (*DiffReport, error) {
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
	// calls are the outcomes of requests, by the structural hash of the
	// request (id left out): the first of each.
	calls map[uint64]call
	// latency holds each group's latencies (µs).
	latency map[string][]int32
	// findings by code: how many, and the first.
	findings map[classify.Code]*findingCount
	interned map[string]string
}

type definition struct {
	line int64
	def  []byte
}

type call struct {
	req, resp       int64 // lines
	reqOff, respOff int64
	outcome         uint64
	group           string
}

type findingCount struct {
	n       int
	line    int64
	sev     classify.Severity
	message string
}

type pendingCall struct {
	key   uint64
	group string
	off   int64
}

func summarize(path string, ig Ignore) (*summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot compare: %w", err)
	}
	s := &summary{f: f, methods: map[string]int64{}, tools: map[string]definition{}, prompts: map[string]definition{}, resources: map[string]definition{},
		calls: map[uint64]call{}, latency: map[string][]int32{}, findings: map[classify.Code]*findingCount{}, interned: map[string]string{}}
	rd := NewReader(f)
	hdr, hasHeader := rd.Header()
	framing, _ := classify.ParseFraming(hdr.FramingOrDefault())
	profile, _ := classify.ParseProfile(hdr.ProfileOrDefault())
	tr := classify.NewTracker(classify.TrackerOptions{Profile: profile, LSPFraming: framing == classify.FramingLSP})
	inFlight := map[int64]pendingCall{}
	records := 0
	var hs hasher
	hs.ig = ig
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
		if ev.Kind == EventNote && ev.Text == NoteFramingLSP {
			tr.UseLSPFraming()
		}
		if !ev.IsFrame() || ev.Dir == classify.Err {
			s.sessionFindings(tr.Advance(at))
			continue
		}
		s.frames++
		line := int64(ev.Line)
		m := hdr.Classify(ev.Frame, ev.Dir, tr.Profile())
		obs := tr.Observe(line, at, &m)
		s.frameFindings(line, &m)
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
				h, _ := hs.hash(ev.Frame)
				inFlight[line] = pendingCall{key: h, group: s.group(&m), off: rd.Offset()}
			}
		case classify.KindResponse:
			for _, p := range obs.Pairs {
				pc, ok := inFlight[p.Request]
				if !ok {
					continue
				}
				delete(inFlight, p.Request)
				if lat := p.Latency.Microseconds(); lat >= 0 {
					s.latency[pc.group] = append(s.latency[pc.group], int32(min(lat, math.MaxInt32)))
				}
				// A listing's answer is compared item by item instead.
				if _, seen := s.calls[pc.key]; !seen && !isListing(p.Method) {
					out, _ := hs.hash(ev.Frame)
					s.calls[pc.key] = call{req: p.Request, resp: line, reqOff: pc.off, respOff: rd.Offset(), outcome: out, group: pc.group}
				}
				s.listing(p.Method, line, ev.Frame)
			}
		}
	}
	if !hasHeader && records == 0 {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, ErrNoRecords)
	}
	return s, nil
}

func (s *summary) intern(v string) string { return internIn(s.interned, v) }

// group names the calls a request belongs to, for latencies and reports:
// its method, and for MCP's calls of one thing, that thing's name.
func (s *summary) group(m *classify.Message) string {
	if name := calledName(m); name != "" {
		return s.intern(m.Method() + " " + name)
	}
	return s.intern(m.Method())
}

// calledName is the tool, prompt or resource an MCP request names
// (tools/call, prompts/get, resources/read), cut to 200 bytes, or "".
func calledName(m *classify.Message) string {
	var field string
	switch m.Method() {
	case "tools/call", "prompts/get":
		field = "name"
	case "resources/read":
		field = "uri"
	default:
		return ""
	}
	name, _ := classify.StringValue(classify.Member(m.Params(), field))
	if len(name) > 200 {
		name = name[:200]
	}
	return name
}

func isListing(method string) bool {
	return method == "tools/list" || method == "prompts/list" || method == "resources/list"
}

// listing keeps the definitions in a tools/list, prompts/list or
// resources/list answer.
func (s *summary) listing(method string, line int64, frame []byte) {
	var into map[string]definition
	var member, key string
	switch method {
	case "tools/list":
		into, member, key = s.tools, "tools", "name"
	case "prompts/list":
		into, member, key = s.prompts, "prompts", "name"
	case "resources/list":
		into, member, key = s.resources, "resources", "uri"
	default:
		return
	}
	list := classify.Member(classify.Member(frame, "result"), member)
	if list == nil {
		return
	}
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

func (s *summary) sessionFindings(fs []classify.SessionFinding) {
	for _, f := range fs {
		s.count(f.Seq, f.Finding)
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

// readFrameAt reads back the frame of the record at off.
func readFrameAt(f io.ReaderAt, off int64) []byte {
	r := NewReader(io.NewSectionReader(f, off, math.MaxInt64-off))
	r.decided = true
	ev, err := r.Next()
	if err != nil || !ev.IsFrame() {
		return nil
	}
	return bytes.Clone(ev.Frame)
}

func compareSummaries(a, b *summary, opts DiffOptions) (*DiffReport, error) {
	rep := &DiffReport{FramesA: a.frames, FramesB: b.frames}
	add := func(d Difference) { rep.Differences = append(rep.Differences, d) }

	for _, k := range sortedKeys(a.methods, b.methods) {
		la, inA := a.methods[k]
		lb, inB := b.methods[k]
		switch {
		case inA && !inB:
			add(Difference{Kind: DiffMethodRemoved, Name: k, LineA: la})
		case inB && !inA:
			add(Difference{Kind: DiffMethodAdded, Name: k, LineB: lb})
		}
	}
	defs := []struct {
		a, b                    map[string]definition
		added, removed, changed string
		removedIsRegression     bool
	}{
		{a.tools, b.tools, DiffToolAdded, DiffToolRemoved, DiffToolChanged, true},
		{a.prompts, b.prompts, DiffPromptAdded, DiffPromptRemoved, DiffPromptChanged, false},
		{a.resources, b.resources, DiffResourceAdded, DiffResourceRemoved, DiffResourceChanged, false},
	}
	for _, d := range defs {
		for _, k := range sortedKeys(d.a, d.b) {
			va, inA := d.a[k]
			vb, inB := d.b[k]
			switch {
			case inA && !inB:
				add(Difference{Kind: d.removed, Name: k, LineA: va.line, Regression: d.removedIsRegression})
			case inB && !inA:
				add(Difference{Kind: d.added, Name: k, LineB: vb.line})
			default:
				if cs := opts.Ignore.Diff(va.def, vb.def, maxChanges); len(cs) > 0 {
					add(Difference{Kind: d.changed, Name: k, LineA: va.line, LineB: vb.line, Changes: cs})
				}
			}
		}
	}

	// Outcomes of the calls made in both, in A's order: the first
	// maxDetailed of them with their changes.
	var differ []uint64
	for key, ca := range a.calls {
		if cb, ok := b.calls[key]; ok && ca.outcome != cb.outcome {
			differ = append(differ, key)
		}
	}
	slices.SortFunc(differ, func(x, y uint64) int { return cmp.Compare(a.calls[x].req, a.calls[y].req) })
	var changed []Difference
	for _, key := range differ {
		ca, cb := a.calls[key], b.calls[key]
		d := Difference{Kind: DiffOutcome, Name: ca.group, LineA: ca.req, LineB: cb.req, Regression: true}
		if len(changed) < maxDetailed {
			fa, fb := readFrameAt(a.f, ca.respOff), readFrameAt(b.f, cb.respOff)
			d.Changes = opts.Ignore.Diff(fa, fb, maxChanges)
			if len(d.Changes) == 0 && fa != nil && fb != nil {
				continue // equal once decoded
			}
		}
		changed = append(changed, d)
	}
	rep.Differences = append(rep.Differences, changed...)

	for _, g := range sortedKeys(a.latency, b.latency) {
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

func sortedKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// DescribeChange puts one difference in words, for a terminal: was and
// now name the two sides ("recorded", "now"; "in A", "in B").
func DescribeChange(c Change, was, now string) string {
	path := c.Path
	if path == "" {
		path = "(the whole message)"
	}
	path = classify.EscapeString(path, 120)
	switch {
	case c.Was == "":
		return fmt.Sprintf("%s: added %s", path, classify.EscapeString(c.Now, 160))
	case c.Now == "":
		return fmt.Sprintf("%s: removed (was %s)", path, classify.EscapeString(c.Was, 160))
	}
	return fmt.Sprintf("%s: %s %s, %s %s", path, classify.EscapeString(c.Was, 160), was, classify.EscapeString(c.Now, 160), now)
}
