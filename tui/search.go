package tui

import (
	"fmt"
	"slices"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/filter"
)

// A search marks the frames that match a filter expression while every
// frame stays in the table; n and N step through the marked ones.
type search struct {
	text    string
	f       *filter.Filter
	matches []int32 // index positions that match, ascending
	scanned int     // index entries looked at so far
	// scanning: a background scan (an expression that reads payloads)
	// is matching the entries from scanned on.
	scanning bool
}

// searchDoneMsg carries what a background search found among the entries
// [from, scanned).
type searchDoneMsg struct {
	session int
	s       *search
	from    int
	matches []int32
	scanned int
}

// setSearch marks the frames f matches ("" ends the search).
func (v *sessionView) setSearch(text string, f *filter.Filter) tea.Cmd {
	if text == "" {
		v.search = nil
		return nil
	}
	v.search = &search{text: text, f: f}
	return v.extendSearch()
}

// extendSearch matches the entries added since the last call. An
// expression that reads payloads is matched in the background: the
// command it returns (file reads stay out of Update).
func (v *sessionView) extendSearch() tea.Cmd {
	s := v.search
	if s == nil || s.scanning || s.scanned >= v.src.Index.Len() {
		return nil
	}
	if !s.f.NeedsPayload() {
		x := v.src.Index
		for n := x.Len(); s.scanned < n; s.scanned++ {
			if e := x.At(s.scanned); e.Event == "" && s.f.Match(filterFrame(v.src, &e)) {
				s.matches = append(s.matches, int32(s.scanned))
			}
		}
		return nil
	}
	s.scanning = true
	src, id, from, n, f := v.src, v.id, s.scanned, v.src.Index.Len(), s.f
	return func() tea.Msg {
		var m []int32
		for i := from; i < n; i++ {
			if e := src.Index.At(i); e.Event == "" && f.Match(filterFrame(src, &e)) {
				m = append(m, int32(i))
			}
		}
		return searchDoneMsg{session: id, s: s, from: from, matches: m, scanned: n}
	}
}

// searchDone takes a background search's matches, unless the search
// changed since, and goes on with the entries added meanwhile.
func (v *sessionView) searchDone(msg searchDoneMsg) tea.Cmd {
	s := v.search
	if s == nil || s != msg.s || msg.from != s.scanned {
		return nil
	}
	s.matches = append(s.matches, msg.matches...)
	s.scanned, s.scanning = msg.scanned, false
	return v.extendSearch()
}

// has reports whether the entry at index position pos matches.
func (s *search) has(pos int32) bool {
	if s == nil {
		return false
	}
	_, ok := slices.BinarySearch(s.matches, pos)
	return ok
}

// step selects the next (step 1) or previous (-1) shown frame that
// matches, wrapping at the ends, and says what happened.
func (v *sessionView) stepSearch(step int) string {
	s, p := v.search, v.traffic
	if s.scanning && s.scanned == 0 {
		return "still reading frame payloads for the search"
	}
	if len(p.rows) == 0 || len(s.matches) == 0 {
		return "no frame matches the search"
	}
	cur := int32(-1)
	if p.sel >= 0 && p.sel < len(p.rows) {
		cur = p.rows[p.sel]
	}
	// The first match after (or before) the selected frame.
	j, found := slices.BinarySearch(s.matches, cur)
	if step > 0 && found {
		j++
	} else if step < 0 {
		j--
	}
	n := len(s.matches)
	for k := 0; k < n; k++ {
		i := ((j+step*k)%n + n) % n
		row, shown := slices.BinarySearch(p.rows, s.matches[i])
		if !shown {
			continue // the filter hides it
		}
		wrapped := (step > 0 && s.matches[i] <= cur) || (step < 0 && s.matches[i] >= cur)
		p.sel = row
		p.follow = false
		p.clamp()
		if wrapped {
			if step > 0 {
				return "search went past the last match to the first"
			}
			return "search went past the first match to the last"
		}
		return ""
	}
	return "no frame the filter shows matches the search"
}

// searchStatus is the search's part of the line under the table.
func (s *search) status() string {
	if s.scanning && s.scanned == 0 {
		return "(reading frame payloads…)"
	}
	if len(s.matches) == 1 {
		return "(1 match; n/N go to it)"
	}
	return fmt.Sprintf("(%d matches; n/N step through them)", len(s.matches))
}
