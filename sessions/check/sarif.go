package check

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/rpctap/rpctap/classify"
)

// SARIFSchema is the URI of the SARIF 2.1.0 schema that WriteSARIF's
// documents name.
const SARIFSchema = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// File names the session file a report is about, for the formats
// that locate findings in it.
type File struct {
	// Name is the path as the user gave it ("" or "-" for stdin).
	Name string
	// FailOn is the lowest severity that fails the check (0: none does);
	// JUnit reports such findings as failures.
	FailOn classify.Severity
	// FailOnUser says the user's own findings (Finding.ByUser) fail
	// the check as the peers' do; otherwise they never do, and SARIF
	// reports them suppressed.
	FailOnUser bool
}

// fails reports whether finding f fails the check.
func (file File) fails(f *Finding) bool {
	return file.FailOn != 0 && f.Severity >= file.FailOn && (!f.ByUser || file.FailOnUser)
}

// uri is the file's name as a SARIF artifact URI: relative paths stay
// relative (code-scanning views resolve them against the checkout),
// absolute ones become file URIs.
func (f File) uri() string {
	if f.Name == "" || f.Name == "-" {
		return "stdin"
	}
	p := filepath.ToSlash(f.Name)
	if filepath.IsAbs(f.Name) {
		return (&url.URL{Scheme: "file", Path: p}).String()
	}
	return (&url.URL{Path: p}).String()
}

type sarifText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRule struct {
	ID               string    `json:"id"`
	Name             string    `json:"name"`
	ShortDescription sarifText `json:"shortDescription"`
	FullDescription  sarifText `json:"fullDescription"`
	Help             sarifText `json:"help"`
	Default          struct {
		Level string `json:"level"`
	} `json:"defaultConfiguration"`
}

type sarifLocation struct {
	Physical struct {
		Artifact struct {
			URI   string `json:"uri"`
			Index int    `json:"index"`
		} `json:"artifactLocation"`
		Region struct {
			StartLine int `json:"startLine"`
		} `json:"region"`
	} `json:"physicalLocation"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Level     string          `json:"level"`
	Message   sarifText       `json:"message"`
	Locations []sarifLocation `json:"locations"`
	Related   []sarifRelated  `json:"relatedLocations,omitempty"`
	// Suppressions mark the user's own findings, which are not the
	// peers' to fix (code-scanning views hide them).
	Suppressions []sarifSuppression `json:"suppressions,omitempty"`
	Props        *sarifProps        `json:"properties,omitempty"`
}

type sarifSuppression struct {
	Kind          string `json:"kind"`
	Justification string `json:"justification"`
}

type sarifRelated struct {
	ID int `json:"id"`
	sarifLocation
	Message sarifText `json:"message"`
}

// sarifProps carry what the session file says of the frame. Peer text
// in them (id, method, frame) is escaped for a terminal.
type sarifProps struct {
	Dir    string `json:"dir,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Member *int   `json:"member,omitempty"`
	ID     string `json:"id,omitempty"`
	Method string `json:"method,omitempty"`
	Frame  string `json:"frame,omitempty"`
	// Fate says what became of the frame in the tap (sessions.Fate.AppendJSON);
	// ByUser that the finding is the user's own, not a peer's.
	Fate   json.RawMessage `json:"fate,omitempty"`
	ByUser bool            `json:"byUser,omitempty"`
}

// sarifLevel is a severity as SARIF names it.
func sarifLevel(s classify.Severity) string {
	switch s {
	case classify.Error:
		return "error"
	case classify.Warn:
		return "warning"
	}
	return "note"
}

// defaultLevel is a code's usual severity, the first word of what the
// doc says of it ("warn in jsonrpc; error in mcp" is a warning).
func defaultLevel(severity string) string {
	word, _, _ := strings.Cut(severity, " ")
	switch word {
	case "error":
		return "error"
	case "warn":
		return "warning"
	}
	return "note"
}

func skippedText(n int) string {
	if n == 1 {
		return "skipped 1 line that is no session record"
	}
	return fmt.Sprintf("skipped %d lines that are no session record", n)
}

// plainText drops Markdown's code quotes.
func plainText(md string) string { return strings.ReplaceAll(md, "`", "") }

// sarifRules is one rule for every finding code, in code order (a
// result's ruleIndex is its code's place here).
func sarifRules() ([]sarifRule, map[classify.Code]int) {
	var rules []sarifRule
	index := map[classify.Code]int{}
	for _, c := range classify.Codes() {
		name := c.String()
		txt := ruleText[name]
		r := sarifRule{ID: name, Name: ruleName(name)}
		r.ShortDescription.Text = plainText(txt.when)
		r.FullDescription.Text = plainText(txt.when) + ". Severity: " + plainText(txt.severity) + "."
		r.Help = sarifText{
			Text:     fmt.Sprintf("%s: %s. Severity: %s.", name, plainText(txt.when), plainText(txt.severity)),
			Markdown: fmt.Sprintf("**`%s`**: %s.\n\nSeverity: %s.", name, txt.when, txt.severity),
		}
		r.Default.Level = defaultLevel(txt.severity)
		index[c] = len(rules)
		rules = append(rules, r)
	}
	return rules, index
}

