package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/sessions/export"
	"github.com/spf13/cobra"
)

type exportFlags struct {
	format, out, profile string
	maxFrames            int
	redact               []string
	noRedact             bool
	timeout              time.Duration
}

func newExportCmd() *cobra.Command {
	var f exportFlags
	cmd := &cobra.Command{
		Use:   "export FILE --format markdown|mermaid|html|json|har|otlp [-o OUT]",
		Short: "Write a recorded session as Markdown, Mermaid, HTML, JSON, HAR or OTLP JSON",
		Long: `Writes a session file in another format, to share it in an issue, a PR,
a trace backend or a CI report:

  markdown  a transcript: frames in fenced json blocks (long values cut,
            their full size said), findings under their frame, and a table
            of methods (count, errors, p50/p95/p99 latency)
  mermaid   a sequenceDiagram, an arrow a frame, notes for findings
  html      one self-contained page: search, collapsible JSON, findings,
            pairs with latency, a latency histogram
  json      every request with its answer, latency and findings, and
            per-method p50/p95/p99
  har       HAR 1.2, an entry per request and its answer
  otlp      OTLP JSON (as the OpenTelemetry file exporter writes it), a
            span per request, trace context from params._meta.traceparent

A diagram or a page is taken in whole by its reader, so mermaid and html
fold a long session: they show the first and last records (--max-frames,
200 and 2000 by default) and say how many were left out. The other
formats stream any length.

Secrets are masked as the tap masks them: values of this environment's
variables whose names look secret, and those named by --redact. Peer text
is escaped. OUT is written through a temporary file renamed over it, and
is never the session file itself; without -o the export goes to stdout.`,
		Args: takesArgs(1, 1, "one session file", "rpctap export SESSION.jsonl --format markdown -o session.md (rpctap ls lists recent sessions)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "markdown", "markdown, mermaid, html, json, har or otlp")
	fl.StringVarP(&f.out, "output", "o", "", "write to this file (through a temporary file and rename) instead of stdout")
	fl.IntVar(&f.maxFrames, "max-frames", 0, "records shown by markdown, mermaid and html: the first and last half of them (0: the format's default, -1: all)")
	fl.StringArrayVar(&f.redact, "redact", nil, "mask a secret: NAME (the value of env var NAME) or NAME=VALUE; repeatable")
	fl.BoolVar(&f.noRedact, "no-redact", false, "do not mask secret-looking environment values (the recording's own masking stays)")
	fl.StringVar(&f.profile, "profile", "auto", "rules to judge by: auto (the file's, else from the traffic), jsonrpc, mcp or lsp")
	fl.DurationVar(&f.timeout, "timeout", classify.DefaultTimeout, "how long a request may wait for its answer")
	return cmd
}

func runExport(stdout, stderr io.Writer, path string, f exportFlags) error {
	format, err := export.ParseFormat(f.format)
	if err != nil {
		return usageError(fmt.Errorf("%w (rpctap export FILE --format html -o session.html)", err))
	}
	if f.maxFrames < -1 {
		return usageError(fmt.Errorf("--max-frames takes a number of records, or -1 for all, not %d (rpctap export FILE --format html --max-frames 2000)", f.maxFrames))
	}
	if f.maxFrames != 0 && !format.Folds() {
		return usageError(fmt.Errorf("--max-frames applies to markdown, mermaid and html; %s writes every pair", format))
	}
	profile, err := classify.ParseProfile(f.profile)
	if err != nil {
		return usageError(err)
	}
	if path == "-" {
		return usageError(errors.New("export reads the session file twice (an index first, then the records), so it needs a file, not stdin: save it first, then rpctap export FILE"))
	}
	opts := export.Options{Format: format, MaxFrames: f.maxFrames, Profile: profile, Timeout: f.timeout, Source: path,
		Baseline: sessions.BaselineLookup(func(msg string) { fmt.Fprintln(os.Stderr, "rpctap:", msg) })}
	if !f.noRedact {
		if opts.Redactor, err = sessions.NewRedactor(os.Environ(), f.redact); err != nil {
			return usageError(err)
		}
	}
	name := classify.EscapeString(path, 200)
	res, err := export.File(path, f.out, stdout, opts)
	switch {
	case errors.Is(err, export.ErrSameFile):
		return exitError{code: 2, msg: fmt.Sprintf("cannot export %s over itself: give -o another file (rpctap export %s --format %s -o session.%s)", name, name, format, extension(format))}
	case errors.Is(err, sessions.ErrNoRecords):
		return exitError{code: 2, msg: fmt.Sprintf("cannot export %s: no line is a session header or record; give the path of a session rpctap run recorded (rpctap ls lists them)", name)}
	case errors.Is(err, os.ErrNotExist):
		return exitError{code: 2, msg: fmt.Sprintf("cannot export %s: there is no such file (rpctap ls lists recent sessions)", name)}
	case err != nil:
		return exitError{code: 2, msg: fmt.Sprintf("cannot export %s: %s", name, plainFileError(err))}
	}
	if res.Skipped > 0 {
		fmt.Fprintf(stderr, "rpctap export: %s of %s could not be read (%s) and left out; rpctap check %s names them\n",
			plural(res.Skipped, "line"), name, humanSize(res.SkippedBytes), name)
	}
	if res.Folded() {
		fmt.Fprintf(stderr, "rpctap export: %s cannot stream a session of any length, so it shows %d of %d records (the first and last) and says where it left the rest out; --max-frames N shows more, -1 all\n",
			format, res.Shown, res.Records)
	}
	return nil
}

func extension(f export.Format) string { return f.Extension() }
