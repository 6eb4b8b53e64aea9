package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/rpctap/rpctap/internal/userconfig"
	"github.com/spf13/cobra"
)

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config path|show",
		Short: "Where rpctap's config file is, and what it sets",
		Long: `rpctap reads defaults for its flags from a TOML file,
$XDG_CONFIG_HOME/rpctap/config.toml (~/.config/rpctap/config.toml when
XDG_CONFIG_HOME is not set). A flag on the command line wins over the
file. A file that cannot be read stops the commands it sets flags of,
with the line to fix.`,
		Example: `  rpctap config path
  rpctap config show
  $EDITOR "$(rpctap config path)"`,
		Args: takesArgs(1, 1, "path or show", "rpctap config show"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageError(fmt.Errorf("rpctap config has no subcommand %q; use rpctap config path or rpctap config show", args[0]))
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:     "path",
		Short:   "Print where rpctap's config file is (whether or not it exists)",
		Example: `  rpctap config path`,
		Args:    takesArgs(0, 0, "no arguments", "rpctap config path"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := userconfig.Path(os.Getenv)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), path)
			return nil
		},
	}, &cobra.Command{
		Use:     "show",
		Short:   "Print what the config file sets, or an example when there is none",
		Example: `  rpctap config show`,
		Args:    takesArgs(0, 0, "no arguments", "rpctap config show"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return showConfig(cmd.OutOrStdout())
		},
	})
	return cmd
}

func showConfig(out io.Writer) error {
	path, err := userconfig.Path(os.Getenv)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err != nil {
		fmt.Fprintf(out, "# %s does not exist; rpctap uses its defaults.\n# A file to start from, which sets nothing until you uncomment a setting:\n\n%s", path, userconfig.Example)
		return nil
	}
	c, err := userconfig.Load(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "# %s\n", path)
	set := func(key, value string) {
		if value == "" {
			fmt.Fprintf(out, "# %s is not set\n", key)
			return
		}
		fmt.Fprintf(out, "%s = %s\n", key, value)
	}
	q := func(s string) string {
		if s == "" {
			return ""
		}
		return fmt.Sprintf("%q", s)
	}
	set("profile", q(c.Profile))
	set("timeout", q(durationText(c.Timeout)))
	var redact []string
	for _, r := range c.Redact {
		if name, _, ok := strings.Cut(r, "="); ok {
			r = name + "=…" // the value is a secret
		}
		redact = append(redact, fmt.Sprintf("%q", r))
	}
	if len(redact) > 0 {
		set("redact", "["+strings.Join(redact, ", ")+"]")
	} else {
		set("redact", "")
	}
	set("theme", q(c.Theme))
	set("intercept", q(c.Intercept))
	set("hold_timeout", q(durationText(c.HoldTimeout)))
	if len(c.MethodTimeouts) > 0 {
		fmt.Fprintln(out, "\n[method_timeouts]")
		var methods []string
		for m := range c.MethodTimeouts {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, m := range methods {
			fmt.Fprintf(out, "%q = %q\n", m, c.MethodTimeouts[m].String())
		}
	}
	return nil
}
