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
	var (
		cur        []byte
		depth      int
		inString   bool
		escaped    bool
		needIndent bool
		cut        bool
	)
	// flush adds the line built so far, escaped and broken at width; it
	// reports false when the budget is spent.
	flush := func() bool {
		left := maxLines - len(out.lines)
		// JSON is escaped as JSON (classify.AppendSafeJSON): what a
		// terminal must not see becomes a JSON escape of the same
		// character, so a peer's backslash is one of JSON's own and the
		// text reads as the JSON it is.
		l := string(classify.AppendSafeJSON(nil, cur))
		if ansi.StringWidth(l) > left*width {
			l = ansi.Truncate(l, left*width-1, "…")
			cut = true
		}
		out.lines = append(out.lines, strings.Split(ansi.Hardwrap(l, width, true), "\n")...)
		return !cut && len(out.lines) < maxLines
	}
	// newline ends the line and begins the next, indented.
	newline := func() bool {
		if !flush() {
			return false
		}
		cur = append(cur[:0], strings.Repeat("  ", depth)...)
		return true
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			cur = append(cur, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		} else {
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				continue
			}
			if needIndent && c != '}' && c != ']' {
				// The first member of an object or array.
				needIndent = false
				depth++
				if !newline() {
					out.used = i
					return out
				}
			}
			switch c {
			case '"':
				inString = true
				cur = append(cur, c)
			case '{', '[':
				needIndent = true
				cur = append(cur, c)
			case ',':
				cur = append(cur, c)
				if !newline() {
					out.used = i + 1
					return out
				}
			case ':':
				cur = append(cur, c, ' ')
			case '}', ']':
				if needIndent {
					needIndent = false // empty: {} or []
				} else {
					depth--
					if !newline() {
						out.used = i
						return out
					}
				}
				cur = append(cur, c)
			default:
				cur = append(cur, c)
			}
		}
		// A line longer than the budget left is cut before it is
		// escaped: the bytes past what the lines can hold are never
		// looked at.
		if budget := (maxLines - len(out.lines)) * width; len(cur) > budget {
			n := budget - 1
			for n > 0 && !utf8Start(cur[n]) {
				n--
			}
			cur = append(cur[:n], "…"...)
			flush()
			out.used = i
			return out
		}
	}
	out.used = len(src)
	if len(cur) > 0 {
		flush()
	}
	if cut {
		out.used = len(src) - 1
	}
	return out
}
