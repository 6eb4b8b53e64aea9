package check

import (
	"encoding/json"
	"io"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

type jsonFinding struct {
	Code     string          `json:"code"`
	Severity string          `json:"severity"`
	Line     int             `json:"line"`
	Message  string          `json:"message"`
	Dir      string          `json:"dir,omitempty"`
	Kind     string          `json:"kind,omitempty"`
	Member   *int            `json:"member,omitempty"`
	ID       json.RawMessage `json:"id,omitempty"`
	Method   string          `json:"method,omitempty"`
	Related  int             `json:"related,omitempty"`
	// Fate says what became of the frame in the tap, when anything did
	// (sessions.Fate.AppendJSON); ByUser that the finding is the user's.
	Fate   json.RawMessage `json:"fate,omitempty"`
	ByUser bool            `json:"by_user,omitempty"`
}

type jsonReport struct {
	File    string `json:"file"`
	Profile string `json:"profile"`
	Frames  int    `json:"frames"`
	Skipped int    `json:"skipped_lines"`
	// SkippedBytes is what the skipped lines held.
	SkippedBytes int64 `json:"skipped_bytes"`
	// SkippedAt are the numbers of the skipped lines (the first 1,000).
	SkippedAt    []int         `json:"skipped_line_numbers"`
	HeaderFaults []string      `json:"header_faults"`
	Findings     []jsonFinding `json:"findings"`
	// Counts are the peers' findings; ByUser the user's own, which fail
	// the check only with --fail-on-injected (FailOnByUser).
	Counts       jsonCounts `json:"counts"`
	ByUser       jsonCounts `json:"by_user"`
	FailOnByUser bool       `json:"fail_on_by_user"`
}

type jsonCounts struct {
	Error  int            `json:"error"`
	Warn   int            `json:"warn"`
	Info   int            `json:"info"`
	ByCode map[string]int `json:"by_code"`
}

// WriteJSON writes rep as rpctap check's JSON report on the session called
// name: one indented document, through sessions.PrintJSON; failOnUser
// says whether the user's own findings count toward --fail-on. Errors
// of w are w's to keep, as for WriteText.
func WriteJSON(w io.Writer, name string, rep *Report, failOnUser bool) {
	doc := jsonReport{File: name, Profile: rep.Profile.String(), Frames: rep.Frames, Skipped: rep.Skipped, SkippedBytes: rep.SkippedBytes,
		SkippedAt: rep.SkippedLines, HeaderFaults: rep.HeaderFaults, Findings: []jsonFinding{}, Counts: counts(rep, false),
		ByUser: counts(rep, true), FailOnByUser: failOnUser}
	if doc.SkippedAt == nil {
		doc.SkippedAt = []int{}
	}
	if doc.HeaderFaults == nil {
		doc.HeaderFaults = []string{}
	}
	for _, f := range rep.Findings {
		jf := jsonFinding{Code: f.Code.String(), Severity: f.Severity.String(), Line: f.Line, Message: f.Message,
			Method: f.Method, Related: f.Related, ByUser: f.ByUser}
		if !f.Fate.IsZero() {
			jf.Fate = f.Fate.AppendJSON(nil)
		}
		jf.Dir, jf.Kind, jf.Member = f.Place()
		if f.ID != "" {
			if json.Valid([]byte(f.ID)) {
				jf.ID = json.RawMessage(f.ID)
			} else {
				q, _ := json.Marshal(f.ID)
				jf.ID = q
			}
		}
		doc.Findings = append(doc.Findings, jf)
	}
	sessions.PrintJSON(w, doc, true)
}

// counts sums up the peers' findings, or with byUser the user's own.
func counts(rep *Report, byUser bool) jsonCounts {
	c := jsonCounts{ByCode: map[string]int{}}
	for _, f := range rep.Findings {
		if f.ByUser != byUser {
			continue
		}
		switch f.Severity {
		case classify.Error:
			c.Error++
		case classify.Warn:
			c.Warn++
		case classify.Info:
			c.Info++
		}
		c.ByCode[f.Code.String()]++
	}
	return c
}
