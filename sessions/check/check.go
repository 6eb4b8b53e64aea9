// Package check judges a session file as rpctap check does: it runs the
// envelope reader and the tracker over the recording, streaming, and
// reports each finding with its line and what became of its frame in the
// tap (Run, Report). The user's own frames (injected, edited) are judged
// apart from the peers'. A Report is written as rpctap check's text
// (WriteText) or JSON (WriteJSON), as JUnit XML (WriteJUnit) or as SARIF
// 2.1.0 (WriteSARIF), which names each finding code's rule.
package check

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// Options configure Run.
type Options struct {
	// Profile judges the session; Auto takes the header's profile, and
	// when that is auto too, decides from the traffic.
	Profile classify.Profile
	// Timeout for requests (0: the header's timeout_ms, else
	// classify.DefaultTimeout).
	Timeout time.Duration
	// MethodTimeouts override Timeout per method.
	MethodTimeouts map[string]time.Duration
	// Baseline, when not nil, gives the baseline accepted for an MCP
	// server by its name (see classify.TrackerOptions.Baseline).
	Baseline func(server string) *classify.Baseline
}

// A Finding is one finding about one line of a session file.
type Finding struct {
	Line     int
	Code     classify.Code
	Severity classify.Severity
	Message  string
	Dir      classify.Direction
	Kind     classify.Kind
	// Member is the index of the batch member the finding is about, or -1.
	Member int
	// ID is the frame's id as on the wire ("" when it has none).
	ID     string
	Method string
	// Related is the line of the frame the finding links to, or 0.
	Related int
	// Frame is the start of the frame, escaped for a terminal.
	Frame string
	// Fate is what became of the frame in the tap (injected, held,
	// dropped, …), as its record says; zero for a peer's frame that
	// reached its receiver.
	Fate sessions.Fate
	// ByUser says the finding is the user's, not a peer's: it is about a
	// frame the user wrote (injected, or edited while held), or links to
	// one (the error that answers an injected frame, the request an
	// injected cancellation names). It does not count in Worst.
	ByUser bool
}

// Place names where in its frame f is, for reports: the direction and
// kind ("" when unknown) and the batch member's index (nil when none).
func (f Finding) Place() (dir, kind string, member *int) {
	if f.Dir != 0 {
		dir = f.Dir.String()
	}
	if f.Kind != 0 {
		kind = f.Kind.String()
	}
	if f.Member >= 0 {
		m := f.Member
		member = &m
	}
	return dir, kind, member
}

// A Report is what Run found.
type Report struct {
	Findings []Finding
	// Frames counts frame records judged (h2s and s2h).
	Frames int
	// Skipped counts lines the reader could not read, and SkippedLines
	// are their numbers (the first 1,000 of them).
	Skipped      int
	SkippedLines []int
	SkippedBytes int64 // the bytes the skipped lines held
	// HeaderFaults says what is wrong with the header, if anything.
	HeaderFaults []string
	// Profile is the profile the session was judged by in the end.
	Profile classify.Profile
	// Server is the name the MCP server gave in its serverInfo, or "";
	// Listed holds the latest complete list of each kind of definitions
	// it listed (what rpctap baseline accept keeps).
	Server string
	Listed [3]classify.Definitions
}

// Count returns how many of the peers' findings have severity s (those
// that are the user's apart).
func (r *Report) Count(s classify.Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == s && !f.ByUser {
			n++
		}
	}
	return n
}

// Worst is the highest severity of the peers' findings, or 0: the user's
// own findings (Finding.ByUser) are apart, see WorstByUser.
func (r *Report) Worst() classify.Severity {
	var w classify.Severity
	for _, f := range r.Findings {
		if !f.ByUser {
			w = max(w, f.Severity)
		}
	}
	return w
}

// WorstByUser is the highest severity of the user's own findings, or 0.
func (r *Report) WorstByUser() classify.Severity {
	var w classify.Severity
	for _, f := range r.Findings {
		if f.ByUser {
			w = max(w, f.Severity)
		}
	}
	return w
}

// previewLen bounds the escaped frame text kept for a finding.
const previewLen = 160

