package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/filter"
)

// This file holds the program's screen: its layout, View, the help, the
// filter line and the footer.

func (m *Model) layout() {
	for _, v := range m.views {
		v.setSize(m.width, m.height-3-m.demoHeight()) // header, filter line, footer
	}
	if m.picker != nil {
		m.picker.SetSize(m.width, m.height-2)
	}
	m.help.Width = m.width
	m.setPrompt(m.input.Prompt)
}

func (m *Model) View() string {
	if m.width == 0 {
		return ""
	}
	if m.showHelp {
		return m.helpView()
	}
	if m.mode == modePicker || m.view() == nil {
		body := ""
		if m.picker != nil {
			body = m.picker.View()
		}
		return lipgloss.JoinVertical(lipgloss.Left, body, truncate(m.status, m.width), m.footer())
	}
	v := m.view()
	header := v.header(m.now(), m.active, len(m.views))
	body := v.View()
	if m.demo != nil {
		return lipgloss.JoinVertical(lipgloss.Left, header, body, m.demoBar(), m.filterLine(v), m.footer())
	}
	return lipgloss.JoinVertical(lipgloss.Left, header, body, m.filterLine(v), m.footer())
}

// demoHeight is the lines the demo's bar takes, if a demo plays.
func (m *Model) demoHeight() int {
	switch {
	case m.demo == nil:
		return 0
	case m.height < demoShortBelow:
		return 2
	}
	return demoBarHeight
}

// helpKeys are the ? screen's columns of keys: the picker's, the
// composer's list's or the held pane's while they show, else the view's;
// legend says the badges' short words go with them.
func (m *Model) helpKeys() (groups [][]key.Binding, legend bool) {
	v := m.view()
	switch {
	case m.mode == modePicker && m.picker != nil:
		return m.picker.FullHelp(), false
	case m.mode == modeCompose && v != nil && v.composer != nil:
		return v.composer.FullHelp(), false
	case v != nil && v.focus == paneHeld && !v.overlaid():
		return v.held().FullHelp(), false
	}
	return m.c.keys.FullHelp(), true
}

// helpView is the ? screen: the key map's columns, as many side by side as
// the width takes, the short badge words, and how to close it; cut to the
// height.
func (m *Model) helpView() string {
	s := m.c.styles
	const gap = "   "
	var rows, row []string
	rowW := 0
	groups, withLegend := m.helpKeys()
	for _, group := range groups {
		block := m.help.FullHelpView([][]key.Binding{group})
		w := lipgloss.Width(block)
		if len(row) > 0 && rowW+len(gap)+w > m.width {
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
			row, rowW = nil, 0
		}
		if len(row) > 0 {
			row = append(row, gap)
			rowW += len(gap)
		}
		row = append(row, block)
		rowW += w
	}
	rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
	closing := s.Dim.Render("any key closes help")
	if !withLegend {
		return cutToScreen(strings.Join(rows, "\n\n")+"\n\n"+closing, m.width, m.height)
	}
	var words []string
	for _, long := range []string{"UNMATCHED", "INVALID", "REDACTED", "OPAQUE", "LEAKY", "TIMEOUT"} {
		words = append(words, compactBadges[long]+" "+strings.ToLower(long))
	}
	legend := func(words []string) string {
		return ansi.Wrap(s.Dim.Render("narrow tables shorten badges: "+strings.Join(words, " · ")), m.width, " ")
	}
	var fates []string // each with its fate: word
	for _, b := range fateBadges {
		if b.badge != "" {
			fates = append(fates, b.short+" "+b.word)
		}
	}
	text := strings.Join(rows, "\n\n") + "\n\n" + legend(append(words, fates...)) + "\n\n" + closing
	if strings.Count(text, "\n") >= m.height {
		// The fates' badges only when they fit (not at 80×24; the
		// README lists them).
		text = strings.Join(rows, "\n\n") + "\n\n" + legend(words) + "\n\n" + closing
	}
	return cutToScreen(text, m.width, m.height)
}

// cutToScreen cuts text to h lines of at most w cells.
func cutToScreen(text string, w, h int) string {
	lines := strings.Split(text, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		lines[i] = truncate(l, w)
	}
	return strings.Join(lines, "\n")
}

