package classify

import (
	"strings"
	"testing"
)

// Two lists compare by name and by the fields a model reads: member
// order, spacing and fields outside them (_meta, icons) are no change.
func TestCompareDefinitionsNamesWhatWasAddedRemovedAndChanged(t *testing.T) {
	was := Definitions{
		"a": []byte(`{"name":"a","description":"adds","inputSchema":{"type":"object","properties":{"x":{}}}}`),
		"b": []byte(`{"name":"b","inputSchema":{"type":"object"}}`),
		"d": []byte(`{"name":"d","inputSchema":{"type":"object"}}`),
	}
	now := Definitions{
		"a": []byte(`{"inputSchema":{"properties":{"x":{}},"type":"object"},"name":"a","description":"adds","_meta":{"v":2},"icons":[]}`),
		"b": []byte(`{"name":"b","title":"B","inputSchema":{"type":"object","required":["y"]}}`),
		"c": []byte(`{"name":"c","inputSchema":{"type":"object"}}`),
	}
	var got []string
	for _, c := range CompareDefinitions(DefTool, was, now) {
		switch {
		case c.Added:
			got = append(got, "+"+c.Name)
		case c.Removed:
			got = append(got, "-"+c.Name)
		default:
			got = append(got, "~"+c.Name+":"+strings.Join(c.Fields, ","))
		}
	}
	if want := "~b:title,inputSchema +c -d"; strings.Join(got, " ") != want {
		t.Fatalf("changes %q, want %q", strings.Join(got, " "), want)
	}
}

// A finding against a baseline names the item, what changed, the
// baseline's server and date, and what to type next, peer text escaped.
func TestADriftFromTheBaselineSaysWhatChangedAndWhatToType(t *testing.T) {
	b := &Baseline{Server: "evil\x1b[2Jserver", Accepted: "2026-11-30"}
	c := DefinitionChange{Kind: DefPrompt, Name: "p\u202e", Fields: []string{"description"}}
	text := c.againstBaselineText(b)
	for _, want := range []string{`Prompt "p\u202e" changed its description`, `server "evil\x1b[2Jserver" on 2026-11-30`, `rpctap baseline show 'evil\x1b[2Jserver'`} {
		if !strings.Contains(text, want) {
			t.Errorf("text %q lacks %q", text, want)
		}
	}
	if strings.ContainsAny(text, "\x1b\u202e") {
		t.Errorf("text %q holds raw peer bytes", text)
	}
}
