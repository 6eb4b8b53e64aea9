package tui

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// This file holds the badges a traffic row ends with: its findings and
// its fate, in long or short words as the column's width allows.

// compactBadges are the short words of the findings' badges, for narrow
// tables (the help screen spells them out); fateBadges has the fates'.
var compactBadges = map[string]string{
	"UNMATCHED": "UNM", "INVALID": "INV", "REDACTED": "RED", "OPAQUE": "OPQ",
	"LEAKY": "LKY", "TIMEOUT": "TMO", "LATE": "LATE",
}

// A fateBadge is how a row says one fate word (sessions.FateWords): its
// badge, and the badge's short word for a narrow table.
type fateBadge struct{ word, badge, short string }

// fateBadges say a frame's fate (sessions.Fate.Set), a badge for each of
// its words, in the order a row shows them: the tap holding it for the
// user first, the row's story. They are the fate: filter token's words:
// fate:held matches every row that says HELD, whatever became of the
// frame then. An injected frame says so by the + before its kind, with
// no badge.
var fateBadges = []fateBadge{
	{sessions.FateHeld, "HELD", "HLD"},
	{sessions.FateEdited, "EDITED", "EDT"},
	{sessions.FateDropped, "DROPPED", "DRP"},
	{sessions.FateAnswered, "ANSWERED", "ANS"},
	{sessions.FateExpired, "EXPIRED", "EXP"},
	{sessions.FateDetached, "DETACHED", "DET"},
	{sessions.FateOverflow, "OVERFLOW", "OVF"},
	{sessions.FateWaited, "WAITED", "WTD"},
	{sessions.FateEndedHeld, "ENDED", "END"},
	{sessions.FateCaptured, "CAPTURED", "CAP"},
	{sessions.FatePartial, "PARTIAL", "PRT"},
	{sessions.FateInjected, "", ""},
}

// in reports whether the fate set s holds the badge's word.
func (b fateBadge) in(s sessions.FateSet) bool {
	bit, _ := sessions.ParseFateWord(b.word)
	return s&bit != 0
}

// shortBadge is a badge's short word.
func shortBadge(long string) string {
	if short, ok := compactBadges[long]; ok {
		return short
	}
	for _, b := range fateBadges {
		if b.badge == long {
			return b.short
		}
	}
	return long
}

// badges are the flags the tool exists for, as words a glance catches, in
// at most w cells: in short words when the long ones do not fit; plain (no
// colour) for a selected row.
func (p *trafficPane) badges(e *sessions.Entry, w int, plain bool) string {
	s := p.c.styles
	names := entryBadges(e)
	words := func(short bool) []string {
		out := make([]string, 0, len(names)+1)
		for _, n := range names {
			if short {
				n = shortBadge(n)
			}
			out = append(out, n)
		}
		if m := worstMark(e.Worst); m != "" {
			out = append(out, m)
		}
		return out
	}
	ws := words(false)
	if lipgloss.Width(strings.Join(ws, " ")) > w {
		ws = words(true)
	}
	cut := lipgloss.Width(strings.Join(ws, " ")) > w
	for cut && len(ws) > 1 && lipgloss.Width(strings.Join(ws, " "))+2 > w {
		ws = ws[:len(ws)-1]
	}
	if !plain {
		sev := map[string]lipgloss.Style{"E": s.SevError, "W": s.SevWarn, "i": s.SevInfo}
		for i, word := range ws {
			if i < len(names) {
				ws[i] = s.Badge[names[i]].Render(word)
			} else {
				ws[i] = sev[word].Render(word)
			}
		}
	}
	out := strings.Join(ws, " ")
	if cut {
		out += " …"
	}
	return out
}

func worstMark(s classify.Severity) string {
	switch s {
	case classify.Error:
		return "E"
	case classify.Warn:
		return "W"
	case classify.Info:
		return "i"
	}
	return ""
}

// entryBadges names the flags an entry carries: its fate's first, then
// its findings'.
func entryBadges(e *sessions.Entry) []string {
	has := func(c classify.Code) bool { return e.Codes.Has(c) }
	var out []string
	if fate := e.Fate().Set(); fate != 0 {
		for _, b := range fateBadges {
			if b.badge != "" && b.in(fate) {
				out = append(out, b.badge)
			}
		}
	}
	if has(classify.CodeUnmatchedResponse) || has(classify.CodeDuplicateResponse) {
		out = append(out, "UNMATCHED")
	}
	if e.Kind == classify.KindInvalid || e.Kind == classify.KindNotJSON || e.Kind == classify.KindNonObject ||
		(e.Kind == classify.KindStray && e.Dir == classify.H2S) {
		out = append(out, "INVALID")
	}
	if e.Redacted || has(classify.CodeRedacted) {
		out = append(out, "REDACTED")
	}
	if has(classify.CodeOpaqueError) {
		out = append(out, "OPAQUE")
	}
	if has(classify.CodeLeakyError) {
		out = append(out, "LEAKY")
	}
	if has(classify.CodeTimeout) {
		out = append(out, "TIMEOUT")
	} else if has(classify.CodeLateResponse) {
		out = append(out, "LATE")
	}
	if has(classify.CodeFramesMissing) {
		out = append(out, "GAP") // its answer, or its request, may be among frames the file is missing
	}
	return out
}