func (m *Model) filterLine(v *sessionView) string {
	s := m.c.styles
	switch m.mode {
	case modeFilter:
		_, err := filter.Parse(m.input.Value())
		mark := s.FilterOK.Render("✓")
		if err != nil {
			mark = s.FilterBad.Render("✗ " + err.Error())
		}
		return truncate(m.input.View()+"  "+mark, m.width)
	case modeCommand:
		return truncate(m.input.View(), m.width)
	}
	if m.status != "" {
		return truncate(m.status, m.width)
	}
	var parts []string
	if v.filterText != "" {
		// Of the frames the header counts: the same numbers.
		count := fmt.Sprintf("  (%d of %d frames)", len(v.traffic.rows), v.frames())
		if v.traffic.scanning != nil {
			count = "  (reading frame payloads…)"
		}
		parts = append(parts, s.Dim.Render("filter: ")+classify.EscapeString(v.filterText, 200)+s.Dim.Render(count))
	}
	if v.search != nil {
		parts = append(parts, s.Dim.Render("search: ")+classify.EscapeString(v.search.text, 200)+s.Dim.Render("  "+v.search.status()))
	}
	if n := v.heldNow(); n > 0 && v.focus != paneHeld {
		what := "1 frame for you: H shows it"
		if n > 1 {
			what = fmt.Sprintf("%d frames for you: H shows them", n)
		}
		parts = append(parts, "the tap holds "+what+", to forward, edit, drop or answer")
	}
	return truncate(strings.Join(parts, "    "), m.width)
}

// footer is the keys of where keys go now: the picker, the text input,
// the stats, or the pane with focus.
func (m *Model) footer() string {
	var keys []key.Binding
	v := m.view()
	switch {
	case m.mode == modeFilter || m.mode == modeCommand:
		keys = m.c.keys.InputHelp(m.mode == modeFilter)
	case m.mode == modeCompose && v != nil && v.composer != nil:
		keys = v.composer.ShortHelp()
	case m.mode == modePicker || v == nil:
		if m.picker != nil {
			m.picker.back = len(m.views) > 0
			keys = m.picker.ShortHelp()
		}
	default:
		keys = v.focused().ShortHelp()
	}
	return m.c.styles.Footer.Render(m.footerKeys(keys))
}

// footerKeys lays keys out on one line: ? help and q quit, when among
// them, always show, at the end; the others before them as far as they
// fit, an ellipsis saying some did not.
func (m *Model) footerKeys(keys []key.Binding) string {
	k := m.c.keys
	h := m.help
	item := func(b key.Binding) string {
		return h.Styles.ShortKey.Inline(true).Render(b.Help().Key) + " " + h.Styles.ShortDesc.Inline(true).Render(b.Help().Desc)
	}
	sep := h.Styles.ShortSeparator.Inline(true).Render(h.ShortSeparator)
	var rest, always []string
	for _, b := range keys {
		switch {
		case !b.Enabled():
		case sameBinding(b, k.Help) || sameBinding(b, k.Quit):
			always = append(always, item(b))
		default:
			rest = append(rest, item(b))
		}
	}
	tail := strings.Join(always, sep)
	room := m.width
	if tail != "" {
		room -= lipgloss.Width(sep + tail)
	}
	more := " " + h.Styles.Ellipsis.Inline(true).Render(h.Ellipsis)
	head := ""
	for i, it := range rest {
		next := it
		if head != "" {
			next = head + sep + it
		}
		w := lipgloss.Width(next)
		if i < len(rest)-1 {
			w += lipgloss.Width(more) // room for the ellipsis, should the next not fit
		}
		if w > room {
			if head != "" {
				head += more
			}
			break
		}
		head = next
	}
	switch {
	case head == "":
		return truncate(tail, m.width)
	case tail == "":
		return truncate(head, m.width)
	}
	return truncate(head+sep+tail, m.width)
}

// sameBinding reports whether a and b are the same key of the key map.
func sameBinding(a, b key.Binding) bool {
	return a.Help() == b.Help() && slices.Equal(a.Keys(), b.Keys())
}
