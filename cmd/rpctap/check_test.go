package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

var update = flag.Bool("update", false, "rewrite .want files from what check reports now")

type checkDoc struct {
	Frames   int            `json:"frames"`
	Skipped  int            `json:"skipped_lines"`
	Findings []checkFinding `json:"findings"`
	Counts   map[string]any `json:"counts"`
}

type checkFinding struct {
	Code     string          `json:"code"`
	Severity string          `json:"severity"`
	Line     int             `json:"line"`
	Message  string          `json:"message"`
	ID       json.RawMessage `json:"id"`
	Related  int             `json:"related"`
	ByUser   bool            `json:"by_user"`
}

func checkJSONOf(t *testing.T, path string, o checkOptions) (checkDoc, error) {
	t.Helper()
	o.format = "json"
	var out bytes.Buffer
	err := runCheck(nil, &out, path, o)
	var doc checkDoc
	if jerr := json.Unmarshal(out.Bytes(), &doc); jerr != nil {
		t.Fatalf("check --json printed no JSON document: %v\n%s", jerr, out.Bytes())
	}
	return doc, err
}

// Each conversation in testdata/sessions/conversations has a .want file
// listing the findings rpctap check --json must report: "LINE CODE SEVERITY"
// (and "-> LINE" when the finding links to another frame), sorted.
func TestCheckConversationsReportEveryTrackerFinding(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/sessions/conversations/*.jsonl")
	if len(files) == 0 {
		t.Fatal("no conversations")
	}
	seen := map[string]bool{}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			doc, _ := checkJSONOf(t, path, checkOptions{failOn: 0, timeout: 30e9})
			var got []string
			for _, f := range doc.Findings {
				l := fmt.Sprintf("%d %s %s", f.Line, f.Code, f.Severity)
				if f.Related != 0 {
					l += fmt.Sprintf(" -> %d", f.Related)
				}
				got = append(got, l)
				seen[f.Code] = true
			}
			sort.Strings(got)
			wantPath := strings.TrimSuffix(path, ".jsonl") + ".want"
			if *update {
				os.WriteFile(wantPath, []byte(strings.Join(got, "\n")+"\n"), 0o644)
				return
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := strings.Join(got, "\n")+"\n", string(want); g != w {
				t.Errorf("findings\n--- got\n%s--- want\n%s", g, w)
			}
		})
	}
	if *update {
		return
	}
	for _, code := range []string{"unmatched-response", "duplicate-response", "late-response", "error-names-no-request",
		"id-reused", "timeout", "unanswered-at-end", "cancelled", "before-initialize", "unanswered-invalid", "bad-header", "redacted", "frames-missing"} {
		if !seen[code] {
			t.Errorf("no conversation exercises %s", code)
		}
	}
}

// Sessions recorded from real peers (see testdata/peers/README.md) carry no
// error finding, and only the warn and info findings real traffic has,
// named here.
func TestCheckRealSessionsHaveNoErrorsAndOnlyTheirKnownWarnings(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/sessions/real/*.jsonl")
	if len(files) < 7 {
		t.Fatalf("expected the seven real recordings, found %d", len(files))
	}
	// server-everything answers the Go client's server/discover with a
	// bare "Method not found" and no data: opaque, but true to the wire.
	// It asks the host for roots/list, which neither the inspector nor
	// the Go client answers before they end the session: the request is
	// still owed when the server exits.
	expected := map[string]string{
		"gosdk-client-everything.jsonl":             "4 opaque-error info,16 unanswered-at-end warn",
		"inspector-everything-prompts-list.jsonl":   "12 unanswered-at-end warn",
		"inspector-everything-resources-list.jsonl": "12 unanswered-at-end warn",
		"inspector-everything-tools-call.jsonl":     "14 unanswered-at-end warn",
		"inspector-everything-tools-list.jsonl":     "12 unanswered-at-end warn",
	}
	for _, path := range files {
		doc, err := checkJSONOf(t, path, checkOptions{failOn: 3, timeout: 30e9})
		if err != nil {
			t.Errorf("%s: check failed: %v", path, err)
		}
		if doc.Frames < 8 {
			t.Errorf("%s: only %d frames", path, doc.Frames)
		}
		var got []string
		for _, f := range doc.Findings {
			got = append(got, fmt.Sprintf("%d %s %s", f.Line, f.Code, f.Severity))
		}
		if g, w := strings.Join(got, ","), expected[filepath.Base(path)]; g != w {
			t.Errorf("%s: findings %q, want %q", filepath.Base(path), g, w)
		}
	}
}

func TestCheckExitStatusFollowsFailOn(t *testing.T) {
	const path = "../../testdata/sessions/conversations/late-response-and-timeout.jsonl" // warnings only
	cases := []struct {
		failOn checkOptions
		code   int
	}{
		{checkOptions{failOn: 3}, 0}, // error
		{checkOptions{failOn: 2}, 1}, // warn
		{checkOptions{failOn: 1}, 1}, // info
		{checkOptions{failOn: 0}, 0}, // none
	}
	for _, c := range cases {
		c.failOn.timeout = 30e9
		var out bytes.Buffer
		err := runCheck(nil, &out, path, c.failOn)
		code := 0
		var ex exitError
		if errors.As(err, &ex) {
			code = ex.code
		}
		if code != c.code {
			t.Errorf("fail-on %v: exit %d, want %d", c.failOn.failOn, code, c.code)
		}
	}
	err := runCheck(nil, &bytes.Buffer{}, "no/such/file.jsonl", checkOptions{failOn: 3})
	var ex exitError
	if !errors.As(err, &ex) || ex.code != 2 || !strings.Contains(ex.msg, "cannot check: there is no file no/such/file.jsonl") {
		t.Errorf("a missing file: %v", err)
	}
}

func TestCheckTimeoutFlagChangesTheVerdict(t *testing.T) {
	const path = "../../testdata/sessions/conversations/late-response-and-timeout.jsonl"
	doc, _ := checkJSONOf(t, path, checkOptions{timeout: 60e9})
	for _, f := range doc.Findings {
		if f.Code == "timeout" || f.Code == "late-response" {
			t.Errorf("with --timeout 60s the 40 s answer is in time, got %s on line %d", f.Code, f.Line)
		}
	}
}

func TestCheckTextShowsPeerTextEscaped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "evil.jsonl")
	os.WriteFile(path, []byte(`{"t":1,"dir":"s2h","frame":"\u001b[2J\u001b]52;c;SGk=\u0007 not json \u202e"}`+"\n"), 0o600)
	var out bytes.Buffer
	runCheck(nil, &out, path, checkOptions{failOn: 0})
	if strings.ContainsAny(out.String(), "\x1b\x07\u202e") {
		t.Errorf("raw control characters reached the report:\n%q", out.String())
	}
	if !strings.Contains(out.String(), `\x1b[2J`) {
		t.Errorf("the frame is not shown escaped:\n%s", out.String())
	}
}

// A check of a file that is not a session (an empty file, binary junk, a
// plain JSON-RPC log) fails with exit status 2 and a sentence, instead of
// passing with "0 frames".
func TestCheckOfAFileThatIsNotASessionExitsTwo(t *testing.T) {
	dir := t.TempDir()
	junk := make([]byte, 4096)
	for i := range junk {
		junk[i] = byte(i*7 + i/13)
	}
	for _, c := range []struct {
		name, data, says string
	}{
		{"empty", "", "it is empty"},
		{"blank lines", "\n\n  \n", "it is empty"},
		{"binary junk", string(junk), "not a session file"},
		{"a plain JSON-RPC log", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n", "lines 1 and 2); give the path of one (rpctap ls lists them); it reads as a plain log of JSON-RPC frames: to judge each one, type rpctap classify < "},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		os.WriteFile(path, []byte(c.data), 0o600)
		for _, format := range []string{"text", "json", "sarif", "junit"} {
			var out bytes.Buffer
			err := runCheck(nil, &out, path, checkOptions{failOn: classify.Error, format: format})
			var ex exitError
			if !errors.As(err, &ex) || ex.code != 2 || !strings.Contains(ex.msg, c.says) || !strings.Contains(ex.msg, "rpctap ls") {
				t.Errorf("%s (format %s): %v; want exit 2 saying %q and where to find sessions", c.name, format, err, c.says)
			}
		}
	}
}

// The lines check skips are named by their numbers, in the text and in
// --json, and a header with fields of the wrong type or a version this
// rpctap does not read is reported and fails the check.
func TestCheckNamesSkippedLinesAndHeaderFaults(t *testing.T) {
	dir := t.TempDir()
	const frame = `{"t":1,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}"}` + "\n"
	good := `{"rpctap":"session","version":1,"id":"a","started":"2026-01-01T00:00:00.000000Z","argv":["x"],"name":"x","framing":"ndjson","profile":"auto"}` + "\n"
	path := filepath.Join(dir, "s.jsonl")
	os.WriteFile(path, []byte(good+frame+"junk\n"+frame+"{\"t\":2,\"dir\":\n"+"more junk\n"+frame), 0o600)
	var out bytes.Buffer
	if err := runCheck(nil, &out, path, checkOptions{failOn: classify.Error}); err != nil {
		t.Errorf("a good header and skipped lines: %v; skipped lines alone do not fail the check", err)
	}
	if !strings.Contains(out.String(), "skipped 3 lines it could not read: lines 3, 5 and 6") {
		t.Errorf("the text report does not name the skipped lines:\n%s", out.String())
	}
	var doc struct {
		Skipped   int      `json:"skipped_lines"`
		SkippedAt []int    `json:"skipped_line_numbers"`
		Faults    []string `json:"header_faults"`
	}
	out.Reset()
	runCheck(nil, &out, path, checkOptions{format: "json"})
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Skipped != 3 || fmt.Sprint(doc.SkippedAt) != "[3 5 6]" || doc.Faults == nil || len(doc.Faults) != 0 {
		t.Errorf("--json: %+v (%v); want 3 skipped lines at [3 5 6] and no header faults", doc, err)
	}

	for _, c := range []struct{ header, says string }{
		{`{"rpctap":"session","version":-1,"id":"a","started":"2026-01-01T00:00:00Z"}`, "format version -1"},
		{`{"rpctap":"session","version":"1","id":"a"}`, `"version" is a string; it must be an integer`},
		{`{"rpctap":"session","version":1,"id":7,"argv":"x","started":"2026-01-01T00:00:00Z"}`, `"argv" is a string; it must be an array of strings`},
		{`{"rpctap":"session","version":1,"id":"a","started":5}`, `"started" is a number`},
		{`{"rpctap":"session","version":1,"id":"a","framing":"smoke signals"}`, "framing is not one rpctap knows"},
	} {
		os.WriteFile(path, []byte(c.header+"\n"+frame), 0o600)
		out.Reset()
		err := runCheck(nil, &out, path, checkOptions{failOn: classify.Error})
		var ex exitError
		if !errors.As(err, &ex) || ex.code != 1 || !strings.Contains(out.String(), "HEADER (") || !strings.Contains(out.String(), c.says) {
			t.Errorf("header %s: %v\n%s\nwant exit 1 and a header fault saying %q", c.header, err, out.String(), c.says)
		}
		// The summary line says it too, so the exit status 1 of a report
		// with no error finding is explained where it is first read.
		if first, _, _ := strings.Cut(out.String(), "\n"); !strings.Contains(first, "1 frame judged") || !strings.Contains(first, " in the header") {
			t.Errorf("header %s: the summary %q does not count the header's faults", c.header, first)
		}
		out.Reset()
		runCheck(nil, &out, path, checkOptions{format: "json"})
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Faults) == 0 || !strings.Contains(strings.Join(doc.Faults, "\n"), c.says) {
			t.Errorf("header %s: --json header_faults %q (%v); want one saying %q", c.header, doc.Faults, err, c.says)
		}
		if strings.Contains(out.String(), "smoke") {
			t.Errorf("a fault repeats the header's text: %s", out.String())
		}
	}
}

// The --format flag of check picks the report; --json stays as --format
// json, and asking for two different formats is refused.
func TestCheckFormatFlagPicksTheReportAndJSONStaysAnAlias(t *testing.T) {
	const path = "../../testdata/sessions/conversations/unmatched-response.jsonl"
	for _, c := range []struct {
		args []string
		want string // how the report starts, or the usage error
	}{
		{[]string{"--format", "text"}, "../../testdata"},
		{[]string{"--json"}, "{\n"},
		{[]string{"--format", "json"}, "{\n"},
		{[]string{"--json", "--format", "json"}, "{\n"},
		{[]string{"--format", "sarif"}, `{"$schema":`},
		{[]string{"--format", "junit"}, `<?xml version="1.0"`},
		{[]string{"--json", "--format", "sarif"}, "give one of them"},
		{[]string{"--format", "xml"}, "use text, json, junit or sarif"},
	} {
		var out bytes.Buffer
		root := newRootCmd()
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append(append([]string{"check", "--fail-on", "none"}, c.args...), path))
		err := root.Execute()
		got := out.String()
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, c.want) && !strings.Contains(got, c.want) {
			t.Errorf("check %v: %.80q, want %q", c.args, got, c.want)
		}
	}
}

// Findings about frames the user injected (and the error that answers
// one) are the user's: reported apart, in every format, with the frame's
// fate, and they fail the check only with --fail-on-injected.
func TestCheckReportsTheUsersOwnFindingsApart(t *testing.T) {
	const path = "../../testdata/sessions/fates/user-actions.jsonl"
	var text bytes.Buffer
	if err := runCheck(nil, &text, path, checkOptions{failOn: classify.Error}); err != nil {
		t.Errorf("the user's own error failed the check: %v", err)
	}
	for _, want := range []string{"0 errors, 1 warning, 0 notes; 2 findings about frames you injected or edited, apart",
		"YOURS (2)", "line 14  error bad-id", "fate: injected by the user", "line 16  unanswered-at-end"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, text.String())
		}
	}
	var exit exitError
	if err := runCheck(nil, io.Discard, path, checkOptions{failOn: classify.Error, failOnInjected: true}); !errors.As(err, &exit) || exit.code != 1 {
		t.Errorf("with --fail-on-injected: %v, want exit 1", err)
	}
	var js bytes.Buffer
	runCheck(nil, &js, path, checkOptions{format: "json", failOn: classify.Error})
	var doc struct {
		Findings []struct {
			Line   int  `json:"line"`
			ByUser bool `json:"by_user"`
			Fate   *struct {
				Words []string `json:"words"`
			} `json:"fate"`
		} `json:"findings"`
		Counts struct {
			Error int `json:"error"`
		} `json:"counts"`
		ByUser struct {
			Error int `json:"error"`
		} `json:"by_user"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Counts.Error != 0 || doc.ByUser.Error != 1 {
		t.Errorf("counts %+v, the user's %+v", doc.Counts, doc.ByUser)
	}
	for _, f := range doc.Findings {
		if f.Line == 14 && (!f.ByUser || f.Fate == nil || strings.Join(f.Fate.Words, " ") != "injected") {
			t.Errorf("the injected frame's finding: %+v", f)
		}
	}
	for format, want := range map[string]string{"sarif": `"suppressions":[{"kind":"external"`, "junit": "(yours: about a frame you injected or edited)"} {
		var out bytes.Buffer
		runCheck(nil, &out, path, checkOptions{format: format, failOn: classify.Error})
		if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), "injected by the user") {
			t.Errorf("the %s report lacks %q or the fate:\n%s", format, want, out.String())
		}
	}
}

// --fail-on takes a severity, finding codes (drift for tool-drift), or
// both; two severities or an unknown word are refused with an example.
func TestFailOnTakesASeverityAndFindingCodes(t *testing.T) {
	for _, tc := range []struct {
		in    string
		sev   classify.Severity
		codes string
		bad   string
	}{
		{"error", classify.Error, "", ""},
		{"none", 0, "", ""},
		{"drift", 0, "tool-drift", ""},
		{"warn, drift,timeout", classify.Warn, "tool-drift timeout", ""},
		{"warn,error", 0, "", "names two severities"},
		{"drfit", 0, "", `unknown --fail-on "drfit"`},
	} {
		sev, codes, err := parseFailOn(tc.in)
		var names []string
		for _, c := range codes {
			names = append(names, c.String())
		}
		switch {
		case tc.bad != "":
			if err == nil || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), "e.g. --fail-on") {
				t.Errorf("--fail-on %s: error %v, want one saying %q with an example", tc.in, err, tc.bad)
			}
		case err != nil || sev != tc.sev || strings.Join(names, " ") != tc.codes:
			t.Errorf("--fail-on %s: %v %q %v; want %v %q", tc.in, sev, names, err, tc.sev, tc.codes)
		}
	}
}
