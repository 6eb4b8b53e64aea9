package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// exitError asks main to exit with code after printing msg (when not empty).
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string { return e.msg }

func asExit(err error, target *exitError) bool { return errors.As(err, target) }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "rpctap",
		Short:         "Watch and inject JSON-RPC traffic on a process's stdio",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          unknownCommand,

		SuggestionsMinimumDistance: 2,
		RunE:                       func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newClassifyCmd(), newCheckCmd(), newDemoCmd(), newRunCmd(), newLsCmd(), newInjectCmd(), newCatalogCmd(), newUICmd(), newWatchCmd(), newTailCmd(), newReplayCmd(), newDiffCmd())
	return root
}