// ruleName is a code in the PascalCase SARIF viewers show as a rule's
// name: not-json becomes NotJson.
func ruleName(code string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(code, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// WriteSARIF writes rep as a SARIF 2.1.0 log: one run of rpctap, a rule
// for every finding code (with what envelope.md says of it as its help),
// and a result for every finding, located at its line of the session
// file. Header faults and skipped lines are notifications of the run's
// invocation. The log is written result by result: its memory does not
// grow with the report. Everything is valid UTF-8, with control, bidi and
// format characters written as \u escapes.
func WriteSARIF(w io.Writer, f File, rep *Report) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	rules, index := sarifRules()
	uri := f.uri()

	type notification struct {
		Level   string    `json:"level"`
		Message sarifText `json:"message"`
	}
	var notes []notification
	for _, h := range rep.HeaderFaults {
		notes = append(notes, notification{Level: "error", Message: sarifText{Text: "line 1: " + h}})
	}
	if rep.Skipped > 0 {
		notes = append(notes, notification{Level: "warning", Message: sarifText{Text: skippedText(rep.Skipped)}})
	}
	head := struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
	}{SARIFSchema, "2.1.0"}
	var tool struct {
		Driver struct {
			Name           string      `json:"name"`
			InformationURI string      `json:"informationUri"`
			Rules          []sarifRule `json:"rules"`
		} `json:"driver"`
	}
	tool.Driver.Name = "rpctap"
	tool.Driver.InformationURI = "https://github.com/rpctap/rpctap"
	tool.Driver.Rules = rules
	invocation := []struct {
		Successful    bool           `json:"executionSuccessful"`
		Notifications []notification `json:"toolExecutionNotifications,omitempty"`
		Properties    map[string]any `json:"properties"`
	}{{Successful: true, Notifications: notes, Properties: map[string]any{"frames": rep.Frames, "profile": rep.Profile.String(), "skippedLines": rep.Skipped}}}
	artifacts := []struct {
		Location struct {
			URI string `json:"uri"`
		} `json:"location"`
	}{{}}
	artifacts[0].Location.URI = uri

	var buf []byte
	put := func(s string) { bw.WriteString(s) }
	value := func(v any) error {
		js, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf = classify.AppendSafeJSON(buf[:0], js)
		bw.Write(buf)
		return nil
	}
	hb, err := json.Marshal(head)
	if err != nil {
		return err
	}
	put(string(hb[:len(hb)-1]))
	put(`,"runs":[{"tool":`)
	if err := value(tool); err != nil {
		return err
	}
	put(`,"invocations":`)
	if err := value(invocation); err != nil {
		return err
	}
	put(`,"artifacts":`)
	if err := value(artifacts); err != nil {
		return err
	}
	put(`,"results":[`)
	for i, cf := range rep.Findings {
		if i > 0 {
			put(",\n")
		} else {
			put("\n")
		}
		if err := value(sarifResultOf(cf, index[cf.Code], uri, f.FailOnUser)); err != nil {
			return err
		}
	}
	put("\n]}]}\n")
	return bw.Flush()
}

// sarifResultOf is the result of finding cf, whose rule is at index in
// the rules, in the session file at uri; a finding of the user's own is
// suppressed unless failOnUser.
func sarifResultOf(cf Finding, index int, uri string, failOnUser bool) sarifResult {
	r := sarifResult{RuleID: cf.Code.String(), RuleIndex: index, Level: sarifLevel(cf.Severity),
		Message: sarifText{Text: cf.Message}, Locations: []sarifLocation{sarifLocationOf(uri, cf.Line)}}
	if cf.Related > 0 {
		r.Related = []sarifRelated{{ID: 1, sarifLocation: sarifLocationOf(uri, cf.Related), Message: sarifText{Text: "the frame this finding links to"}}}
	}
	p := sarifProps{ID: classify.EscapeString(cf.ID, 200), Method: classify.EscapeString(cf.Method, 200), Frame: cf.Frame, ByUser: cf.ByUser}
	p.Dir, p.Kind, p.Member = cf.Place()
	if !cf.Fate.IsZero() {
		p.Fate = cf.Fate.AppendJSON(nil)
	}
	if p.Dir != "" || p.Kind != "" || p.Member != nil || p.ID != "" || p.Method != "" || p.Frame != "" || p.Fate != nil || p.ByUser {
		r.Props = &p
	}
	if cf.ByUser && !failOnUser {
		r.Suppressions = []sarifSuppression{{Kind: "external", Justification: "about a frame the user injected or edited in rpctap, or its answer: not a peer's fault"}}
	}
	return r
}

// sarifLocationOf is line of the session file at uri.
func sarifLocationOf(uri string, line int) sarifLocation {
	var l sarifLocation
	l.Physical.Artifact.URI = uri
	l.Physical.Region.StartLine = max(line, 1)
	return l
}
