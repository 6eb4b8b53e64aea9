package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/aymanbagabas/go-udiff/myers"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/internal/hostconfig"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type wrapOptions struct {
	config, print string
	scope         string
	self          string // the rpctap the host runs
	dryRun, list  bool
}

func newWrapCmd() *cobra.Command {
	var o wrapOptions
	cmd := &cobra.Command{
		Use:   "wrap HOST SERVER | --list [HOST...] | --print EDITOR -- SERVER-CMD [ARGS...]",
		Short: "Make a host launch one of its MCP servers through rpctap (unwrap undoes it)",
		Long: `Rewrites the entry of SERVER in HOST's MCP config so that the host runs
"rpctap run --name SERVER -- COMMAND ARGS..." instead of "COMMAND ARGS...".
Only that entry's command and args change: every other entry, the key
order, comments, indentation and line ends stay as they are, and
"rpctap unwrap HOST SERVER" gives back the file's exact bytes. The entry's
env, cwd and inputs stay, and the command is rpctap's absolute path, so
it works when the host starts it with a bare environment. The first
change keeps a copy of the file beside it (FILE` + hostconfig.BackupSuffix + `).
The file and the copy keep its owner, group and mode (under sudo too);
a read-only file, or one that an editor saves meanwhile, is left as it is.
Restart the host (or reload its servers) afterwards; "rpctap ui" then
shows the server's traffic live.

Hosts and the files they read (project ones, in the working directory,
first; rpctap wrap --list shows where they are here):
  claude-desktop  claude_desktop_config.json in the app's folder
  claude-code     .mcp.json; ~/.claude.json (the project's entry, the top)
  cursor          .cursor/mcp.json; ~/.cursor/mcp.json
  vscode          .vscode/mcp.json; Code/User/mcp.json ("servers", JSONC)

For an editor's language server, --print writes the snippet to paste
(neovim, helix, vscode-lsp) instead of editing a file.`,
		Example: `  rpctap wrap --list
  rpctap wrap claude-desktop everything --dry-run
  rpctap wrap claude-desktop everything
  rpctap wrap vscode github --config ~/work/app/.vscode/mcp.json
  rpctap wrap --print neovim -- gopls serve
  rpctap wrap --print helix -- rust-analyzer`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.list:
				return listHosts(cmd.OutOrStdout(), args, o.config)
			case o.print != "":
				return printSnippet(cmd.OutOrStdout(), o.print, o.self, args)
			}
			if err := takesArgs(2, 2, "a host and one of its servers", "rpctap wrap claude-desktop everything")(cmd, args); err != nil {
				return err
			}
			return rewrite(cmd.OutOrStdout(), args[0], args[1], o, true)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.config, "config", "", "the host's config file, when it is not in its usual place")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the change as a diff and leave the file alone")
	scopeFlag(f, &o.scope)
	f.StringVar(&o.self, "rpctap", "", "the absolute path of the rpctap the host runs (default: this binary)")
	f.BoolVar(&o.list, "list", false, "list the servers of each host whose config exists, and which run through rpctap")
	f.StringVar(&o.print, "print", "", "print the snippet that starts an LSP server through rpctap in this editor: "+strings.Join(hostconfig.Editors, ", "))
	cmd.RegisterFlagCompletionFunc("print", cobra.FixedCompletions(hostconfig.Editors, cobra.ShellCompDirectiveNoFileComp))
	cmd.ValidArgsFunction = completeHostServer
	return cmd
}

