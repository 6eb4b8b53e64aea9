package main

import (
	"github.com/rpctap/rpctap/source"
	"github.com/spf13/cobra"
)

func newUICmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ui [TARGET...]",
		Short: "Open the live view: live taps and recorded sessions",
		Long: `With no TARGET, lists live taps and recent sessions to open. A TARGET is a
session file (opened read-only, also while a tap still writes it) or a live
tap (its name, pid or socket). q quits the view; live taps keep running.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var srcs []*source.Source
			for _, a := range args {
				src, err := source.Open(a)
				if err != nil {
					return err
				}
				srcs = append(srcs, src)
			}
			return runUI(srcs)
		},
	}
}
