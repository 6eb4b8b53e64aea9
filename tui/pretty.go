package tui

import (
	"encoding/json"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/rpctap/rpctap/classify"
)

// A frame is laid out for the detail pane only as far as a budget of
// screen lines goes: a frame of many megabytes costs what a screenful
// costs, and the pane says how much it shows and how to see more.

// detailLines is how many screen lines of a frame the detail pane lays
// out at first; the More key doubles it.
const detailLines = 1000

// layout is a frame's text as the detail pane draws it: lines of at most
// the pane's width, escaped, and how many bytes of the frame they cover.
type layout struct {
	lines  []string
	isJSON bool
	used   int // bytes of the frame the lines show; len(frame) when all
}

// prettyPrefix lays out the start of a frame for reading: indented JSON
// when it is JSON, its escaped bytes otherwise, broken into lines of at
// most width cells, at most maxLines of them. The work done is bounded by
// maxLines and width, whatever the frame's size (but for checking that the
// frame is JSON).
func prettyPrefix(frame []byte, width, maxLines int) layout {
	width = max(width, 1)
	if json.Valid(frame) {
		return indentPrefix(frame, width, maxLines)
	}
	return escapedPrefix(frame, width, maxLines)
}

// escapedPrefix is the start of b, escaped (line feeds included) and cut
// every width cells, at most maxLines lines.
func escapedPrefix(b []byte, width, maxLines int) layout {
	budget := width * maxLines
	// Each byte is one cell or more once escaped (a multi-byte character
	// may be two cells): budget bytes fill the lines.
	n := min(len(b), budget)
	for n < len(b) && n > 0 && !utf8Start(b[n]) {
		n--
	}
	text := ansi.Hardwrap(classify.Escape(b[:n], 0), width, true)
	lines := strings.Split(text, "\n")
	if len(lines) > maxLines {
		lines = lines[:maxLines]
	}
	return layout{lines: lines, used: n}
}

func utf8Start(c byte) bool { return c&0xc0 != 0x80 }

// indentPrefix indents valid JSON as json.Indent does (two spaces, empty
// objects and arrays kept as {} and []), escapes each line, and stops once
// maxLines lines of width cells are full. A line longer than what is left
// is cut, and the layout ends there.
func indentPrefix(src []byte, width, maxLines int) layout {
	out := layout{isJSON: true}
	// add adds a line, escaped and broken at width; it reports false when
	// the line had to be cut to fit the lines left.
	add := func(l []byte) bool {
		left := maxLines - len(out.lines)
		// JSON is escaped as JSON (classify.AppendSafeJSON): what a
		// terminal must not see becomes a JSON escape of the same
		// character, so a peer's backslash is one of JSON's own and the
		// text reads as the JSON it is.
		s := string(classify.AppendSafeJSON(nil, l))
		fits := ansi.StringWidth(s) <= left*width
		if !fits {
			s = ansi.Truncate(s, left*width-1, "…")
		}
		out.lines = append(out.lines, strings.Split(ansi.Hardwrap(s, width, true), "\n")...)
		return fits
	}
	// A line is given as many bytes as the lines left can hold; one
	// longer is cut before it is escaped, so the bytes past what the
	// lines can hold are never looked at.
	o := classify.IndentOptions{MaxLine: maxLines * width}
	classify.Indent(src, o, func(l []byte, end int, cut bool) int {
		if cut {
			n := len(l) - 1
			for n > 0 && !utf8Start(l[n]) {
				n--
			}
			l = append(l[:n:n], "…"...)
		}
		out.used = end
		if !add(l) || cut {
			// What is shown is cut: not the whole frame, even when
			// the cut line is its last.
			out.used = min(end, len(src)-1)
			return -1
		}
		if len(out.lines) >= maxLines {
			return -1
		}
		return (maxLines - len(out.lines)) * width
	})
	return out
}