// maxPreviews bounds the previews kept for frames that may still get a
// finding (requests in flight, frames owed an answer).
const maxPreviews = 200_000

// Run runs the envelope reader and the tracker over a session file,
// streaming: memory does not grow with the file, only with the findings.
// Timeouts are judged by the recording's own timestamps.
func Run(r io.Reader, opts Options) (*Report, error) {
	rd := sessions.NewReader(r)
	rep := &Report{}
	c := checker{rep: rep, previews: map[int64]preview{}}

	profile := opts.Profile
	hdr, hasHeader := rd.Header()
	records := 0
	var framing classify.Framing
	var err error
	if framing, err = classify.ParseFraming(hdr.FramingOrDefault()); err != nil || framing == classify.FramingAuto {
		framing = classify.FramingNDJSON
	}
	if profile == classify.Auto {
		if p, err := classify.ParseProfile(hdr.ProfileOrDefault()); err == nil {
			profile = p
		}
	}
	// Frames may say otherwise (an auto session records its framing per
	// direction only through the header); LSP framing shows in a header.
	tr := classify.NewTracker(classify.TrackerOptions{
		Profile:        profile,
		LSPFraming:     framing == classify.FramingLSP,
		Timeout:        hdr.TimeoutOr(opts.Timeout),
		MethodTimeouts: opts.MethodTimeouts,
		Baseline:       opts.Baseline,
	})
	c.tr = tr
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the session file: %w", err)
		}
		records++
		at := time.Duration(ev.T) * time.Microsecond
		if ev.Kind == sessions.EventNote && ev.Text == sessions.NoteFramingLSP {
			tr.UseLSPFraming()
		}
		if !ev.IsFrame() || ev.Dir == classify.Err {
			switch ev.Kind {
			case sessions.EventExit:
				c.sessionFindings(tr.End(at), nil, nil) // what is still owed stays unanswered
			case sessions.EventGap:
				// What the missing frames may have held is not judged.
				c.gapFindings(tr.Gap(int64(ev.Line), ev.Dir, ev.Missing, at), ev)
			default:
				c.sessionFindings(tr.Advance(at), nil, nil)
			}
			continue
		}
		rep.Frames++
		m := sessions.ClassifyRecord(&hdr, ev, tr.Profile(), &c.full)
		fate := sessions.FateOf(ev)
		if fate.ByUser() {
			c.user.Add(int64(ev.Line))
		}
		obs := tr.ObserveDelivery(int64(ev.Line), at, &m, fate.Delivery())
		c.frameFindings(ev, &m)
		c.keepPreview(ev, &m)
		c.sessionFindings(obs.Findings, ev, &m)
		for _, p := range obs.Pairs {
			if pv, ok := c.previews[p.Request]; ok && !pv.flagged {
				delete(c.previews, p.Request)
			}
		}
		if ev.EOF {
			c.sessionFindings(tr.OutputClosed(ev.Dir, at), nil, nil) // its sender answers nothing more
		}
	}
	rep.Skipped, rep.SkippedLines, rep.HeaderFaults = rd.Skipped(), rd.SkippedLines(), rd.HeaderFaults()
	rep.SkippedBytes = rd.SkippedBytes()
	rep.Profile = tr.Profile()
	rep.Server, rep.Listed = tr.Server(), tr.Listed()
	if !hasHeader && records == 0 {
		return rep, sessions.ErrNoRecords
	}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if f.Frame == "" {
			if pv, ok := c.previews[int64(f.Line)]; ok {
				f.Frame, f.Dir, f.Kind, f.ID, f.Method = pv.text, pv.dir, pv.kind, pv.id, pv.method
			}
		}
	}
	sort.SliceStable(rep.Findings, func(i, j int) bool { return rep.Findings[i].Line < rep.Findings[j].Line })
	return rep, nil
}

type preview struct {
	text    string
	dir     classify.Direction
	kind    classify.Kind
	id      string
	method  string
	fate    sessions.Fate // with an edit's original, when it has one
	flagged bool
}

