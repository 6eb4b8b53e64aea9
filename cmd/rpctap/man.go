package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write a man page for each command into DIR",
		Long: `Writes rpctap.1, rpctap-run.1 and one page for each other command, made
from the same text as --help, into DIR (made when missing).`,
		Example: `  rpctap man ~/.local/share/man/man1 && man rpctap-wrap
  rpctap man /tmp/man && man -l /tmp/man/rpctap.1`,
		Args: takesArgs(1, 1, "the directory to write the pages into", "rpctap man ~/.local/share/man/man1"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return fmt.Errorf("cannot make the directory for the man pages: %w", err)
			}
			first, _, _ := strings.Cut(versionText(), "\n")
			header := &doc.GenManHeader{Title: "RPCTAP", Section: "1", Source: first, Manual: "rpctap manual"}
			if err := doc.GenManTree(cmd.Root(), header, args[0]); err != nil {
				return fmt.Errorf("writing the man pages: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Wrote the man pages into %s.\n", args[0])
			return nil
		},
	}
}
