package tui

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/source"
)

// This file holds the keys: how a key message reaches the mode or pane that
// takes it.

// keyMsg handles a key message. Keys typed in one burst (fast typing, key
// repeat over ssh) come as one message of several runes: each acts as if
// typed alone, the mode it leaves the program in deciding where the next
// goes ("/abc" opens the filter and types abc in it). A paste is text, not
// keys: it goes whole to a text input, and is no command anywhere else.
// The composer's text takes a burst whole too; its lists (the catalog,
// the templates) take keys, one by one.
func (m *Model) keyMsg(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	if msg.Type != tea.KeyRunes || len(msg.Runes) < 2 || msg.Paste || m.composerTyping() {
		return m.key(msg)
	}
	cmds := make([]tea.Cmd, 0, len(msg.Runes))
	for _, r := range msg.Runes {
		_, cmd := m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
		cmds = append(cmds, cmd)
	}
	return m, tea.Batch(cmds...)
}

// composerTyping says whether the composer's text has the keys (not one
// of its lists).
func (m *Model) composerTyping() bool {
	if m.mode != modeCompose {
		return false
	}
	v := m.view()
	return v == nil || v.composer == nil || v.composer.picking == pickNone
}

// key routes a key: a text input with focus gets every key first.
func (m *Model) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	m.status = "" // feedback lasts until the next key
	if m.showHelp {
		m.showHelp = false // any key closes help
		return m, nil
	}
	switch m.mode {
	case modeFilter:
		return m.filterKey(msg)
	case modeCommand:
		return m.commandKey(msg)
	case modeCompose:
		return m.composeKey(msg)
	case modePicker:
		return m.pickerKey(msg)
	}
	if m.demoKey(msg) {
		return m, nil
	}
	if cmd, ok := m.globalKey(msg); ok {
		return m, cmd
	}
	return m.viewKey(msg)
}

// pickerKey handles a key while the picker shows.
func (m *Model) pickerKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.c.keys
	// Typed into the filter, q and ? are text; ctrl+c still quits.
	typing := m.picker.typing()
	switch {
	case key.Matches(msg, k.Interrupt), key.Matches(msg, k.Quit) && !typing:
		return m, tea.Quit
	case key.Matches(msg, k.Help) && !typing:
		m.showHelp = true
		return m, nil
	case key.Matches(msg, k.Back) && len(m.views) > 0 && !m.picker.filter.active():
		m.mode = modeNormal
		return m, nil
	}
	in, _ := m.picker.Update(msg)
	if in.kind == intentOpen {
		src, err := source.Open(in.target)
		if err != nil {
			m.status = err.Error()
			return m, nil
		}
		v := m.newView(src)
		m.views = append(m.views, v)
		m.active = len(m.views) - 1
		m.mode = modeNormal
		m.layout()
		return m, m.keepTicking()
	}
	return m, nil
}

// globalKey handles the keys that do the same in every view: help, quit,
// the filter, the command line, the next and previous session; ok says
// it took the key.
func (m *Model) globalKey(msg tea.KeyMsg) (cmd tea.Cmd, ok bool) {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit, true
	case key.Matches(msg, k.Help):
		m.showHelp = true
		return nil, true
	case key.Matches(msg, k.Filter):
		m.mode = modeFilter
		m.setSearching(false)
		if v := m.view(); v != nil {
			m.input.SetValue(v.filterText)
		}
		m.input.CursorEnd()
		m.input.Focus()
		return textinput.Blink, true
	case key.Matches(msg, k.Command):
		m.mode = modeCommand
		m.setPrompt(":")
		m.input.SetValue("")
		m.input.Focus()
		return textinput.Blink, true
	case key.Matches(msg, k.NextSession):
		if len(m.views) > 0 {
			m.active = (m.active + 1) % len(m.views)
		}
		return nil, true
	case key.Matches(msg, k.PrevSession):
		if len(m.views) > 0 {
			m.active = (m.active + len(m.views) - 1) % len(m.views)
		}
		return nil, true
	}
	return nil, false
}

// viewKey handles a key of the session view: its panes, the stats, the
// composer and the held pane, the filter's clearing, and hands the rest
// to the pane with focus.
func (m *Model) viewKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.c.keys
	v := m.view()
	if v == nil {
		return m, nil
	}
	switch {
	case v.showStats && key.Matches(msg, k.LeaveStats):
		v.showStats = false
		return m, nil
	case v.showCaps && key.Matches(msg, k.LeaveCaps):
		v.showCaps = false
		return m, nil
	case key.Matches(msg, k.Caps):
		v.overlay(&v.showCaps)
		v.caps.Update(indexTickMsg{v.src.Index})
		return m, nil
	case v.showTools && key.Matches(msg, k.LeaveTools):
		v.showTools = false
		return m, nil
	case key.Matches(msg, k.Tools):
		v.overlay(&v.showTools)
		v.tools.Update(indexTickMsg{v.src.Index})
		return m, nil
	case key.Matches(msg, k.NextPane):
		v.focus = (v.focus + 1) % 3
		return m, nil
	case key.Matches(msg, k.PrevPane):
		v.focus = (v.focus + 2) % 3
		return m, nil
	case key.Matches(msg, k.Stats):
		if v.showStats {
			v.overlay(nil)
		} else {
			v.overlay(&v.showStats)
		}
		return m, nil
	case key.Matches(msg, k.Compose) && !v.overlaid():
		return m, m.openComposer(v, "", classify.H2S)
	case key.Matches(msg, k.Held) && !v.overlaid():
		return m, m.openHeld(v, nil)
	case key.Matches(msg, k.Pending):
		v.focus = panePending
		return m, nil
	case key.Matches(msg, k.ClearFilter) && v.focus == paneTraffic && v.search != nil:
		v.search = nil
		return m, nil
	case key.Matches(msg, k.ClearFilter) && v.focus == paneTraffic && v.filterText != "":
		v.setFilter("")
		return m, v.loadDetail()
	case key.Matches(msg, k.Back) && v.focus != paneTraffic:
		v.focus = paneTraffic
		return m, nil
	case (key.Matches(msg, k.ToggleRaw) || key.Matches(msg, k.More)) && !v.overlaid():
		// The detail pane shows the selected frame whichever pane has
		// focus: r switches it from the list too.
		in, cmd := v.detail.Update(msg)
		return m, tea.Batch(cmd, m.do(v, in))
	}
	in, cmd := v.focused().Update(msg)
	return m, tea.Batch(cmd, m.do(v, in))
}