// completeHostServer completes a host's name, then one of its servers.
func completeHostServer(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	switch len(args) {
	case 0:
		var names []string
		for _, h := range hostconfig.Hosts {
			names = append(names, h.Name)
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	case 1:
		h, ok := hostconfig.HostNamed(args[0])
		if !ok {
			break
		}
		var names []string
		for _, l := range hostconfig.Locations(h, hostconfig.OSEnv()) {
			src, err := os.ReadFile(l.Path)
			if err != nil {
				continue
			}
			servers, _ := hostconfig.List(src, l.ServersKey())
			for _, s := range servers {
				if !slices.Contains(names, s.Name) {
					names = append(names, s.Name)
				}
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

func scopeFlag(f *pflag.FlagSet, into *string) {
	f.StringVar(into, "scope", "", "which of the host's configs, when the server is in more than one: project, local (Claude Code's per-project entries in ~/.claude.json) or user")
}

func hostArg(name string) (hostconfig.Host, error) {
	h, ok := hostconfig.HostNamed(name)
	if !ok {
		return h, usageError(fmt.Errorf("rpctap knows no host %q; the hosts are %s", classify.EscapeString(name, 80), hostconfig.HostNames()))
	}
	return h, nil
}

func rewrite(out io.Writer, hostName, server string, o wrapOptions, wrap bool) error {
	h, err := hostArg(hostName)
	if err != nil {
		return err
	}
	if o.scope != "" && !slices.Contains([]string{"project", "local", "user"}, o.scope) {
		return usageError(fmt.Errorf("--scope is project, local or user, not %q", classify.EscapeString(o.scope, 40)))
	}
	f, err := hostconfig.Find(h, server, o.config, o.scope, hostconfig.OSEnv())
	if err != nil {
		return err
	}
	var b []byte
	if wrap {
		self, err := selfPath(o.self)
		if err != nil {
			return err
		}
		b, err = hostconfig.Wrap(f.Src, f.ServersKey(), server, self)
		if err != nil {
			return hostconfig.FileError(f.Path, err)
		}
	} else if b, err = hostconfig.Unwrap(f.Src, f.ServersKey(), server); err != nil {
		return hostconfig.FileError(f.Path, err)
	}
	if o.dryRun {
		return printDiff(out, f.Path, f.Src, b)
	}
	backup, err := hostconfig.Save(f.Path, f.Src, b)
	var ro *hostconfig.ReadOnlyError
	if errors.As(err, &ro) {
		// Someone made it read-only: say how to change it anyway and make
		// it read-only again, in one line to type.
		p := classify.EscapeString(shellQuote(ro.Path), 0)
		again := make([]string, len(os.Args))
		for i, a := range os.Args {
			again[i] = classify.EscapeString(shellQuote(a), 0)
		}
		return fmt.Errorf("%s is read-only (mode %04o), so rpctap left it as it is; to change it anyway, type: chmod u+w %s && %s && chmod u-w %s",
			classify.EscapeString(ro.Path, 0), ro.Mode.Perm(), p, strings.Join(again, " "), p)
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", f.Path, err)
	}
	did := "now starts %q through rpctap; watch it with: rpctap ui"
	if !wrap {
		did = "starts %q directly again"
	}
	fmt.Fprintf(out, "%s "+did+" (%s).\n", h.Title, server, f.Path)
	if backup != "" {
		fmt.Fprintf(out, "The file as it was is kept in %s.\n", backup)
	}
	fmt.Fprintf(out, "Restart %s, or reload its MCP servers, for the change to take effect.\n", h.Title)
	return nil
}

// printDiff prints the change from old to new as a unified diff, line by
// line (myers: a character diff turned into lines shows lines that did
// not change as changed).
func printDiff(out io.Writer, path string, old, new []byte) error {
	diff, err := udiff.ToUnified(path, path, string(old), myers.ComputeEdits(string(old), string(new)), 3)
	if err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(diff, "\n") {
		// A comment in the file may hold any bytes: show them escaped.
		// Tabs are indentation here and stay tabs.
		text := strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		for i, part := range strings.Split(text, "\t") {
			if i > 0 {
				fmt.Fprint(out, "\t")
			}
			fmt.Fprint(out, classify.EscapeString(part, 0))
		}
		if strings.HasSuffix(line, "\n") {
			fmt.Fprintln(out)
		}
	}
	return nil
}

// selfPath is the absolute path of the rpctap the host will run: given
// (--rpctap), else this binary's. A host may start it with no PATH, so
// it must be absolute; a link stays a link (a package manager's link
// outlives the versioned file it points to).
func selfPath(given string) (string, error) {
	if given != "" {
		if !filepath.IsAbs(given) {
			return "", usageError(fmt.Errorf("--rpctap must be an absolute path, as a host may start it with no PATH: --rpctap %s", filepath.Join("/usr/local/bin", filepath.Base(given))))
		}
		return given, nil
	}
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot tell where the rpctap binary is (%w); give it with --rpctap PATH", err)
	}
	if strings.Contains(p, string(filepath.Separator)+"go-build") {
		return "", fmt.Errorf("this rpctap was built by go run in a temporary directory that will vanish; install it first (go install ./cmd/rpctap) and run the installed one, $(go env GOPATH)/bin/rpctap, or name it with --rpctap PATH")
	}
	return p, nil
}

// listHosts prints the servers of each host whose config exists.
func listHosts(out io.Writer, names []string, config string) error {
	hosts := hostconfig.Hosts
	if len(names) > 0 {
		hosts = nil
		for _, n := range names {
			h, err := hostArg(n)
			if err != nil {
				return err
			}
			hosts = append(hosts, h)
		}
	}
	if config != "" && len(hosts) != 1 {
		return usageError(fmt.Errorf("with --config, name the host the file belongs to, as in: rpctap wrap --list --config %s claude-desktop", config))
	}
	files, looked := hostconfig.Look(hosts, config, hostconfig.OSEnv())
	for i, l := range files {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "%s (%s) %s\n", l.Host.Title, l.Scope, classify.EscapeString(l.Path, 0))
		if l.Err != nil {
			fmt.Fprintf(out, "  %s\n", classify.EscapeString(hostconfig.FileError(l.Path, l.Err).Error(), 0))
			continue
		}
		servers := l.Servers
		if len(servers) == 0 {
			fmt.Fprintln(out, "  no servers")
		}
		width := 0
		for _, s := range servers {
			width = max(width, len(classify.EscapeString(s.Name, 40)))
		}
		for _, s := range servers {
			state, what := "direct ", s.Command+" "+strings.Join(s.Args, " ")
			switch {
			case s.URL != "":
				state, what = "remote ", s.URL
			case s.Wrapped:
				state, what = "wrapped", strings.Join(s.Inner, " ")
			}
			fmt.Fprintf(out, "  %-*s  %s  %s\n", width, classify.EscapeString(s.Name, 40), state, classify.EscapeString(strings.TrimSpace(what), 120))
		}
	}
	if len(files) == 0 {
		fmt.Fprintf(out, "No host config found. rpctap looked for:\n  %s\nA config elsewhere: rpctap wrap --list --config PATH HOST\n", strings.Join(looked, "\n  "))
	}
	return nil
}

func printSnippet(out io.Writer, editor, self string, argv []string) error {
	if len(argv) == 0 {
		return usageError(fmt.Errorf("rpctap wrap --print needs the language server's command, as in: rpctap wrap --print %s -- gopls serve", editor))
	}
	self, err := selfPath(self)
	if err != nil {
		return err
	}
	s, err := hostconfig.Snippet(editor, self, argv)
	if err != nil {
		return usageError(err)
	}
	fmt.Fprint(out, s)
	return nil
}
