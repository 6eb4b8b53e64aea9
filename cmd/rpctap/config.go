package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/internal/userconfig"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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

func durationText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// configFlags are the flags the config file sets where a command has them.
var configFlags = []string{"profile", "timeout", "redact", "method-timeout", "intercept", "hold-timeout"}

// applyUserConfig sets the flags of cmd that the config file gives and
// the command line does not. A command with none of them never reads it.
func applyUserConfig(cmd *cobra.Command) error {
	f := cmd.Flags()
	has := false
	for _, name := range configFlags {
		has = has || f.Lookup(name) != nil
	}
	if !has {
		return nil
	}
	c, err := loadUserConfig()
	if err != nil {
		return usageError(err)
	}
	set := func(name, value string) error {
		if fl := f.Lookup(name); fl != nil && !fl.Changed && value != "" {
			return f.Set(name, value)
		}
		return nil
	}
	if err := set("profile", c.Profile); err != nil {
		return usageError(err)
	}
	if err := set("timeout", durationText(c.Timeout)); err != nil {
		return usageError(err)
	}
	if err := set("intercept", c.Intercept); err != nil {
		return usageError(err)
	}
	if err := set("hold-timeout", durationText(c.HoldTimeout)); err != nil {
		return usageError(err)
	}
	if f.Lookup("redact") != nil {
		for _, r := range c.Redact {
			// A name with no such variable here is a word, not a refusal:
			// the file serves every server, and most lack most secrets.
			if name, _, literal := strings.Cut(r, "="); !literal {
				if _, ok := os.LookupEnv(name); !ok {
					if q := f.Lookup("quiet"); q == nil || q.Value.String() != "true" {
						path, _ := userconfig.Path(os.Getenv)
						fmt.Fprintf(cmd.ErrOrStderr(), "rpctap: %s: redact names %s, which is not set here, so there is nothing to mask for it\n",
							classify.EscapeString(path, 200), classify.EscapeString(name, 80))
					}
					continue
				}
			}
			f.Set("redact", r) // added to those given
		}
	}
	if fl := f.Lookup("method-timeout"); fl != nil {
		given, _ := parseMethodTimeouts(fl.Value.(pflag.SliceValue).GetSlice())
		var methods []string
		for m := range c.MethodTimeouts {
			if _, ok := given[m]; !ok {
				methods = append(methods, m)
			}
		}
		sort.Strings(methods)
		for _, m := range methods {
			f.Set("method-timeout", m+"="+c.MethodTimeouts[m].String())
		}
	}
	return nil
}

func loadUserConfig() (userconfig.Config, error) {
	path, err := userconfig.Path(os.Getenv)
	if err != nil {
		return userconfig.Config{}, nil // nowhere to keep one: there is none
	}
	return userconfig.Load(path)
}

func methodTimeoutFlag(f *pflag.FlagSet, into *[]string) {
	f.StringArrayVar(into, "method-timeout", nil, "how long requests of one method may wait, as METHOD=DURATION (tools/call=2m); repeatable; over --timeout")
}

func parseMethodTimeouts(specs []string) (map[string]time.Duration, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := map[string]time.Duration{}
	for _, s := range specs {
		m, ds, ok := strings.Cut(s, "=")
		d, err := time.ParseDuration(ds)
		if !ok || m == "" || err != nil || d <= 0 {
			return nil, fmt.Errorf("--method-timeout %q should be METHOD=DURATION, as in: --method-timeout tools/call=2m", s)
		}
		out[m] = d
	}
	return out, nil
}

// uiRenderer draws the live view on w in theme: auto asks the terminal
// whether its background is dark; dark and light say so. NO_COLOR (any
// value) turns colour off, whatever the theme.
func uiRenderer(w io.Writer, theme string) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(w, termenv.WithColorCache(true))
	switch theme {
	case "light":
		r.SetHasDarkBackground(false)
	case "dark":
		r.SetHasDarkBackground(true)
	}
	return r
}
