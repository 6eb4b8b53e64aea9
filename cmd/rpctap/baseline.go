package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/sessions/check"
	"github.com/spf13/cobra"
)

func newBaselineCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "baseline accept|show|reset",
		Short: "Keep the tool definitions you trust for a server, and judge later sessions against them",
		Long: `A baseline is what you accepted of an MCP server: the tools, prompts and
resource templates a session of it listed, kept in the state directory
and keyed by the name the server gives in its serverInfo. Every later
session of that server is judged against it (in the live view, check
and exports): a definition added, removed, or changed in its title,
description, schemas, arguments or annotations is a tool-drift finding,
and rpctap check --fail-on drift fails on it.

  rpctap baseline accept SESSION           trust what SESSION's server listed
  rpctap baseline show [SERVER|SESSION]    every baseline, one server's, or
                                           how SESSION differs from its server's
  rpctap baseline reset SERVER|SESSION     forget a server's baseline`,
		Args: takesArgs(0, 0, "", "rpctap baseline accept SESSION.jsonl"),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newBaselineAcceptCmd(), newBaselineShowCmd(), newBaselineResetCmd())
	return cmd
}

func newBaselineAcceptCmd() *cobra.Command {
	var server string
	cmd := &cobra.Command{
		Use:   "accept [--server NAME] SESSION",
		Short: "Trust the tools, prompts and resource templates a recorded session's server listed",
		Long: `Reads the session file and keeps the latest complete tools/list,
prompts/list and resources/templates/list its server answered as the
server's baseline, replacing the one accepted before (and saying what
changed since). The server is the one named in its serverInfo; --server
names it when the session never did.`,
		Args: takesArgs(1, 1, "a session file", "rpctap baseline accept SESSION.jsonl (rpctap ls lists recent sessions)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBaselineAccept(cmd.OutOrStdout(), args[0], server, time.Now())
		},
	}
	cmd.Flags().StringVar(&server, "server", "", "the server's name, when the session's server never gave its serverInfo")
	return cmd
}

func newBaselineShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show [--json] [SERVER|SESSION]",
		Short: "List the baselines, show one server's, or how a session differs from its server's",
		Args:  takesArgs(0, 1, "", "rpctap baseline show"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return runBaselineList(cmd.OutOrStdout(), asJSON)
			}
			return runBaselineShow(cmd.OutOrStdout(), args[0], asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newBaselineResetCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "reset SERVER|SESSION",
		Short: "Forget the baseline of a server",
		Args:  takesArgs(1, 1, "a server's name or a session file of it", "rpctap baseline reset mcp-servers/everything"),
		RunE: func(cmd *cobra.Command, args []string) error {
			server, _, err := baselineServer(args[0])
			if err != nil {
				return err
			}
			path, err := sessions.ResetBaseline(server)
			if errors.Is(err, sessions.ErrNoBaseline) {
				return exitError{code: 2, msg: fmt.Sprintf("no baseline was accepted for server %s (rpctap baseline show lists those that were)", quoteServer(server))}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed the baseline of server %s (%s)\n", quoteServer(server), classify.EscapeString(path, 300))
			return nil
		},
	}
}

// listedIn reads a session file as check does, for its server's name and
// the definitions it listed last, judged against baseline when not nil.
func listedIn(path string, baseline func(string) *classify.Baseline) (*check.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, exitError{code: 2, msg: "cannot read the session: " + plainFileError(err) + sessionFileHint(err)}
	}
	defer f.Close()
	rep, err := check.Run(bufio.NewReaderSize(f, 1<<20), check.Options{Baseline: baseline})
	if errors.Is(err, sessions.ErrNoRecords) {
		return nil, exitError{code: 2, msg: notSession(classify.EscapeString(path, 200), rep)}
	}
	if err != nil {
		return nil, exitError{code: 2, msg: "cannot read the session: " + plainFileError(err)}
	}
	return rep, nil
}

