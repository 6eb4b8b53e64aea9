package tui

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
)

//go:generate go test -run TestKeysPageIsCurrent -update-keys .

var updateKeysPage = flag.Bool("update-keys", false, "rewrite the generated tables of docs/keys.md from the key map")

const (
	keysPage     = "../docs/keys.md"
	keysBegin    = "<!-- the key tables: generated from tui.DefaultKeyMap by go generate ./tui; do not edit -->\n"
	keysEnd      = "<!-- end of the key tables -->\n"
	keysStaleMsg = "docs/keys.md is stale: run `go generate ./tui`"
)

// keyTables renders the key map: the ? screen's columns (FullHelp) in
// order, then every other binding of the map, by its name in keys.go.
func keyTables() string {
	k := DefaultKeyMap()
	var b strings.Builder
	row := func(name string, kb key.Binding) {
		keys := make([]string, len(kb.Keys()))
		for i, s := range kb.Keys() {
			if s == " " {
				s = "space"
			}
			keys[i] = "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
		}
		if name != "" {
			name = "`" + name + "` | "
		}
		help := kb.Help().Key
		if help != "" {
			help = "`" + help + "`"
		}
		fmt.Fprintf(&b, "| %s%s | %s | %s |\n", name, help, strings.Join(keys, ", "), kb.Help().Desc)
	}
	shown := map[string]bool{} // help key and text of the rows so far
	b.WriteString("The ? screen of the live view, its columns one after another:\n\n| key | answers to | does |\n|---|---|---|\n")
	for _, group := range k.FullHelp() {
		for _, kb := range group {
			row("", kb)
			shown[kb.Help().Key+"\x00"+kb.Help().Desc] = true
		}
	}
	b.WriteString("\nThe other keys of the key map (the composer's, the held pane's, the filter and command lines'), by their name in `tui/keys.go` (one with no help of its own is the second half of another's, as `N` of `n/N`):\n\n| name | key | answers to | does |\n|---|---|---|---|\n")
	v, t := reflect.ValueOf(k), reflect.TypeOf(k)
	for i := range t.NumField() {
		kb := v.Field(i).Interface().(key.Binding)
		if kb.Help().Key != "" && shown[kb.Help().Key+"\x00"+kb.Help().Desc] {
			continue
		}
		row(t.Field(i).Name, kb)
	}
	return b.String()
}

// The key tables of docs/keys.md are the key map the program runs with:
// they are generated from it, so the page cannot drift from the keys.
func TestKeysPageIsCurrent(t *testing.T) {
	page, err := os.ReadFile(keysPage)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, ok := strings.Cut(string(page), keysBegin)
	_, tail, ok2 := strings.Cut(rest, keysEnd)
	if !ok || !ok2 {
		t.Fatalf("docs/keys.md has lost its markers of the generated tables: %q and %q", keysBegin, keysEnd)
	}
	got := head + keysBegin + keyTables() + keysEnd + tail
	if *updateKeysPage {
		if err := os.WriteFile(keysPage, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != string(page) {
		t.Error(keysStaleMsg)
	}
}
