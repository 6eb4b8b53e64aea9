package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/sessions/check"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// commandReferenceHead opens docs/commands.md.
const commandReferenceHead = `# Command reference

Generated from rpctap's command tree (the text of ` + "`--help`" + `) by
` + "`go generate ./cmd/rpctap`" + `; ` + "`go test ./cmd/rpctap`" + ` fails when this file is
stale. Do not edit it by hand: change the command's help and generate again.

`

// commandReference is every available command's help, as Markdown, in
// one page: the root, then each command and its subcommands in the
// order of the command tree; links between them are anchors in the page.
func commandReference(t *testing.T) string {
	var b bytes.Buffer
	b.WriteString(commandReferenceHead)
	anchor := func(file string) string { // rpctap_sessions_prune.md → #rpctap-sessions-prune
		return "#" + strings.ReplaceAll(strings.TrimSuffix(file, ".md"), "_", "-")
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if err := doc.GenMarkdownCustom(c, &b, anchor); err != nil {
			t.Fatal(err)
		}
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
				walk(sub)
			}
		}
	}
	walk(newRootCmd())
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// The command reference in docs/commands.md is what --help says now:
// the page is generated from the command tree, so it cannot drift from it.
func TestCommandReferenceIsCurrent(t *testing.T) {
	const path = "../../docs/commands.md"
	got := commandReference(t)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(path)
	if err != nil || string(old) != got {
		t.Errorf("docs/commands.md is stale: run `go generate ./cmd/rpctap`")
	}
}

const (
	findingsPage  = "../../docs/findings.md"
	findingsBegin = "<!-- the finding codes: generated from the rules of rpctap check --format sarif by go generate ./cmd/rpctap; do not edit -->\n"
	findingsEnd   = "<!-- end of the finding codes -->\n"
)

// findingCodes is a table of every finding code, in code order, with when
// it is raised and its severity: the rules check --format sarif writes.
func findingCodes(t *testing.T) string {
	var sarif bytes.Buffer
	if err := check.WriteSARIF(&sarif, check.File{Name: "session.jsonl"}, &check.Report{}); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID   string `json:"id"`
						Help struct {
							Markdown string `json:"markdown"`
						} `json:"help"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(sarif.Bytes(), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("check --format sarif wrote no run of rules (%v):\n%s", err, sarif.Bytes())
	}
	var b strings.Builder
	b.WriteString("| code | raised on | severity |\n|---|---|---|\n")
	for _, r := range log.Runs[0].Tool.Driver.Rules {
		// "**`code`**: WHEN.\n\nSeverity: SEVERITY."
		text := strings.TrimPrefix(r.Help.Markdown, "**`"+r.ID+"`**: ")
		when, severity, ok := strings.Cut(text, ".\n\nSeverity: ")
		if !ok {
			t.Fatalf("rule %s: its help is not \"**`code`**: when.\\n\\nSeverity: ...\": %q", r.ID, r.Help.Markdown)
		}
		cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.ID, cell(when), cell(strings.TrimSuffix(severity, ".")))
	}
	return b.String()
}

// The finding codes of docs/findings.md are the rules rpctap check
// reports by: the table is generated from them, so it cannot drift.
func TestFindingCodesPageIsCurrent(t *testing.T) {
	page, err := os.ReadFile(findingsPage)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, ok := strings.Cut(string(page), findingsBegin)
	_, tail, ok2 := strings.Cut(rest, findingsEnd)
	if !ok || !ok2 {
		t.Fatalf("docs/findings.md has lost its markers of the generated table: %q and %q", findingsBegin, findingsEnd)
	}
	got := head + findingsBegin + findingCodes(t) + findingsEnd + tail
	if *update {
		if err := os.WriteFile(findingsPage, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != string(page) {
		t.Error("docs/findings.md is stale: run `go generate ./cmd/rpctap`")
	}
}
