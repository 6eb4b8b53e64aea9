package tui

import "github.com/charmbracelet/lipgloss"

// Styles holds every style the program draws with, built once.
type Styles struct {
	App, Header, HeaderDim, Footer lipgloss.Style
	Pane, PaneFocused              lipgloss.Style
	Title, Dim, Selected           lipgloss.Style
	RowH2S, RowS2H, RowErr         lipgloss.Style
	SevError, SevWarn, SevInfo     lipgloss.Style
	Badge                          map[string]lipgloss.Style
	FilterOK, FilterBad            lipgloss.Style
	Pending, Near, Over            lipgloss.Style
	Bar                            lipgloss.Style
}

// DefaultStyles builds the styles for a renderer (which knows the
// terminal's colour profile, NO_COLOR giving plain text, and whether its
// background is dark: each colour has a light-background variant).
func DefaultStyles(r *lipgloss.Renderer) Styles {
	// Bright red, yellow, blue and green on a dark background; darker
	// ones that read on a light one.
	red := lipgloss.AdaptiveColor{Light: "160", Dark: "9"}
	yellow := lipgloss.AdaptiveColor{Light: "130", Dark: "11"}
	blue := lipgloss.AdaptiveColor{Light: "25", Dark: "12"}
	green := lipgloss.AdaptiveColor{Light: "28", Dark: "10"}
	s := Styles{}
	s.App = r.NewStyle()
	s.Header = r.NewStyle().Bold(true)
	s.HeaderDim = r.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "240", Dark: "245"})
	s.Footer = r.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "240", Dark: "245"})
	border := lipgloss.RoundedBorder()
	s.Pane = r.NewStyle().Border(border).BorderForeground(lipgloss.AdaptiveColor{Light: "250", Dark: "238"})
	s.PaneFocused = r.NewStyle().Border(border).BorderForeground(lipgloss.AdaptiveColor{Light: "27", Dark: "75"})
	s.Title = r.NewStyle().Bold(true)
	s.Dim = r.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "244", Dark: "242"})
	s.Selected = r.NewStyle().Reverse(true)
	s.RowH2S = r.NewStyle()
	s.RowS2H = r.NewStyle()
	s.RowErr = r.NewStyle().Foreground(lipgloss.AdaptiveColor{Light: "244", Dark: "242"})
	s.SevError = r.NewStyle().Foreground(red).Bold(true)
	s.SevWarn = r.NewStyle().Foreground(yellow)
	s.SevInfo = r.NewStyle().Foreground(blue)
	badge := func(bg string) lipgloss.Style {
		return r.NewStyle().Background(lipgloss.Color(bg)).Foreground(lipgloss.Color("15")).Bold(true)
	}
	s.Badge = map[string]lipgloss.Style{
		"UNMATCHED": badge("1"),
		"INVALID":   badge("1"),
		"REDACTED":  badge("5"),
		"OPAQUE":    badge("5"),
		"LEAKY":     badge("5"),
		"TIMEOUT":   badge("3"),
		"LATE":      badge("3"),
		"GAP":       badge("3"),
		"CAPTURED":  badge("4"),
		"PARTIAL":   badge("1"),
		"HELD":      badge("6"),
		"EDITED":    badge("6"),
		"DROPPED":   badge("1"),
		"ANSWERED":  badge("6"),
		"EXPIRED":   badge("3"),
		"DETACHED":  badge("3"),
		"OVERFLOW":  badge("3"),
		"WAITED":    badge("8"),
		"ENDED":     badge("3"),
	}
	s.FilterOK = r.NewStyle().Foreground(green)
	s.FilterBad = r.NewStyle().Foreground(red)
	s.Pending = r.NewStyle()
	s.Near = r.NewStyle().Foreground(yellow)
	s.Over = r.NewStyle().Foreground(red).Bold(true)
	s.Bar = r.NewStyle().Foreground(blue)
	return s
}
