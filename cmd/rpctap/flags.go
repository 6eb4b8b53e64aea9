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

// tapFlags are the flags of the commands that run a tap (run, http): the
// session's name, where it is recorded, what is masked, what rpctap says
// on stderr, and whether live views are served.
type tapFlags struct {
	name, record                               string
	force, noRecord, noRedact, quiet, noListen bool
	redact                                     []string
}

// add adds the flags to f; nameDefault says what --name is by default,
// redactName what a --redact NAME masks.
func (o *tapFlags) add(f *pflag.FlagSet, nameDefault, redactName string) {
	f.StringVar(&o.name, "name", "", "a short name for the session (default: "+nameDefault+")")
	f.StringVar(&o.record, "record", "", "write the session to this file (default: a new file in the state directory)")
	f.BoolVar(&o.force, "force", false, "write over the --record file when it is there (default: keep it, and record beside it under a new name, said on stderr)")
	f.BoolVar(&o.noRecord, "no-record", false, "do not write a session file")
	f.StringArrayVar(&o.redact, "redact", nil, "mask a secret in recordings and views: NAME ("+redactName+") or NAME=VALUE; repeatable")
	f.BoolVar(&o.noRedact, "no-redact", false, "do not mask secret-looking environment values")
	f.BoolVar(&o.quiet, "quiet", false, "print nothing of rpctap's own on stderr, not even warnings")
	f.BoolVar(&o.noListen, "no-listen", false, "do not serve live views on a socket")
}

// warner says a message of rpctap's own on w, unless --quiet.
func (o *tapFlags) warner(w io.Writer) func(string) {
	return func(msg string) {
		if !o.quiet {
			fmt.Fprintln(w, "rpctap:", msg)
		}
	}
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
