package main

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/internal/textdist"
	"github.com/rpctap/rpctap/tap"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Argument errors are sentences that say what to type: cobra's own
// ("requires at least 1 arg(s), only received 0") say neither.

// takesArgs accepts between min and max arguments (max < 0: any number);
// what names them and example shows a whole command line.
func takesArgs(min, max int, what, example string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		name := cmd.CommandPath()
		switch {
		case len(args) < min:
			return usageError(fmt.Errorf("%s needs %s, as in: %s", name, what, example))
		case max == 0 && len(args) > 0:
			return usageError(fmt.Errorf("%s takes no arguments, but was given %s; as in: %s", name, quoteArgs(args), example))
		case max >= 0 && len(args) > max:
			return usageError(fmt.Errorf("%s takes %s, but was given %d arguments (%s); as in: %s", name, what, len(args), quoteArgs(args), example))
		}
		return nil
	}
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	return strings.Join(q, " ")
}

// flagError turns a flag parse error into a sentence with the way out:
// the flag, what it takes, and an example, from the command's own
// examples where one uses the flag (pflag's and cobra's wording, "flag
// needs an argument" or `invalid argument "x" for "--timeout" flag`, says
// neither).
func flagError(cmd *cobra.Command, err error) error {
	path := cmd.CommandPath()
	var needs *pflag.ValueRequiredError
	var invalid *pflag.InvalidValueError
	var unknown *pflag.NotExistError
	var msg string
	switch {
	case errors.As(err, &needs):
		msg = fmt.Sprintf("%s needs a value, as in: %s", flagName(needs.GetFlag()), flagExample(cmd, needs.GetFlag()))
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		what := valueKind(f)
		if what == "" { // a value of rpctap's own says what is wrong with it
			what = fmt.Sprintf("%v", errors.Unwrap(invalid))
		}
		msg = fmt.Sprintf("%s takes %s, not %q; as in: %s", flagName(f), what, invalid.GetValue(), flagExample(cmd, f))
	case errors.As(err, &unknown):
		name := "--" + unknown.GetSpecifiedName()
		if unknown.GetSpecifiedShortnames() != "" {
			name = "-" + unknown.GetSpecifiedName()
		}
		msg = fmt.Sprintf("%s has no flag %s%s; %s --help lists its flags", path, name, nearestFlag(cmd, name), path)
		if ex := cmd.Annotations[serverCommandKey]; ex != "" {
			msg += ", and a flag of the server's own goes after its command, as in: " + ex
		}
	default:
		msg = fmt.Sprintf("%s: %v; %s --help lists its flags", path, err, path)
	}
	return usageError(errors.New(msg))
}

func flagName(f *pflag.Flag) string { return "--" + f.Name }

// valueKind says what a flag of one of pflag's own types takes ("" for a
// value type of rpctap's own, whose error says it).
func valueKind(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "duration":
		return "a duration such as 30s, 2m or 1h30m"
	case "int", "int64", "uint", "count":
		return "a whole number such as 10"
	case "float64", "float32":
		return "a number such as 2 or 1.5"
	case "bool":
		return "no value, or true or false"
	case "string", "stringArray", "stringSlice":
		return "a value"
	}
	return ""
}

// flagExample is a command line that gives f a value: the first of the
// command's examples that uses it, else its first example with the flag
// put in, a value of its type given.
func flagExample(cmd *cobra.Command, f *pflag.Flag) string {
	var lines []string
	for _, l := range strings.Split(cmd.Example, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
		for _, w := range strings.Fields(l) {
			if w == "--"+f.Name || strings.HasPrefix(w, "--"+f.Name+"=") || f.Shorthand != "" && w == "-"+f.Shorthand {
				return l
			}
		}
	}
	value := "VALUE"
	switch f.Value.Type() {
	case "duration":
		value = "30s"
	case "int", "int64", "uint", "count", "float64", "float32":
		value = "2"
	case "string":
		if f.DefValue != "" {
			value = f.DefValue
		}
	}
	path := cmd.CommandPath()
	ex := path + " --" + f.Name + " " + value
	if len(lines) > 0 {
		if rest, ok := strings.CutPrefix(lines[0], path+" "); ok {
			ex += " " + rest
		}
	}
	return ex
}

