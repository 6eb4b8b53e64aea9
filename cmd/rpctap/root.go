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
		// Flags the user's config file sets, unless given (config.go).
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return applyUserConfig(cmd) },
		Version:           versionText(),
		DisableAutoGenTag: true,
	}
	root.SetVersionTemplate("{{.Version}}")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newClassifyCmd(), newCheckCmd(), newDemoCmd(), newDemoServerCmd(), newRunCmd(), newHTTPCmd(), newLsCmd(), newInjectCmd(), newCatalogCmd(), newExportCmd(), newUICmd(), newWatchCmd(), newTailCmd(), newSessionsCmd(), newReplayCmd(), newDiffCmd(), newBaselineCmd())
	root.AddCommand(newWrapCmd(), newUnwrapCmd(), newConfigCmd(), newVersionCmd(), newManCmd())
	// Made now rather than at Execute, so that they get examples too.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	addExamples(root)
	return root
}
