package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
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

// flagError turns a flag parse error into a sentence with the way out.
func flagError(cmd *cobra.Command, err error) error {
	msg := fmt.Sprintf("%s: %v; %s --help lists its flags", cmd.CommandPath(), err, cmd.CommandPath())
	if takesServerCommand(cmd) {
		msg += fmt.Sprintf(", and a flag of the server's own goes after its command, as in: %s -- my-server --stdio", cmd.CommandPath())
	}
	return usageError(fmt.Errorf("%s", msg))
}

// unknownCommand is the root's argument check: a word that names no
// command gets the nearest ones.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("rpctap has no command %q", args[0])
	if near := cmd.SuggestionsFor(args[0]); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	}
	return usageError(fmt.Errorf("%s rpctap --help lists the commands; start with: rpctap demo", msg+"."))
}

// serverCommand marks a command whose arguments are a server's command
// line: its own flags stop at the first argument (rpctap run ls -la runs
// ls -la), and a flag error says where the server's flags go.
func serverCommand(cmd *cobra.Command) *cobra.Command {
	cmd.Flags().SetInterspersed(false)
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations["server-command"] = "yes"
	return cmd
}

func takesServerCommand(cmd *cobra.Command) bool { return cmd.Annotations["server-command"] != "" }
