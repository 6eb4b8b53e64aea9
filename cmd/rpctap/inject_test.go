package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/inject"
)

// The catalog command (rpctap catalog [--json]) lists every entry with its
// one-line rule.
func TestCatalogCommandListsEveryEntryWithItsRule(t *testing.T) {
	var out bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"catalog", "--json"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var list []inject.Listing
	if err := json.Unmarshal(out.Bytes(), &list); err != nil || len(list) != len(inject.Catalog()) {
		t.Fatalf("catalog --json: %v, %d entries: %s", err, len(list), out.Bytes())
	}
	out.Reset()
	root = newRootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"catalog"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, e := range inject.Catalog() {
		if !strings.Contains(out.String(), e.Name) || !strings.Contains(out.String(), e.Rule) {
			t.Errorf("catalog does not list %s with its rule", e.Name)
		}
	}
}

// The usage errors of inject say what to type, before any tap is looked
// for.
func TestInjectUsageErrorsSayWhatToType(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"inject"}, "rpctap inject --method tools/call --tool echo --arg message=hi"},
		{[]string{"inject", "--catalog", "empty-batch", "{}"}, "not several"},
		{[]string{"inject", "--json", "{}"}, "add --capture"},
		{[]string{"inject", "--tool", "echo", "{}"}, "add --method"},
		{[]string{"inject", "--catalog", "empty-batch", "--tool", "echo"}, "empty-batch calls none (bad-tool-arguments does)"},
		{[]string{"inject", "--catalog", "bad-tool-arguments", "--arg", "a=b"}, "add --method"},
		{[]string{"inject", "--dir", "err", "{}"}, "--dir is h2s"},
		{[]string{"inject", "--catalog", "nope"}, "rpctap catalog lists them"},
		{[]string{"inject", "--catalog", "id-reused"}, "give its id, as in --id 3"},
		{[]string{"inject", "--catalog", "large-frame", "--size", "5"}, "give it with --size"},
		{[]string{"inject", "bigtour", "--capture", "{}"}, "to name the tap, give --tap, as in: rpctap inject --tap bigtour '{"},
		{[]string{"inject", "{}", "{}"}, "give the frame as one argument (quote it)"},
	} {
		root := newRootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(c.args)
		err := root.Execute()
		var ex exitError
		if err == nil || !asExit(err, &ex) || ex.code != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v (exit %d), want exit 2 saying %q", c.args, err, ex.code, c.want)
		}
	}
}
