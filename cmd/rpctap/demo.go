package main

import (
	"bytes"
	_ "embed"

	"github.com/spf13/cobra"
)

// demoSession is a short recorded MCP session with the problems rpctap
// exists to find: stdout pollution, a leaky error, an opaque error, an
// unmatched response, an invalid request refused with no id, unsafe text
// and a request that never got its answer.
//
//go:embed demo/session.jsonl
var demoSession []byte

func newDemoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Show what rpctap finds, on an embedded recorded session",
		Long: `Judges a short recorded MCP session that is built into rpctap and prints
the report "rpctap check" gives: every frame finding and session finding,
with the line it is about.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCheck(bytes.NewReader(demoSession), cmd.OutOrStdout(), "-", checkOptions{timeout: 30e9, name: "the demo session (embedded)"})
		},
	}
}
