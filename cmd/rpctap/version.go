package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// versionText says which rpctap this is, from the build info the Go
// toolchain writes into the binary: the module's version and, for a
// build from a checkout, the commit it was built from.
func versionText() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "rpctap (no build information)\n" + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	}
	return buildText(info, runtime.GOOS+"/"+runtime.GOARCH)
}

func buildText(info *debug.BuildInfo, platform string) string {
	var b strings.Builder
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	fmt.Fprintf(&b, "rpctap %s\n", v)
	set := map[string]string{}
	for _, s := range info.Settings {
		set[s.Key] = s.Value
	}
	if rev := set["vcs.revision"]; rev != "" {
		fmt.Fprintf(&b, "revision %s", rev)
		if t := set["vcs.time"]; t != "" {
			fmt.Fprintf(&b, " (%s)", t)
		}
		if set["vcs.modified"] == "true" {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s %s\n", info.GoVersion, platform)
	return b.String()
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print rpctap's version, the commit it was built from and the Go toolchain",
		Example: "  rpctap version\n  rpctap --version",
		Args:    takesArgs(0, 0, "no arguments", "rpctap version"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprint(cmd.OutOrStdout(), versionText())
			return nil
		},
	}
}

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