// nearestFlag suggests the command's flag nearest to name, as " (did you
// mean --format?)", or "".
func nearestFlag(cmd *cobra.Command, name string) string {
	best, bestD := "", 3
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if d := textdist.Distance(strings.TrimLeft(name, "-"), f.Name); d < bestD && !f.Hidden {
			best, bestD = f.Name, d
		}
	})
	if best == "" || len(strings.TrimLeft(name, "-")) < 3 {
		return ""
	}
	return " (did you mean --" + best + "?)"
}

// unknownCommand is the root's argument check: a word that names no
// command gets the nearest ones.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("rpctap has no command %q.", args[0])
	if near := cmd.SuggestionsFor(args[0]); len(near) > 0 {
		msg = fmt.Sprintf("rpctap has no command %q; did you mean %s?", args[0], strings.Join(near, " or "))
	}
	return usageError(fmt.Errorf("%s rpctap --help lists the commands; start with: rpctap demo", msg))
}

// serverCommandKey is the annotation of a command whose arguments are a
// server's command line; its value is an example of that command line.
const serverCommandKey = "server-command"

// serverCommand marks a command whose arguments are a server's command
// line: its own flags stop at the first argument (rpctap run ls -la runs
// ls -la), and a flag error says where the server's flags go, as example
// shows them.
func serverCommand(cmd *cobra.Command, example string) *cobra.Command {
	cmd.Flags().SetInterspersed(false)
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[serverCommandKey] = example
	return cmd
}

// explain makes an error that a command returned say what to type: with
// several live taps to choose from, the user's own command line again,
// with the tap named by its pid. args are the command line's arguments.
func explain(cmd *cobra.Command, args []string, err error) error {
	var amb *tap.AmbiguousError
	if !errors.As(err, &amb) {
		return err
	}
	pid := strconv.Itoa(amb.Taps[0].PID)
	if cmd.Flags().Lookup("tap") == nil { // tail TARGET, ui TARGET
		return usageError(fmt.Errorf("%s; name one by its pid, as in: %s %s", amb.Listing(), cmd.CommandPath(), pid))
	}
	line := []string{cmd.CommandPath(), "--tap", pid}
	rest := args
	if i := slices.Index(args, cmd.Name()); i >= 0 {
		rest = args[i+1:]
	}
	for i := 0; i < len(rest); i++ {
		switch a := rest[i]; {
		case a == "--tap":
			i++
		case strings.HasPrefix(a, "--tap="):
		default:
			line = append(line, shellQuote(a))
		}
	}
	return usageError(fmt.Errorf("%s; name one by its pid with --tap, as in: %s", amb.Listing(), strings.Join(line, " ")))
}

// plainFileError is err's message with the words of the file error in it
// (Go's "open /x: no such file or directory") said plainly: "there is no
// file /x". Every error rpctap prints goes through it (main).
func plainFileError(err error) string {
	msg := err.Error()
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return msg
	}
	p := classify.EscapeString(pe.Path, 200)
	var words string
	switch {
	case errors.Is(pe.Err, fs.ErrNotExist):
		words = "there is no file " + p
	case errors.Is(pe.Err, fs.ErrPermission):
		words = p + " is not yours to " + map[string]string{"open": "open", "lstat": "reach", "stat": "reach", "remove": "remove"}[pe.Op] + " (permission denied)"
	case errors.Is(pe.Err, syscall.EISDIR):
		words = p + " is a directory, not a file"
	default:
		return msg
	}
	return strings.Replace(msg, pe.Error(), words, 1)
}

// sessionFileHint is what to add to a message about a session file that
// is not there: where to find the ones that are.
func sessionFileHint(err error) string {
	if errors.Is(err, fs.ErrNotExist) && !strings.Contains(err.Error(), "rpctap ls") {
		return " (rpctap ls lists recent sessions)"
	}
	return ""
}
