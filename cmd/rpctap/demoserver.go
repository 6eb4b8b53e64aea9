package main

import (
	"os"

	"github.com/rpctap/rpctap/internal/demo"

	"github.com/spf13/cobra"
)

// newDemoServerCmd is the demo's server, which rpctap demo starts behind
// its tap. It is hidden: it is a part of the demo, not a tool.
func newDemoServerCmd() *cobra.Command {
	var server string
	var lsp bool
	cmd := &cobra.Command{
		Use:    "demo-server [--server strict|lenient] [--lsp]",
		Short:  "The demo's embedded server (rpctap demo starts it)",
		Hidden: true,
		Args:   takesArgs(0, 0, "", "rpctap demo-server --server strict"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return demo.Serve(cmd.InOrStdin(), cmd.OutOrStdout(), demo.ServerOptions{Lenient: server == "lenient", LSP: lsp, Secret: os.Getenv(demoSecretVar)})
		}}
	cmd.Flags().StringVar(&server, "server", "strict", "strict or lenient")
	cmd.Flags().BoolVar(&lsp, "lsp", false, "LSP framing and methods")
	return cmd
}
