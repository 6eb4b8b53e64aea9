package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
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
