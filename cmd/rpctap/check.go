package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/sessions/check"
	"github.com/spf13/cobra"
)

type checkOptions struct {
	format         string // text, json, junit or sarif
	profile        classify.Profile
	timeout        time.Duration
	failOn         classify.Severity // 0: never fail
	name           string            // what to call stdin in the report
	methodTimeouts map[string]time.Duration
	// failOnInjected counts the user's own findings (about frames the
	// user injected or edited) toward --fail-on too.
	failOnInjected bool
}

func newCheckCmd() *cobra.Command {
	var o checkOptions
	var profile, failOn string
	var methodTimeouts []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check [--format text|json|junit|sarif] [--profile P] [--timeout D] [--fail-on error|warn|info|none] FILE|-",
		Short: "Judge a recorded session and report every finding with its line",
		Long: `Runs the envelope reader and the session tracker over a session file
(or stdin with -) and reports every finding with the 1-based line of the
session file it is about. Timeouts are judged by the recording's own
timestamps.

--format json prints one JSON document (--json is the same); junit a JUnit
XML report with one test case per finding code, for CI test views; sarif
a SARIF 2.1.0 log with a rule per finding code and each finding located
at its line of the session file, for code-scanning views.

A finding about a frame you wrote (injected, or edited while the tap held
it), or one that links to such a frame, is yours, not a peer's: it is
reported apart and does not fail the check unless --fail-on-injected is
given. A frame you dropped or answered in its receiver's place never
reached the receiver, which owes it nothing (no timeout, no
unanswered-at-end). Each finding says what became of its frame in the
tap (injected, captured, held, edited with the original, dropped,
answered in place, expired).

Lines that are not records are skipped and named by their line numbers;
faults of the header line (a field of the wrong type, a format version
this rpctap does not read) are reported and count as errors.

Exit status: 1 when a finding at or above --fail-on exists, 0 otherwise,
2 when the file cannot be read or holds no session record at all (an
empty file, binary data, a plain JSON-RPC log).`,
		Args: takesArgs(1, 1, "one session file (or - for stdin)", "rpctap check SESSION.jsonl (rpctap ls lists recent sessions)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if asJSON {
				if cmd.Flags().Changed("format") && o.format != "json" {
					return usageError(fmt.Errorf("--json asks for --format json, but --format %s was given too: give one of them", o.format))
				}
				o.format = "json"
			}
			switch o.format {
			case "text", "json", "junit", "sarif":
			default:
				return usageError(fmt.Errorf("unknown --format %q: use text, json, junit or sarif", o.format))
			}
			if o.profile, err = classify.ParseProfile(profile); err != nil {
				return usageError(err)
			}
			switch failOn {
			case "none":
				o.failOn = 0
			default:
				sev, ok := classify.ParseSeverity(failOn)
				if !ok {
					return usageError(fmt.Errorf("unknown --fail-on %q: use error, warn, info or none", failOn))
				}
				o.failOn = sev
			}
			if o.methodTimeouts, err = parseMethodTimeouts(methodTimeouts); err != nil {
				return usageError(err)
			}
			return runCheck(cmd.InOrStdin(), cmd.OutOrStdout(), args[0], o)
		},
	}
	cmd.Flags().StringVar(&o.format, "format", "text", "how to report: text, json, junit (JUnit XML) or sarif (SARIF 2.1.0)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "the same as --format json")
	cmd.Flags().StringVar(&profile, "profile", "auto", "rules to judge by: auto (the file's, else from the traffic), jsonrpc, mcp or lsp")
	cmd.Flags().DurationVar(&o.timeout, "timeout", 0, "how long a request may wait for its answer (default: the session's own, else 30s)")
	methodTimeoutFlag(cmd.Flags(), &methodTimeouts)
	cmd.Flags().StringVar(&failOn, "fail-on", "error", "exit 1 when a finding at or above this severity exists: error, warn, info or none")
	cmd.Flags().BoolVar(&o.failOnInjected, "fail-on-injected", false, "findings about frames you injected or edited fail the check too (by default they are reported apart)")
	return cmd
}

