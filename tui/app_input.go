package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/rpctap/rpctap/filter"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tap"
)

// This file holds the two lines of input: the filter (or search) and the
// command line.

// setSearching switches the filter input between filtering (frames that do
// not match are hidden) and searching (they stay; matches are marked).
func (m *Model) setSearching(on bool) {
	m.searching = on
	m.setPrompt("filter /")
	if on {
		m.setPrompt("search /")
	}
}

func (m *Model) filterKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	v := m.view()
	if key.Matches(msg, m.c.keys.SearchMode) {
		m.setSearching(!m.searching)
		return m, nil
	}
	switch {
	case key.Matches(msg, m.c.keys.Apply):
		m.leaveInput()
		cmd := m.applyExpr(v, m.searching, m.input.Value())
		if m.searching && cmd == nil && v != nil && v.search != nil {
			// A search ready at once: go to its first match.
			m.status = v.nextMatch(1)
			return m, v.loadDetail()
		}
		return m, cmd
	case key.Matches(msg, m.c.keys.Cancel):
		m.leaveInput()
		return m, nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

// leaveInput ends typing in the filter or command line.
func (m *Model) leaveInput() {
	m.mode = modeNormal
	m.input.Blur()
}

// applyExpr applies a filter expression to v: as a filter, or as a search.
func (m *Model) applyExpr(v *sessionView, search bool, text string) tea.Cmd {
	if v == nil {
		return nil
	}
	what := "filter"
	if search {
		what = "search"
	}
	f, err := filter.Parse(text)
	if err != nil {
		m.status = fmt.Sprintf("the %s did not parse (%v); it was not applied", what, err)
		return nil
	}
	if search {
		return v.setSearch(text, f)
	}
	if cmd := v.applyFilter(text, f); cmd != nil {
		return cmd
	}
	return v.loadDetail()
}

func (m *Model) commandKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch {
	case key.Matches(msg, m.c.keys.Apply):
		m.leaveInput()
		return m, m.runCommand(strings.TrimSpace(m.input.Value()))
	case key.Matches(msg, m.c.keys.Cancel):
		m.leaveInput()
		return m, nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

// runCommand carries out a : command.
func (m *Model) runCommand(line string) tea.Cmd {
	name, arg, _ := strings.Cut(line, " ")
	v := m.view()
	switch name {
	case "q", "quit":
		return tea.Quit
	case "open":
		if arg == "" {
			m.picker = newPicker(m.c)
			m.mode = modePicker
			m.layout()
			return tea.Batch(m.picker.refresh(), m.keepTicking())
		}
		src, err := source.Open(arg)
		if err != nil {
			m.status = err.Error()
			return nil
		}
		m.views = append(m.views, m.newView(src))
		m.active = len(m.views) - 1
		m.layout()
		return m.keepTicking()
	case "goto", "g":
		var seq int64
		if _, err := fmt.Sscan(arg, &seq); err != nil || v == nil {
			m.status = "usage: :goto SEQ"
			return nil
		}
		if !v.jumpSeq(seq) {
			m.status = fmt.Sprintf("no frame #%d shows", seq)
		}
		return v.loadDetail()
	case "filter", "search":
		return m.applyExpr(v, name == "search", arg)
	case "intercept":
		if v == nil {
			return nil
		}
		expr := strings.TrimSpace(arg)
		if expr == "off" {
			expr = ""
		}
		if err := tap.ParseIntercept(expr); err != nil {
			m.status = err.Error()
			return nil
		}
		return m.openHeld(v, &tap.HoldFilters{H2S: expr, S2H: expr})
	case "stderr":
		if v != nil {
			v.traffic.showErr = !v.traffic.showErr
			return v.refilter()
		}
	case "":
	default:
		m.status = fmt.Sprintf("unknown command %q: try open, goto, filter, search, intercept, stderr, quit", name)
	}
	return nil
}

// setPrompt sets the input's prompt. The text scrolls within what the
// line leaves to the prompt, the cursor and the filter's ✓ or ✗ with why.
func (m *Model) setPrompt(p string) {
	m.input.Prompt = p
	m.input.Width = max(m.width-lipgloss.Width(p)-1-min(m.width/3, 40), 1)
}
