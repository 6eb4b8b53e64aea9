// Package diff compares two session files of the same kind of
// conversation, as rpctap diff does: the methods each side sent, the
// tools, prompts and resources each server listed, the answers to the
// same calls (paired as replay matches them: the same method and what it
// names, then the closest params), new findings, and latency shifts
// (Files, Report). It reads both files as streams and keeps a summary of
// each, not their payloads. A Report is written as rpctap diff's text
// (WriteText) or JSON (WriteJSON).
package diff

import (
	"fmt"
	"math"
	"slices"
	"strings"
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
	DiffRounds          = "rounds changed"    // a multi round-trip call's final answer came in other rounds
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

func compareSummaries(a, b *summary, opts Options) (*Report, error) {
	rep := &Report{FramesA: a.frames, FramesB: b.frames}
	rep.Differences = append(rep.Differences, compareMethods(a, b)...)
	rep.Differences = append(rep.Differences, compareLists(a, b, opts.Ignore)...)
	rep.Differences = append(rep.Differences, compareCalls(a, b, opts.Ignore)...)
	rep.Differences = append(rep.Differences, compareLatency(a, b, opts)...)
	rep.Differences = append(rep.Differences, compareFindings(a, b)...)
	rep.Differences = append(rep.Differences, compareHTTP(a, b)...)
	return rep, nil
}

// compareMethods finds the methods sent in one session only.
func compareMethods(a, b *summary) []Difference {
	var out []Difference
	add := func(d Difference) { out = append(out, d) }
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
	return out
}

// compareLists finds the tools, prompts and resources added, removed or
// changed. Tools and prompts are compared as a baseline is (a change is
// one in the fields classify.CompareDefinitions compares); resources,
// which a server lists as what it holds rather than as definitions a
// host trusts, by their whole value.
func compareLists(a, b *summary, ig sessions.Ignore) []Difference {
	var out []Difference
	add := func(d Difference) { out = append(out, d) }
	// A definition is removed only from a session that listed them, and
	// added only to one whose other session did.
	defs := []struct {
		a, b                    map[string]definition
		listedA, listedB        bool
		added, removed, changed string
		removedIsRegression     bool
		kind                    classify.DefinitionKind
		definitions             bool // compared as definitions (by kind's fields)
	}{
		{a.tools, b.tools, a.listed[0], b.listed[0], DiffToolAdded, DiffToolRemoved, DiffToolChanged, true, classify.DefTool, true},
		{a.prompts, b.prompts, a.listed[1], b.listed[1], DiffPromptAdded, DiffPromptRemoved, DiffPromptChanged, false, classify.DefPrompt, true},
		{a.resources, b.resources, a.listed[2], b.listed[2], DiffResourceAdded, DiffResourceRemoved, DiffResourceChanged, false, 0, false},
	}
	for _, d := range defs {
		if d.definitions {
			for _, c := range classify.CompareDefinitions(d.kind, definitionsOf(d.a), definitionsOf(d.b)) {
				va, vb := d.a[c.Name], d.b[c.Name]
				switch {
				case c.Removed:
					if d.listedB {
						add(Difference{Kind: d.removed, Name: c.Name, LineA: va.line, Regression: d.removedIsRegression})
					}
				case c.Added:
					if d.listedA {
						add(Difference{Kind: d.added, Name: c.Name, LineB: vb.line})
					}
				default:
					if cs := inFields(ig.Diff(va.def, vb.def, sessions.MaxChanges), c.Fields); len(cs) > 0 {
						add(Difference{Kind: d.changed, Name: c.Name, LineA: va.line, LineB: vb.line, Changes: cs})
					}
				}
			}
			continue
		}
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
				if cs := ig.Diff(va.def, vb.def, sessions.MaxChanges); len(cs) > 0 {
					add(Difference{Kind: d.changed, Name: k, LineA: va.line, LineB: vb.line, Changes: cs})
				}
			}
		}
	}
	return out
}

func definitionsOf(m map[string]definition) classify.Definitions {
	d := make(classify.Definitions, len(m))
	for name, v := range m {
		d[name] = v.def
	}
	return d
}

// inFields keeps the changes at or under one of the top-level members
// fields.
func inFields(cs []sessions.Change, fields []string) []sessions.Change {
	out := cs[:0]
	for _, c := range cs {
		for _, f := range fields {
			if rest, ok := strings.CutPrefix(c.Path, "/"+f); ok && (rest == "" || rest[0] == '/') {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// compareLatency finds the groups of calls whose median latency shifted
// past both of opts' thresholds.
func compareLatency(a, b *summary, opts Options) []Difference {
	var out []Difference
	add := func(d Difference) { out = append(out, d) }
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
	return out
}

// compareFindings finds the finding codes of B that A has none of.
func compareFindings(a, b *summary) []Difference {
	var out []Difference
	add := func(d Difference) { out = append(out, d) }
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
	return out
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
