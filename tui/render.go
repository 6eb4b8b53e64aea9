package tui

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/alecthomas/chroma/v2"
	"github.com/alecthomas/chroma/v2/formatters"
	"github.com/muesli/termenv"
	"github.com/rpctap/rpctap/sessions"
)

// highlighter colours escaped JSON text for the terminal's profile.
type highlighter struct {
	formatter chroma.Formatter
	style     *chroma.Style
	lexer     chroma.Lexer
}

func newHighlighter(p termenv.Profile, dark bool) *highlighter {
	var f chroma.Formatter
	switch p {
	case termenv.TrueColor:
		f = formatters.Get("terminal16m")
	case termenv.ANSI256:
		f = formatters.Get("terminal256")
	case termenv.ANSI:
		f = formatters.Get("terminal16")
	default:
		return &highlighter{} // ASCII, NO_COLOR: plain text
	}
	parts := chromaParts()
	style := parts.dark
	if !dark {
		style = parts.light // the dark style's light colours vanish on a light background
	}
	return &highlighter{formatter: f, style: style, lexer: parts.json}
}

// highlight returns text coloured, or as it is when colour is off or the
// lexer fails. The text was escaped before, so chroma only adds its own
// escape sequences.
func (h *highlighter) highlight(text string) string {
	if h.formatter == nil {
		return text
	}
	it, err := h.lexer.Tokenise(nil, text)
	if err != nil {
		return text
	}
	var buf bytes.Buffer
	if err := h.formatter.Format(&buf, h.style, it); err != nil {
		return text
	}
	return strings.TrimRight(buf.String(), "\n")
}

// fmtLatency is a latency in the unit that reads best.
func fmtLatency(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d/time.Microsecond)
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// fmtRel is a time since the session started, as seconds with millis.
func fmtRel(us int64) string {
	return fmt.Sprintf("%d.%03d", us/1e6, (us/1e3)%1000)
}

// FormatSize is sessions.FormatSize: a size in bytes as rpctap writes
// sizes everywhere, at most eight cells.
func FormatSize(n int64) string { return sessions.FormatSize(n) }

// sparkline draws values as a row of block characters.
func sparkline(vals []float64, width int) string {
	const blocks = "▁▂▃▄▅▆▇█"
	runes := []rune(blocks)
	if len(vals) > width {
		vals = vals[len(vals)-width:]
	}
	var maxV float64
	for _, v := range vals {
		maxV = max(maxV, v)
	}
	var b strings.Builder
	for _, v := range vals {
		i := 0
		if maxV > 0 {
			i = int(v / maxV * float64(len(runes)-1))
		}
		b.WriteRune(runes[i])
	}
	return b.String()
}

// hbar draws a horizontal bar of n out of max in width cells.
func hbar(n, maxN, width int) string {
	if maxN <= 0 || width <= 0 {
		return ""
	}
	full := n * width / maxN
	if n > 0 && full == 0 {
		full = 1
	}
	return strings.Repeat("█", full)
}
