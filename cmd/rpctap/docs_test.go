package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

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
