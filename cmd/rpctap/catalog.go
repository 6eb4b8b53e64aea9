package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/sessions"
	"github.com/spf13/cobra"
)

func newCatalogCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "catalog [--json]",
		Short: "List the edge-case catalog: frames to inject and what a strict peer must do with each",
		Long: `Lists the entries of the edge-case catalog, each with the direction it
makes sense in (h2s: to the server; s2h: to the host; either) and one line
saying what a strict receiver must do with it. Send one with:
rpctap inject --catalog NAME`,
		Args: takesArgs(0, 0, "", "rpctap catalog (to send one: rpctap inject --catalog NAME)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			list := inject.List()
			if asJSON {
				return sessions.PrintJSON(cmd.OutOrStdout(), list, true)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tDIR\tRULE")
			for _, e := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Name, e.Dir, e.Rule)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts, with each entry's frame and finding codes")
	return cmd
}
