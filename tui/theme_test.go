package tui

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

func TestTheLightThemeDrawsColoursThatReadOnALightBackground(t *testing.T) {
	draw := func(dark bool) Styles {
		r := lipgloss.NewRenderer(io.Discard)
		r.SetColorProfile(termenv.ANSI256)
		r.SetHasDarkBackground(dark)
		return DefaultStyles(r)
	}
	dark, light := draw(true), draw(false)
	for _, tc := range []struct {
		name              string
		dark, light       lipgloss.Style
		darkSGR, lightSGR string
	}{
		{"warning", dark.SevWarn, light.SevWarn, "93m", "38;5;130m"},
		{"error", dark.SevError, light.SevError, "91m", "38;5;160m"},
		{"valid filter", dark.FilterOK, light.FilterOK, "92m", "38;5;28m"},
	} {
		if d := tc.dark.Render("x"); !strings.Contains(d, tc.darkSGR) {
			t.Errorf("%s on a dark background: %q, want %q", tc.name, d, tc.darkSGR)
		}
		if l := tc.light.Render("x"); !strings.Contains(l, tc.lightSGR) {
			t.Errorf("%s on a light background: %q, want %q", tc.name, l, tc.lightSGR)
		}
	}
	if newHighlighter(termenv.ANSI256, false).style.Name == newHighlighter(termenv.ANSI256, true).style.Name {
		t.Error("JSON is highlighted with the same colours on light and dark backgrounds")
	}
}