func runCheck(stdin io.Reader, stdout io.Writer, path string, o checkOptions) error {
	in := stdin
	name := "stdin"
	if o.name != "" {
		name = o.name
	}
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return exitError{code: 2, msg: "cannot check: " + plainFileError(err) + sessionFileHint(err)}
		}
		defer f.Close()
		in = f
		name = path
	}
	rep, err := check.Run(bufio.NewReaderSize(in, 1<<20), check.Options{Profile: o.profile, Timeout: o.timeout, MethodTimeouts: o.methodTimeouts})
	if errors.Is(err, sessions.ErrNoRecords) {
		return exitError{code: 2, msg: notSession(classify.EscapeString(name, 200), rep) + frameLogHint(path)}
	}
	if err != nil {
		return exitError{code: 2, msg: "cannot check: " + plainFileError(err)}
	}
	w := bufio.NewWriter(stdout)
	file := check.File{Name: path, FailOn: o.failOn, FailOnUser: o.failOnInjected}
	if path == "-" {
		file.Name = name
	}
	switch o.format {
	case "json":
		writeCheckJSON(w, name, rep, o.failOnInjected)
	case "junit":
		err = check.WriteJUnit(w, file, rep)
	case "sarif":
		err = check.WriteSARIF(w, file, rep)
	default:
		writeCheckText(w, name, rep, o.failOnInjected)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	worst := rep.Worst()
	if o.failOnInjected {
		worst = max(worst, rep.WorstByUser())
	}
	if o.failOn != 0 && (worst >= o.failOn || len(rep.HeaderFaults) > 0) {
		return exitError{code: 1}
	}
	return nil
}

// notSession says why a file with no session record cannot be checked.
func notSession(name string, rep *check.Report) string {
	if rep.Skipped == 0 {
		return fmt.Sprintf("cannot check %s: it is empty, so it is no session file; give the path of one that rpctap run recorded (rpctap ls lists them)", name)
	}
	return fmt.Sprintf("cannot check %s: it is not a session file rpctap recorded (no line is a session header or record: %s); give the path of one (rpctap ls lists them)", name, lineList(rep.SkippedLines, rep.Skipped))
}

// lineList names line numbers for people: "line 4", "lines 4, 7–9 and 12",
// at most 20 runs of them, then how many more there are of total.
func lineList(lines []int, total int) string {
	var runs []string
	shown := 0
	for i := 0; i < len(lines) && len(runs) < 20; {
		j := i
		for j+1 < len(lines) && lines[j+1] == lines[j]+1 {
			j++
		}
		switch {
		case j == i:
			runs = append(runs, strconv.Itoa(lines[i]))
		case j == i+1:
			runs = append(runs, strconv.Itoa(lines[i]), strconv.Itoa(lines[j]))
		default:
			runs = append(runs, fmt.Sprintf("%d–%d", lines[i], lines[j]))
		}
		shown += j - i + 1
		i = j + 1
	}
	word := "lines "
	if total == 1 {
		word = "line "
	}
	if more := total - shown; more > 0 {
		return word + strings.Join(runs, ", ") + fmt.Sprintf(" and %d more", more)
	}
	if len(runs) == 1 {
		return word + runs[0]
	}
	return word + strings.Join(runs[:len(runs)-1], ", ") + " and " + runs[len(runs)-1]
}

