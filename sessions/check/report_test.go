package check_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions/check"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// hostileSession has findings of many codes, peer text that is a terminal
// escape, bidi override, XML and JSON markup, and a header fault.
const hostileSession = `{"rpctap":"session","version":1,"id":"h","started":"2026-11-29T18:00:00Z","framing":7,"profile":"mcp"}
{"t":1,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\"}}"}
{"t":2,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\u001b[31m\u202e</failure>]]>\"}"}
{"t":2,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":\"\\u202e\\u001b[2J\",\"method\":\"tools/call\\u001b[31m\\u202e</failure>\"}"}
{"t":3,"dir":"s2h","frame":"not json </testcase> \u001b]0;owned\u0007"}
{"t":4,"dir":"s2h","frame":"{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}"}
{"t":5,"dir":"h2s","frame":"[]"}
{"t":6,"dir":"s2h","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},\"error\":{\"code\":1,\"message\":\"x\"}}"}
{"t":7,"dir":"h2s","frame":"{\"jsonrpc\":\"1.0\",\"id\":{},\"method\":3}"}
not a record
{"t":99000000,"event":"exit","code":0}
`

func checkOf(t *testing.T, session string) *check.Report {
	t.Helper()
	rep, err := check.Run(strings.NewReader(session), check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// sarifSchema compiles the SARIF 2.1.0 schema kept in testdata.
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("../../testdata/schemas/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(check.SARIFSchema, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(check.SARIFSchema)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

type sarifLog struct {
	Schema string `json:"$schema"`
	Runs   []struct {
		Tool struct {
			Driver struct {
				Rules []struct {
					ID   string `json:"id"`
					Help struct {
						Text     string `json:"text"`
						Markdown string `json:"markdown"`
					} `json:"help"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex int    `json:"ruleIndex"`
			Level     string `json:"level"`
			Locations []struct {
				Physical struct {
					Artifact struct {
						URI string `json:"uri"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"results"`
	} `json:"runs"`
}

func TestSARIFOfEverySessionInTestdataValidatesAgainstTheSARIF210Schema(t *testing.T) {
	sch := sarifSchema(t)
	files, _ := filepath.Glob("../../testdata/sessions/*/*.jsonl")
	if len(files) < 10 {
		t.Fatalf("found %d session files in testdata", len(files))
	}
	inputs := map[string]string{"hostile": hostileSession}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		inputs[p] = string(b)
	}
	for name, session := range inputs {
		rep, err := check.Run(strings.NewReader(session), check.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var out bytes.Buffer
		if err := check.WriteSARIF(&out, check.File{Name: "sessions/a b.jsonl"}, rep); err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("%s: the SARIF is not JSON: %v\n%s", name, err, out.Bytes())
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s: the SARIF log does not validate: %v", name, err)
		}
	}
}

func TestSARIFHasARuleWithHelpPerFindingCodeAndEachResultAtItsLine(t *testing.T) {
	rep := checkOf(t, hostileSession)
	if len(rep.Findings) < 6 {
		t.Fatalf("the hostile session has %d findings", len(rep.Findings))
	}
	var out bytes.Buffer
	if err := check.WriteSARIF(&out, check.File{Name: "rec/s.jsonl"}, rep); err != nil {
		t.Fatal(err)
	}
	var log sarifLog
	if err := json.Unmarshal(out.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	rules := run.Tool.Driver.Rules
	if len(rules) != len(classify.Codes()) {
		t.Fatalf("%d rules, want one per finding code (%d)", len(rules), len(classify.Codes()))
	}
	for i, c := range classify.Codes() {
		if rules[i].ID != c.String() || !strings.Contains(rules[i].Help.Text, c.String()+": ") || len(rules[i].Help.Text) < len(c.String())+12 {
			t.Errorf("rule %d = %+v, want %s with its help", i, rules[i], c)
		}
	}
	if !strings.Contains(rules[0].Help.Markdown, "not one valid JSON value") {
		t.Errorf("not-json's help is %q, want the text of envelope.md", rules[0].Help.Markdown)
	}
	if len(run.Results) != len(rep.Findings) {
		t.Fatalf("%d results for %d findings", len(run.Results), len(rep.Findings))
	}
	levels := map[classify.Severity]string{classify.Error: "error", classify.Warn: "warning", classify.Info: "note"}
	for i, f := range rep.Findings {
		r := run.Results[i]
		loc := r.Locations[0].Physical
		if r.RuleID != f.Code.String() || rules[r.RuleIndex].ID != r.RuleID || loc.Region.StartLine != f.Line ||
			loc.Artifact.URI != "rec/s.jsonl" || r.Level != levels[f.Severity] {
			t.Errorf("result %d = %+v, want %s (%s) at rec/s.jsonl line %d", i, r, f.Code, f.Severity, f.Line)
		}
	}
	// Peer text is escaped: no string, as jq would decode it, holds a
	// terminal control or bidi character.
	var doc any
	json.Unmarshal(out.Bytes(), &doc)
	if s, ok := unsafeString(doc); ok {
		t.Errorf("the SARIF carries a peer's control characters: %q", s)
	}
}

// unsafeString finds a string in a decoded JSON value that holds a
// control character (other than newline) or a bidi override.
func unsafeString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f || r == '\u202e' }) {
			return v, true
		}
	case []any:
		for _, e := range v {
			if s, ok := unsafeString(e); ok {
				return s, ok
			}
		}
	case map[string]any:
		for _, e := range v {
			if s, ok := unsafeString(e); ok {
				return s, ok
			}
		}
	}
	return "", false
}

func TestEveryFindingCodeHasWhatEnvelopeMdSaysOfIt(t *testing.T) {
	rep := &check.Report{}
	var out bytes.Buffer
	check.WriteSARIF(&out, check.File{}, rep)
	var log sarifLog
	if err := json.Unmarshal(out.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	for _, r := range log.Runs[0].Tool.Driver.Rules {
		// "<code>: <when>. Severity: <severity>." with both parts said.
		when, sev, ok := strings.Cut(strings.TrimPrefix(r.Help.Text, r.ID+": "), ". Severity: ")
		if !ok || len(when) < 3 || len(sev) < 4 {
			t.Errorf("rule %s has no text from envelope.md: %q", r.ID, r.Help.Text)
		}
	}
}

type junitReport struct {
	XMLName xml.Name `xml:"testsuites"`
	Suites  []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitHasOneTestCasePerFindingCodeFailingAtFailOn(t *testing.T) {
	rep := checkOf(t, hostileSession)
	for _, failOn := range []classify.Severity{classify.Error, classify.Info} {
		var out bytes.Buffer
		if err := check.WriteJUnit(&out, check.File{Name: "s<&>.jsonl", FailOn: failOn}, rep); err != nil {
			t.Fatal(err)
		}
		var doc junitReport
		dec := xml.NewDecoder(bytes.NewReader(out.Bytes()))
		dec.Strict = true
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("the JUnit report is not XML: %v\n%s", err, out.Bytes())
		}
		if len(doc.Suites) != 1 {
			t.Fatalf("%d suites", len(doc.Suites))
		}
		s := doc.Suites[0]
		want := map[string]bool{"header": true}
		for _, c := range classify.Codes() {
			want[c.String()] = true
		}
		if len(s.Cases) != len(want) || s.Tests != len(want) {
			t.Errorf("%d test cases (tests=%d), want one per finding code and the header: %d", len(s.Cases), s.Tests, len(want))
		}
		worst := map[string]classify.Severity{}
		n := map[string]int{}
		for _, f := range rep.Findings {
			worst[f.Code.String()] = max(worst[f.Code.String()], f.Severity)
			n[f.Code.String()]++
		}
		failures := 0
		for _, c := range s.Cases {
			if !want[c.Name] {
				t.Errorf("test case %q names no finding code", c.Name)
			}
			delete(want, c.Name)
			shouldFail := n[c.Name] > 0 && worst[c.Name] >= failOn || c.Name == "header"
			if (c.Failure != nil) != shouldFail {
				t.Errorf("fail-on %s: test case %s failed=%v, want %v", failOn, c.Name, c.Failure != nil, shouldFail)
			}
			if c.Failure != nil {
				failures++
				if got := strings.Count(c.Failure.Text, "s<&>.jsonl:"); c.Name != "header" && got != n[c.Name] {
					t.Errorf("%s: the failure lists %d findings, want %d:\n%s", c.Name, got, n[c.Name], c.Failure.Text)
				}
			} else if n[c.Name] > 0 && strings.Count(c.SystemOut, "s<&>.jsonl:") != n[c.Name] {
				t.Errorf("%s: system-out lists the findings below fail-on: %q", c.Name, c.SystemOut)
			}
		}
		if s.Failures != failures {
			t.Errorf("the suite says %d failures, its cases %d", s.Failures, failures)
		}
		if bytes.Contains(out.Bytes(), []byte("\x1b")) || bytes.Contains(out.Bytes(), []byte("\u202e")) {
			t.Errorf("the JUnit report carries a peer's raw control characters")
		}
	}
}