func runBaselineAccept(out io.Writer, path, server string, now time.Time) error {
	rep, err := listedIn(path, nil)
	if err != nil {
		return err
	}
	name := classify.EscapeString(path, 200)
	if server == "" {
		server = rep.Server
	}
	if server == "" {
		return exitError{code: 2, msg: fmt.Sprintf("cannot accept %s: its server never gave its name (no serverInfo in the initialize result or in a result's _meta), so rpctap cannot tell whose baseline it is: name it, as in rpctap baseline accept --server NAME %s", name, shellQuote(path))}
	}
	if rep.Listed[classify.DefTool] == nil && rep.Listed[classify.DefPrompt] == nil && rep.Listed[classify.DefTemplate] == nil {
		return exitError{code: 2, msg: fmt.Sprintf("cannot accept %s: it holds no complete answer to tools/list, prompts/list or resources/templates/list, so there is nothing to trust; record a session in which the host lists them (rpctap watch -- SERVER lists the tools), then accept that one", name)}
	}
	from := path
	if abs, err := filepath.Abs(path); err == nil {
		from = abs
	}
	old, _, oldErr := sessions.LoadBaseline(server)
	b := sessions.NewBaseline(server, from, rep.Listed, now)
	saved, err := sessions.SaveBaseline(b)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "accepted the baseline of server %s: %s, from %s\n", quoteServer(server), listCounts(b.Lists()), name)
	if oldErr == nil {
		changes := baselineChanges(old.Lists(), b.Lists())
		if len(changes) == 0 {
			fmt.Fprintf(out, "it lists what the baseline accepted %s did\n", old.AcceptedText())
		} else {
			fmt.Fprintf(out, "replacing the one accepted %s, which differed in %s:\n", old.AcceptedText(), sessions.Count(len(changes), "definition"))
			writeChanges(out, changes)
		}
	}
	fmt.Fprintf(out, "kept in %s\n", classify.EscapeString(saved, 300))
	return nil
}

// baselineChanges are how lists now differ from was, for every kind was
// holds (a kind the baseline never listed is not compared), by the one
// comparison the tracker and diff make.
func baselineChanges(was, now [3]classify.Definitions) []classify.DefinitionChange {
	var out []classify.DefinitionChange
	for k, defs := range was {
		if defs != nil && now[k] != nil {
			out = append(out, classify.CompareDefinitions(classify.DefinitionKind(k), defs, now[k])...)
		}
	}
	return out
}

func writeChanges(out io.Writer, changes []classify.DefinitionChange) {
	for _, c := range changes {
		what := c.Kind.Noun() + " " + quoteServer(c.Name)
		switch {
		case c.Added:
			fmt.Fprintf(out, "  + %s added\n", what)
		case c.Removed:
			fmt.Fprintf(out, "  - %s removed\n", what)
		default:
			fmt.Fprintf(out, "  ~ %s changed its %s\n", what, strings.Join(c.Fields, ", "))
		}
	}
}

// listCounts says how many definitions of each kind lists hold: "12
// tools, 3 prompts and no resource templates"; a kind never listed is
// left out.
func listCounts(lists [3]classify.Definitions) string {
	var parts []string
	for k, defs := range lists {
		if defs != nil {
			parts = append(parts, sessions.Count(len(defs), classify.DefinitionKind(k).Noun()))
		}
	}
	return joinAnd(parts)
}

func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return "nothing"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

func quoteServer(s string) string { return `"` + classify.EscapeString(s, 120) + `"` }

// baselineServer is the server an argument names: the server of a
// session file when it is one (with the session as read), else the
// name itself (and no session).
func baselineServer(arg string) (string, *check.Report, error) {
	if fi, err := os.Stat(arg); err == nil && fi.Mode().IsRegular() {
		rep, err := listedIn(arg, nil)
		if err != nil {
			return "", nil, err
		}
		if rep.Server == "" {
			return "", nil, exitError{code: 2, msg: fmt.Sprintf("%s is a session whose server never gave its name (no serverInfo): give the server's name instead (rpctap baseline show lists the baselines)", classify.EscapeString(arg, 200))}
		}
		return rep.Server, rep, nil
	}
	return arg, nil, nil
}