type checker struct {
	rep *Report
	tr  *classify.Tracker
	// previews hold what a finding says of a frame that may still get
	// one (a request in flight, a frame owed an answer), until it cannot.
	previews map[int64]preview
	// user are the lines of the frames the user wrote, for the findings
	// that link to one whatever its age.
	user sessions.UserLines
	full []byte
}

func (c *checker) frameFindings(ev *sessions.Event, m *classify.Message) {
	var fate sessions.Fate
	kept := false
	add := func(mm *classify.Message, member int) {
		for _, f := range mm.Findings {
			if !kept {
				fate, kept = keptFate(ev), true
			}
			c.rep.Findings = append(c.rep.Findings, c.finding(ev, fate, f, mm, member, 0))
		}
	}
	add(m, -1)
	for i := range m.Members {
		add(&m.Members[i], i)
	}
}

// finding is a finding about the frame just read, ev (m, or one of its
// members), whose fate is fate (keptFate), that links to line related (0:
// none).
func (c *checker) finding(ev *sessions.Event, fate sessions.Fate, f classify.Finding, m *classify.Message, member int, related int64) Finding {
	cf := Finding{Line: ev.Line, Code: f.Code, Severity: f.Severity, Message: f.Message, Dir: m.Dir, Kind: m.Kind, Member: member,
		Frame: classify.Escape(ev.Frame, previewLen), Related: int(related), Fate: fate}
	if m.HasID() {
		cf.ID = string(m.ID().Raw)
	}
	cf.Method = m.Method()
	cf.ByUser = sessions.FindingByUser(int64(ev.Line), related, c.user.Has)
	return cf
}

// keptFate is the fate of the frame ev, to keep past the next record: an
// edit's original is copied, as the reader reuses its bytes.
func keptFate(ev *sessions.Event) sessions.Fate {
	fate := sessions.FateOf(ev)
	fate.Original = bytes.Clone(fate.Original)
	return fate
}

// keepPreview holds the text of frames that may get a finding later.
func (c *checker) keepPreview(ev *sessions.Event, m *classify.Message) {
	later := m.Kind == classify.KindRequest || m.Kind == classify.KindBatch || m.Answer != nil
	if !later || len(c.previews) >= maxPreviews {
		return
	}
	pv := preview{text: classify.Escape(ev.Frame, previewLen), dir: m.Dir, kind: m.Kind, method: m.Method(), fate: keptFate(ev), flagged: len(m.Findings) > 0}
	if m.HasID() {
		pv.id = string(m.ID().Raw)
	}
	c.previews[int64(ev.Line)] = pv
}

// gapFindings adds the tracker's findings at the gap record ev: the one
// about the gap names the direction whose frames are missing.
func (c *checker) gapFindings(fs []classify.SessionFinding, ev *sessions.Event) {
	n := len(c.rep.Findings)
	c.sessionFindings(fs, nil, nil)
	for i := n; i < len(c.rep.Findings); i++ {
		if f := &c.rep.Findings[i]; f.Line == ev.Line {
			f.Dir = ev.Dir
		}
	}
}

// sessionFindings adds the tracker's findings; those about the frame just
// read (ev, m) take its details now, others from the kept previews at the end.
func (c *checker) sessionFindings(fs []classify.SessionFinding, ev *sessions.Event, m *classify.Message) {
	for _, f := range fs {
		cf := Finding{Line: int(f.Seq), Code: f.Code, Severity: f.Severity, Message: f.Message, Member: -1, Related: int(f.Related),
			ByUser: sessions.FindingByUser(f.Seq, f.Related, c.user.Has)}
		if ev != nil && int64(ev.Line) == f.Seq {
			cf = c.finding(ev, keptFate(ev), f.Finding, m, -1, f.Related)
		} else if pv, ok := c.previews[f.Seq]; ok {
			cf.Frame, cf.Dir, cf.Kind, cf.ID, cf.Method, cf.Fate = pv.text, pv.dir, pv.kind, pv.id, pv.method, pv.fate
		}
		c.rep.Findings = append(c.rep.Findings, cf)
		if pv, ok := c.previews[f.Seq]; ok {
			pv.flagged = true
			c.previews[f.Seq] = pv
		}
	}
}
