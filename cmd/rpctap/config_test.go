package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/internal/userconfig"
	"github.com/spf13/cobra"
)

// The config file that rpctap config show starts from, and README's copy
// of it, say for each setting that stands for a flag which commands it
// applies to: exactly the commands that have that flag (applyUserConfig
// sets it wherever a command has it).
func TestTheConfigExampleNamesTheCommandsEachSettingAppliesTo(t *testing.T) {
	has := map[string][]string{} // flag → the commands that have it
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.InheritedFlags() // a parent's persistent flags are the command's too
		for _, name := range configFlags {
			if c.HasParent() && c.Flags().Lookup(name) != nil {
				has[name] = append(has[name], strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" "))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(readme), "### Config file\n")
	_, block, _ = strings.Cut(block, "```toml\n")
	block, _, _ = strings.Cut(block, "```")

	// A setting's line: "# key = value  # comment" or "# [key]  # comment";
	// the comment's first brackets name the commands, up to a ";".
	setting := regexp.MustCompile(`(?m)^# (?:\[([a-z_]+)\]|([a-z_]+) = )[^#\n]*# [^(\n]*\(([^);\n]*)[^\n]*`)
	for _, doc := range []struct{ name, text string }{
		{"userconfig.Example", userconfig.Example},
		{"README.md's config file", block},
	} {
		seen := map[string]bool{}
		for _, m := range setting.FindAllStringSubmatch(doc.text, -1) {
			key := m[1] + m[2]
			flag := strings.ReplaceAll(key, "_", "-")
			if key == "method_timeouts" {
				flag = "method-timeout" // a table of them
			}
			if !slices.Contains(configFlags, flag) {
				continue // theme: the live view's, no command's flag
			}
			seen[flag] = true
			said := strings.Split(m[3], ", ")
			want := slices.Clone(has[flag])
			slices.Sort(said)
			slices.Sort(want)
			if !slices.Equal(said, want) {
				t.Errorf("%s: %s says it applies to %v; the commands with --%s are %v:\n%s", doc.name, key, said, flag, want, m[0])
			}
		}
		for _, flag := range configFlags {
			if !seen[flag] {
				t.Errorf("%s has no line for the setting of --%s naming the commands it applies to in brackets", doc.name, flag)
			}
		}
	}
}
