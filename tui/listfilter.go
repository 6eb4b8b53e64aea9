package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/rpctap/rpctap/classify"
)

// listFilter narrows a list (the session picker's, the composer's
// catalog and templates) to the items whose text holds what was typed
// after / (in any case). While it is typed in, every key goes to it but
// enter, which keeps the filter and gives the keys back to the list, and
// esc, which drops it; esc drops a filter kept, too.
type listFilter struct {
	c      *common
	input  textinput.Model
	typing bool
}

func newListFilter(c *common) listFilter {
	in := textinput.New()
	in.Prompt = "/"
	in.Cursor.SetMode(cursor.CursorStatic) // no blink: no command to run
	return listFilter{c: c, input: in}
}

// active says the filter narrows the list, or is being typed.
func (f *listFilter) active() bool { return f.typing || f.input.Value() != "" }

// matches reports whether an item's text passes the filter.
func (f *listFilter) matches(text string) bool {
	q := strings.ToLower(strings.TrimSpace(f.input.Value()))
	return q == "" || strings.Contains(strings.ToLower(text), q)
}

// reset drops the filter.
func (f *listFilter) reset() {
	f.typing = false
	f.input.SetValue("")
	f.input.Blur()
}

// key gives the filter a key: / starts typing, and while typing it takes
// every key; esc drops a filter kept. took says the key was the filter's,
// changed that what it lets through may have changed.
func (f *listFilter) key(msg tea.KeyMsg) (took, changed bool) {
	k := f.c.keys
	if !f.typing {
		switch {
		case key.Matches(msg, k.Filter):
			f.typing = true
			f.input.Focus()
			f.input.CursorEnd()
			return true, false
		case key.Matches(msg, k.ClearFilter) && f.input.Value() != "":
			f.reset()
			return true, true
		}
		return false, false
	}
	switch {
	case key.Matches(msg, k.Apply):
		f.typing = false
		f.input.Blur()
		return true, false
	case key.Matches(msg, k.Cancel):
		f.reset()
		return true, true
	}
	before := f.input.Value()
	f.input, _ = f.input.Update(msg)
	return true, f.input.Value() != before
}

// View is the filter's line: the input while typed in, the filter kept
// with how many items pass it, or "" with no filter.
func (f *listFilter) View(shown, total, width int) string {
	s := f.c.styles
	switch {
	case f.typing:
		f.input.Width = max(width-lipgloss.Width(f.input.Prompt)-20, 1)
		return truncate(f.input.View()+s.Dim.Render(fmt.Sprintf("  %d of %d", shown, total)), width)
	case f.input.Value() != "":
		return truncate(s.Dim.Render("filter: ")+classify.EscapeString(f.input.Value(), 200)+s.Dim.Render(fmt.Sprintf("  (%d of %d; esc clears it)", shown, total)), width)
	}
	return ""
}

// ShortHelp is the footer while the filter is typed in.
func (f *listFilter) ShortHelp() []key.Binding {
	k := f.c.keys
	return []key.Binding{k.Apply, k.Cancel}
}
