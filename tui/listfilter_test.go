package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
)

// typeKeys gives the model each rune of s as a key.
func typeKeys(m *Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

// The session picker narrows its lists to what is typed after / (q and ?
// are text there), enter keeps the filter and opens what is selected in
// what is left, esc drops it; ? shows the picker's keys.
func TestSessionPickerFiltersAsTypedAndHasHelp(t *testing.T) {
	m := New(asciiRenderer(), nil)
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 24})
	m.Update(pickerMsg{
		live:  []tap.Info{{Name: "gopls", Socket: "/run/gopls.sock", Argv: []string{"gopls"}}, {Name: "everything", Socket: "/run/e.sock", Argv: []string{"npx", "server-everything"}}},
		files: []sessions.SessionFile{{Path: "/s/gopls-hover.jsonl"}, {Path: "/s/everything-echo.jsonl"}, {Path: "/s/quiet.jsonl"}},
	})
	m.Update(press("?"))
	if v := m.View(); !m.showHelp || !strings.Contains(v, "filter") || !strings.Contains(v, "enter open") || !strings.Contains(v, "any key closes help") || strings.Contains(v, "raw/pretty") {
		t.Fatalf("? over the picker shows its keys:\n%s", v)
	}
	m.Update(press("x")) // closes help only
	if m.showHelp {
		t.Fatal("a key does not close the help")
	}
	m.Update(press("/"))
	typeKeys(m, "EVERYTHING q?")
	if m.mode != modePicker || m.showHelp {
		t.Fatalf("q or ? typed into the filter acted: mode %v, help %v", m.mode, m.showHelp)
	}
	for range len(" q?") {
		m.Update(tea.KeyMsg{Type: tea.KeyBackspace})
	}
	v := m.View()
	if !strings.Contains(v, "/EVERYTHING") || !strings.Contains(v, "2 of 5") || strings.Contains(v, "gopls") || strings.Contains(v, "quiet") {
		t.Fatalf("the picker filtered by everything:\n%s", v)
	}
	if f := m.footer(); !strings.Contains(f, "enter apply") || !strings.Contains(f, "esc cancel") {
		t.Errorf("the footer while the filter is typed: %s", f)
	}
	m.Update(press("enter")) // keeps the filter
	m.Update(press("j"))
	if in, _ := m.picker.Update(press("enter")); in.kind != intentOpen || in.target != "/s/everything-echo.jsonl" {
		t.Errorf("enter on the second row left: %+v", in)
	}
	m.Update(press("esc"))
	if v := m.View(); !strings.Contains(v, "gopls-hover") || strings.Contains(v, "filter:") {
		t.Errorf("esc did not drop the filter:\n%s", v)
	}
}

// The composer's template list (and its catalog) narrows to what is typed
// after /, and ? over it shows its keys; enter picks from what is left.
func TestTemplatePickerFiltersAsTypedAndHasHelp(t *testing.T) {
	p := newComposer(newCommon(asciiRenderer()), 1, classify.H2S, inject.Options{IDs: inject.NewIDs()}, nil, map[string]bool{})
	p.SetSize(100, 14)
	p.setTemplates([]inject.Template{
		{Name: "tools/list", Dir: classify.H2S, Body: []byte(`{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/list"}`)},
		{Name: "tools/call echo", Dir: classify.H2S, Body: []byte(`{"jsonrpc":"2.0","id":"rpctap-2","method":"tools/call","params":{"name":"echo"}}`)},
		{Name: "tools/call get-sum", Dir: classify.H2S, Body: []byte(`{"jsonrpc":"2.0","id":"rpctap-3","method":"tools/call","params":{"name":"get-sum"}}`)},
	})
	if in, _ := p.Update(press("?")); in.kind != intentHelp {
		t.Error("? over the templates does not ask for their help")
	}
	p.Update(press("/"))
	for _, r := range "sum" {
		p.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	if v := p.View(); !strings.Contains(v, "/sum") || !strings.Contains(v, "1 of 3") || strings.Contains(v, "tools/call echo") {
		t.Fatalf("the templates filtered by sum:\n%s", v)
	}
	p.Update(press("enter")) // keeps the filter
	p.Update(press("enter")) // picks
	if p.picking != pickNone || !strings.Contains(p.ta.Value(), "get-sum") {
		t.Errorf("enter picked %q", p.ta.Value())
	}
	p.Update(ctrl(tea.KeyCtrlK))
	p.Update(press("/"))
	for _, r := range "object-id" {
		p.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
	if v := p.View(); !strings.Contains(v, "object-id") || strings.Contains(v, "null-id ") {
		t.Errorf("the catalog filtered by object-id:\n%s", v)
	}
	p.Update(press("esc")) // drops the filter
	p.Update(press("esc")) // closes the list
	if p.picking != pickNone {
		t.Error("esc, esc did not leave the catalog")
	}
}