func runBaselineList(out io.Writer, asJSON bool) error {
	list, skipped, err := sessions.Baselines()
	if err != nil {
		return err
	}
	for _, s := range skipped {
		fmt.Fprintln(os.Stderr, "rpctap:", s)
	}
	if asJSON {
		type entry struct {
			Server   string         `json:"server"`
			Accepted time.Time      `json:"accepted"`
			From     string         `json:"from"`
			Counts   map[string]int `json:"counts"`
		}
		entries := []entry{}
		for _, b := range list {
			e := entry{Server: b.Server, Accepted: b.Accepted, From: b.From, Counts: map[string]int{}}
			for k, defs := range b.Lists() {
				if defs != nil {
					e.Counts[classify.DefinitionKind(k).Member()] = len(defs)
				}
			}
			entries = append(entries, e)
		}
		return sessions.PrintJSON(out, entries, true)
	}
	if len(list) == 0 {
		fmt.Fprintln(out, "no baseline accepted yet: rpctap baseline accept SESSION trusts what a session's server listed")
		return nil
	}
	for _, b := range list {
		fmt.Fprintf(out, "%s  accepted %s: %s\n", quoteServer(b.Server), b.AcceptedText(), listCounts(b.Lists()))
	}
	return nil
}

func runBaselineShow(out io.Writer, arg string, asJSON bool) error {
	server, rep, err := baselineServer(arg)
	if err != nil {
		return err
	}
	b, _, err := sessions.LoadBaseline(server)
	if errors.Is(err, sessions.ErrNoBaseline) {
		return exitError{code: 2, msg: fmt.Sprintf("no baseline was accepted for server %s: rpctap baseline accept SESSION accepts one (rpctap baseline show lists those that were)", quoteServer(server))}
	}
	if err != nil {
		return err
	}
	if rep != nil {
		changes := baselineChanges(b.Lists(), rep.Listed)
		if asJSON {
			return sessions.PrintJSON(out, changesJSON(server, changes), true)
		}
		if len(changes) == 0 {
			fmt.Fprintf(out, "%s lists what the baseline of server %s accepted %s holds\n", classify.EscapeString(arg, 200), quoteServer(server), b.AcceptedText())
			return nil
		}
		fmt.Fprintf(out, "%s differs from the baseline of server %s accepted %s in %s:\n", classify.EscapeString(arg, 200), quoteServer(server), b.AcceptedText(), sessions.Count(len(changes), "definition"))
		writeChanges(out, changes)
		return nil
	}
	if asJSON {
		return sessions.PrintJSON(out, b, true)
	}
	fmt.Fprintf(out, "server %s, accepted %s from %s\n", quoteServer(b.Server), b.AcceptedText(), classify.EscapeString(b.From, 300))
	for k, defs := range b.Lists() {
		if defs == nil {
			continue
		}
		kind := classify.DefinitionKind(k)
		fmt.Fprintf(out, "%s:\n", sessions.Count(len(defs), kind.Noun()))
		for _, name := range sessions.SortedKeys(defs, nil) {
			line := "  " + classify.EscapeString(name, 80)
			if d, ok := classify.StringValue(classify.Member(defs[name], "description")); ok && d != "" {
				line += "  " + classify.EscapeString(d, 100)
			}
			fmt.Fprintln(out, line)
		}
	}
	return nil
}

type changeJSON struct {
	Kind   string   `json:"kind"`
	Name   string   `json:"name"`
	Change string   `json:"change"`
	Fields []string `json:"fields,omitempty"`
}

func changesJSON(server string, changes []classify.DefinitionChange) any {
	out := struct {
		Server  string       `json:"server"`
		Changes []changeJSON `json:"changes"`
	}{Server: server, Changes: []changeJSON{}}
	for _, c := range changes {
		e := changeJSON{Kind: c.Kind.Noun(), Name: c.Name, Change: "changed", Fields: c.Fields}
		switch {
		case c.Added:
			e.Change = "added"
		case c.Removed:
			e.Change = "removed"
		}
		out.Changes = append(out.Changes, e)
	}
	return out
}
