package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/tui"

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
	var report bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Show what rpctap finds, on an embedded recorded session",
		Long: `Opens the live view on a short recorded MCP session built into rpctap,
full of the problems rpctap finds. When stdout is not a terminal (or with
--report) it prints the report "rpctap check" gives instead.`,
		Args: takesArgs(0, 0, "", "rpctap demo"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if report || !isTerminal(os.Stdout) {
				return runCheck(bytes.NewReader(demoSession), cmd.OutOrStdout(), "-", checkOptions{timeout: 30e9, name: "the demo session (embedded)"})
			}
			path := filepath.Join(os.TempDir(), fmt.Sprintf("rpctap-demo-%d.jsonl", os.Getpid()))
			if err := os.WriteFile(path, demoSession, 0o600); err != nil {
				return err
			}
			defer os.Remove(path)
			src, err := tui.OpenFile(path, classify.DefaultTimeout)
			if err != nil {
				return err
			}
			return runUI([]*tui.Source{src})
		}}
	cmd.Flags().BoolVar(&report, "report", false, "print the check report instead of opening the live view")
	return cmd
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
