package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
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
	failOn         classify.Severity // 0: no severity fails
	failOnCodes    []classify.Code   // findings of these codes fail too, whatever their severity
	noBaseline     bool              // judge no list against a baseline
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
		Use:   "check [--format text|json|junit|sarif] [--profile P] [--timeout D] [--fail-on error|warn|info|none|drift|CODE,...] FILE|-",
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

When a baseline was accepted for the session's MCP server (rpctap
baseline accept), the tools, prompts and resource templates it lists are
judged against it: each change is a tool-drift finding (--no-baseline
judges none).

--fail-on takes a severity (a finding at or above it fails), finding
codes (a finding of one of them fails, whatever its severity), or both,
separated by commas: --fail-on error,drift fails on errors and on any
drift, --fail-on drift on drift alone. drift is short for tool-drift.

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
			if o.failOn, o.failOnCodes, err = parseFailOn(failOn); err != nil {
				return usageError(err)
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
	cmd.Flags().StringVar(&failOn, "fail-on", "error", "exit 1 when a finding at or above this severity exists (error, warn, info or none), or one of these codes (drift, or any finding code); a comma-separated list")
	cmd.Flags().BoolVar(&o.noBaseline, "no-baseline", false, "judge no list against the baseline accepted for the server (rpctap baseline)")
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
	copts := check.Options{Profile: o.profile, Timeout: o.timeout, MethodTimeouts: o.methodTimeouts}
	if !o.noBaseline {
		copts.Baseline = sessions.BaselineLookup(func(msg string) { fmt.Fprintln(os.Stderr, "rpctap:", msg) })
	}
	rep, err := check.Run(bufio.NewReaderSize(in, 1<<20), copts)
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
		check.WriteJSON(w, name, rep, o.failOnInjected)
	case "junit":
		err = check.WriteJUnit(w, file, rep)
	case "sarif":
		err = check.WriteSARIF(w, file, rep)
	default:
		check.WriteText(w, name, rep, o.failOnInjected)
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
	for _, f := range rep.Findings {
		if (!f.ByUser || o.failOnInjected) && slices.Contains(o.failOnCodes, f.Code) {
			return exitError{code: 1}
		}
	}
	return nil
}

// parseFailOn reads --fail-on: a severity, finding codes, or both, in a
// comma-separated list ("none" alone fails on nothing).
func parseFailOn(v string) (classify.Severity, []classify.Code, error) {
	var sev classify.Severity
	var codes []classify.Code
	sevGiven := false
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "drift" {
			item = classify.CodeToolDrift.String()
		}
		if item == "none" {
			sevGiven = true
			continue
		}
		if s, ok := classify.ParseSeverity(item); ok {
			if sevGiven && sev != 0 {
				return 0, nil, fmt.Errorf("--fail-on %q names two severities: give one (the lowest that should fail), e.g. --fail-on warn,drift", v)
			}
			sev, sevGiven = s, true
			continue
		}
		c, ok := classify.ParseCode(item)
		if !ok {
			return 0, nil, fmt.Errorf("unknown --fail-on %q: use error, warn, info or none, drift, or a finding code (docs/findings.md lists the codes), e.g. --fail-on error,drift", classify.EscapeString(item, 60))
		}
		codes = append(codes, c)
	}
	return sev, codes, nil
}

// notSession says why a file with no session record cannot be checked.
func notSession(name string, rep *check.Report) string {
	if rep.Skipped == 0 {
		return fmt.Sprintf("cannot check %s: it is empty, so it is no session file; give the path of one that rpctap run recorded (rpctap ls lists them)", name)
	}
	return fmt.Sprintf("cannot check %s: it is not a session file rpctap recorded (no line is a session header or record: %s); give the path of one (rpctap ls lists them)", name, check.LineList(rep.SkippedLines, rep.Skipped))
}

// plural is sessions.Count: "1 frame", "3 frames".
func plural(n int, noun string) string { return sessions.Count(n, noun) }

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