type checkJSONFinding struct {
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

type checkJSON struct {
	File    string `json:"file"`
	Profile string `json:"profile"`
	Frames  int    `json:"frames"`
	Skipped int    `json:"skipped_lines"`
	// SkippedBytes is what the skipped lines held.
	SkippedBytes int64 `json:"skipped_bytes"`
	// SkippedAt are the numbers of the skipped lines (the first 1,000).
	SkippedAt    []int              `json:"skipped_line_numbers"`
	HeaderFaults []string           `json:"header_faults"`
	Findings     []checkJSONFinding `json:"findings"`
	// Counts are the peers' findings; ByUser the user's own, which fail
	// the check only with --fail-on-injected (FailOnByUser).
	Counts       checkCounts `json:"counts"`
	ByUser       checkCounts `json:"by_user"`
	FailOnByUser bool        `json:"fail_on_by_user"`
}

type checkCounts struct {
	Error  int            `json:"error"`
	Warn   int            `json:"warn"`
	Info   int            `json:"info"`
	ByCode map[string]int `json:"by_code"`
}

func writeCheckJSON(w io.Writer, name string, rep *check.Report, failOnUser bool) {
	doc := checkJSON{File: name, Profile: rep.Profile.String(), Frames: rep.Frames, Skipped: rep.Skipped, SkippedBytes: rep.SkippedBytes,
		SkippedAt: rep.SkippedLines, HeaderFaults: rep.HeaderFaults, Findings: []checkJSONFinding{}, Counts: counts(rep, false),
		ByUser: counts(rep, true), FailOnByUser: failOnUser}
	if doc.SkippedAt == nil {
		doc.SkippedAt = []int{}
	}
	if doc.HeaderFaults == nil {
		doc.HeaderFaults = []string{}
	}
	for _, f := range rep.Findings {
		jf := checkJSONFinding{Code: f.Code.String(), Severity: f.Severity.String(), Line: f.Line, Message: f.Message,
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
func counts(rep *check.Report, byUser bool) checkCounts {
	c := checkCounts{ByCode: map[string]int{}}
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

func writeCheckText(w io.Writer, name string, rep *check.Report, failOnUser bool) {
	c, mine := counts(rep, false), counts(rep, true)
	fmt.Fprintf(w, "%s: %s judged as %s: %s, %s, %s", classify.EscapeString(name, 200), plural(rep.Frames, "frame"), rep.Profile,
		plural(c.Error, "error"), plural(c.Warn, "warning"), plural(c.Info, "note"))
	if n := mine.Error + mine.Warn + mine.Info; n > 0 {
		fmt.Fprintf(w, "; %s about frames you injected or edited, apart", plural(n, "finding"))
	}
	if len(rep.HeaderFaults) > 0 {
		fmt.Fprintf(w, "; %s in the header", plural(len(rep.HeaderFaults), "fault"))
	}
	if rep.Skipped > 0 {
		fmt.Fprintf(w, "; skipped %s it could not read: %s (%s)", plural(rep.Skipped, "line"), lineList(rep.SkippedLines, rep.Skipped), humanSize(rep.SkippedBytes))
	}
	fmt.Fprintln(w)
	if len(rep.HeaderFaults) > 0 {
		fmt.Fprintf(w, "\nHEADER (%d)\n", len(rep.HeaderFaults))
		for _, f := range rep.HeaderFaults {
			fmt.Fprintf(w, "  line 1  %s\n", f)
		}
	}
	for _, sev := range []classify.Severity{classify.Error, classify.Warn, classify.Info} {
		var group []check.Finding
		for _, f := range rep.Findings {
			if f.Severity == sev && !f.ByUser {
				group = append(group, f)
			}
		}
		if len(group) == 0 {
			continue
		}
		sort.SliceStable(group, func(i, j int) bool { return group[i].Line < group[j].Line })
		fmt.Fprintf(w, "\n%s (%d)\n", strings.ToUpper(sev.String()), len(group))
		writeCheckFindings(w, group, false)
	}
	var yours []check.Finding
	for _, f := range rep.Findings {
		if f.ByUser {
			yours = append(yours, f)
		}
	}
	if len(yours) > 0 {
		fails := "they do not fail the check (--fail-on-injected makes them)"
		if failOnUser {
			fails = "they count toward --fail-on (--fail-on-injected)"
		}
		fmt.Fprintf(w, "\nYOURS (%d): about frames you injected or edited, or their answers; %s\n", len(yours), fails)
		writeCheckFindings(w, yours, true)
	}
}

// writeCheckFindings lists findings for the text report, each with where
// it is, its message, its frame and what became of the frame in the tap;
// withSeverity names each one's severity (a group of mixed ones).
func writeCheckFindings(w io.Writer, group []check.Finding, withSeverity bool) {
	for _, f := range group {
		var where []string
		if f.Dir != 0 {
			where = append(where, f.Dir.String())
		}
		if f.Kind != 0 {
			where = append(where, f.Kind.String())
		}
		if f.Member >= 0 {
			where = append(where, fmt.Sprintf("member %d", f.Member))
		}
		if f.ID != "" {
			where = append(where, "id "+classify.EscapeString(f.ID, 60))
		}
		if f.Method != "" {
			where = append(where, classify.EscapeString(f.Method, 80))
		}
		code := f.Code.String()
		if withSeverity {
			code = f.Severity.String() + " " + code
		}
		fmt.Fprintf(w, "  line %d  %s  [%s]\n", f.Line, code, strings.Join(where, " "))
		fmt.Fprintf(w, "      %s", f.Message)
		if f.Related != 0 {
			fmt.Fprintf(w, " (see line %d)", f.Related)
		}
		fmt.Fprintln(w)
		if f.Frame != "" {
			fmt.Fprintf(w, "      %s\n", f.Frame)
		}
		if !f.Fate.IsZero() {
			fmt.Fprintf(w, "      fate: %s\n", f.Fate.Text())
			if f.Fate.Original != nil {
				fmt.Fprintf(w, "      original: %s\n", classify.Escape(f.Fate.Original, 160))
			}
		}
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// frameLogHint is what to add to the word that path is no session file
// when its first line is a JSON-RPC message: it is a plain log of frames,
// which rpctap classify judges one by one.
func frameLogHint(path string) string {
	if path == "-" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, _ := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	switch classify.Classify(bytes.TrimSpace(line), classify.H2S, classify.Auto).Kind {
	case classify.KindRequest, classify.KindNotification, classify.KindResponse, classify.KindBatch, classify.KindInvalid:
		return fmt.Sprintf("; it reads as a plain log of JSON-RPC frames: to judge each one, type rpctap classify < %s", shellQuote(path))
	}
	return ""
}
