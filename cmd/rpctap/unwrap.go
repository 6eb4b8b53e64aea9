package main

import (
	"github.com/spf13/cobra"
)

func newUnwrapCmd() *cobra.Command {
	var o wrapOptions
	cmd := &cobra.Command{
		Use:   "unwrap HOST SERVER",
		Short: "Make a host launch a wrapped MCP server directly again",
		Long: `Undoes "rpctap wrap HOST SERVER": the entry's command and args are the
server's own again, and the rest of the file is left as it is.`,
		Example: `  rpctap unwrap claude-desktop everything --dry-run
  rpctap unwrap cursor memory --config ./.cursor/mcp.json`,
		Args: takesArgs(2, 2, "a host and one of its servers", "rpctap unwrap claude-desktop everything"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return rewrite(cmd.OutOrStdout(), args[0], args[1], o, false)
		},
	}
	cmd.Flags().StringVar(&o.config, "config", "", "the host's config file, when it is not in its usual place")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print the change as a diff and leave the file alone")
	scopeFlag(cmd.Flags(), &o.scope)
	cmd.ValidArgsFunction = completeHostServer
	return cmd
}
