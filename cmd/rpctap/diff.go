package main

import (
	"fmt"
	"time"

	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/sessions/diff"
	"github.com/spf13/cobra"
)

type diffOptions struct {
	exitCode, json bool
	ignore         []string
	threshold      time.Duration
	ratio          float64
}

func newDiffCmd() *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff A B [--exit-code] [--json]",
		Short: "Compare two recorded sessions of the same kind of conversation",
		Long: `Compares session B with session A: methods used, and (for MCP) tools,
prompts and resources added, removed or changed (descriptions, input
schemas; removed only when B listed them, added only when A did); calls
made in one session only, made with other arguments, or whose answer
changed. Calls are paired as replay matches them: by method and what they
name (a tool, prompt, resource, document), then by the closest params,
with ids, "_meta" and --ignore paths left out. Also latency shifts of a
group of calls (a method, or one tool, prompt or resource) past both
--duration-threshold and --duration-ratio, leaving out what waited for the
server to start; findings in B of a code A has none of. A multi
round-trip call (MCP 2026-07-28: answered input_required, then retried)
is one call: its final answer is compared, its latency runs from its
first request, and other rounds in B are "rounds changed", no regression.

Exit status: with --exit-code, 1 when B has a regression (a tool B listed
without it, a result changed or removed in part, a result that became an
error, a new error finding, a call slower past the thresholds), else 0;
2 when a file cannot be read. An error that became a result is a fix, a
result that only gained members is not a regression, nor is a call made
in one session only or with other arguments.`,
		Args: takesArgs(2, 2, "two session files", "rpctap diff before.jsonl after.jsonl (rpctap ls lists recent sessions)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ig, err := sessions.ParseIgnore(o.ignore)
			if err != nil {
				return usageError(err)
			}
			if o.ratio < 1 {
				return usageError(fmt.Errorf("--duration-ratio must be at least 1 (2 means twice as slow), not %g", o.ratio))
			}
			rep, err := diff.Files(args[0], args[1], diff.Options{Ignore: ig, DurationThreshold: o.threshold, DurationRatio: o.ratio})
			if err != nil {
				return exitError{code: 2, msg: plainFileError(err) + sessionFileHint(err)}
			}
			if o.json {
				diff.WriteJSON(cmd.OutOrStdout(), args[0], args[1], rep)
			} else {
				diff.WriteText(cmd.OutOrStdout(), args[0], args[1], rep)
			}
			if o.exitCode && rep.Regressions() > 0 {
				return exitError{code: 1}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.exitCode, "exit-code", false, "exit 1 when B has a regression")
	f.BoolVar(&o.json, "json", false, "print the report as one JSON document")
	f.StringArrayVar(&o.ignore, "ignore", nil, "a JSON pointer from the message's root to leave out of comparisons, as in /result/content/0/text (a segment * matches anything); repeatable")
	f.DurationVar(&o.threshold, "duration-threshold", 100*time.Millisecond, "report a latency shift of at least this much (and --duration-ratio)")
	f.Float64Var(&o.ratio, "duration-ratio", 2, "report a latency shift of at least this factor (and --duration-threshold)")
	return cmd
}
