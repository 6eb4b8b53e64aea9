package inject

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
)

// A Frame is one frame to inject: its body, and whether the framing is
// added when it is sent.
type Frame struct {
	Body []byte
	// Raw says the body goes on the wire exactly as it is, with no framing
	// added (no newline on an ndjson stream, no Content-Length header on
	// an lsp one).
	Raw bool
}

// ParseRaw reads what a user typed in the composer (or an editor) into
// frames. The syntax:
//
//   - Each line is one frame. The line feed that ends a line is not part
//     of the frame: the framing of the stream is added when it is sent (a
//     newline on ndjson, a Content-Length header on lsp). Empty lines are
//     skipped, and so is the line feed an editor leaves at the end.
//   - Except: a text that is, as a whole, one JSON value written over
//     several lines (pretty-printed) and holds no escapes below is one
//     frame, compacted to one line.
//   - \xHH (two hex digits) is the byte HH, anywhere in a line, inside
//     JSON strings or outside them: \x00 and \x1b are control bytes, \xff
//     is a byte that is not UTF-8, \x0a a line feed inside the frame.
//   - \c at the very end of a line sends that frame as written, with no
//     framing: a line with no final newline on ndjson, or bytes with no
//     header on lsp (write your own header with \x0d\x0a). Such a frame
//     may leave the stream inside a frame: Preview says so.
//   - Any other backslash is kept as it is, with the character after it,
//     so JSON's own escapes (\" \\ \n \u00e9) pass through unchanged:
//     \\x41 is JSON's escaped backslash then x41. To send a literal
//     backslash before an x, write \x5c.
//
// An error names the line and says what to write.
func ParseRaw(text string) ([]Frame, error) {
	if f, ok := prettyJSON(text); ok {
		return []Frame{f}, nil
	}
	return ParseRawLines(text)
}

// ParseRawLines is ParseRaw without its exception for pretty-printed
// JSON: every line but an empty one is a frame, whatever the lines hold,
// so that the line feeds written are the bytes sent (rpctap inject --raw reads its text
// so, the bytes as they are).
func ParseRawLines(text string) ([]Frame, error) {
	var frames []Frame
	for i, line := range bytes.Split([]byte(text), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		f, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		frames = append(frames, f)
	}
	return frames, nil
}

// prettyJSON reads a text that is one JSON value over several lines, with
// no escape of the raw syntax, as one compacted frame.
func prettyJSON(text string) (Frame, bool) {
	b := []byte(text)
	if bytes.Count(bytes.TrimRight(b, " \t\r\n"), []byte("\n")) == 0 || hasRawEscape(b) || !json.Valid(b) {
		return Frame{}, false
	}
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return Frame{}, false
	}
	return Frame{Body: out.Bytes()}, true
}

// hasRawEscape reports whether b holds \x or \c as ParseRaw reads them.
func hasRawEscape(b []byte) bool {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == '\\' {
			if b[i+1] == 'x' || b[i+1] == 'c' {
				return true
			}
			i++
		}
	}
	return false
}

func parseLine(line []byte) (Frame, error) {
	var f Frame
	out := make([]byte, 0, len(line))
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c != '\\' || i+1 == len(line) {
			out = append(out, c)
			continue
		}
		switch line[i+1] {
		case 'x':
			if i+4 > len(line) {
				return f, fmt.Errorf(`\x at column %d needs two hex digits after it, as in \x00`, i+1)
			}
			v, err := strconv.ParseUint(string(line[i+2:i+4]), 16, 8)
			if err != nil {
				return f, fmt.Errorf(`\x at column %d needs two hex digits after it, as in \x00 or \xff`, i+1)
			}
			out = append(out, byte(v))
			i += 3
		case 'c':
			if i+2 != len(line) {
				return f, fmt.Errorf(`\c at column %d may only end a line (it sends the frame with no framing); for a backslash and a c, write \x5cc`, i+1)
			}
			f.Raw = true
			i++
		default:
			out = append(out, c, line[i+1])
			i++
		}
	}
	f.Body = out
	return f, nil
}

// Wire returns the bytes the frames put on a stream of the framing given
// (auto is read as ndjson): each body with its newline or Content-Length
// header, raw frames as they are.
func Wire(frames []Frame, framing classify.Framing) []byte {
	var b []byte
	for _, f := range frames {
		b = append(b, WireFrame(f, framing)...)
	}
	return b
}

// WireFrame is Wire of one frame.
func WireFrame(f Frame, framing classify.Framing) []byte {
	if f.Raw {
		return f.Body
	}
	return classify.AppendFrame(make([]byte, 0, len(f.Body)+32), framing, f.Body, nil)
}

// FormatRaw writes frames in the syntax ParseRaw reads, one frame a line:
// control bytes, DEL, bytes that are not UTF-8, and a backslash before
// an x or a c as \xHH, so that ParseRaw gives the frames back. It is how
// the composer shows a catalog entry to edit.
func FormatRaw(frames [][]byte) string {
	var b strings.Builder
	for i, f := range frames {
		if i > 0 {
			b.WriteByte('\n')
		}
		for j := 0; j < len(f); {
			c := f[j]
			if c == '\\' && j+1 < len(f) && f[j+1] >= 0x20 && f[j+1] < 0x7f && f[j+1] != 'x' && f[j+1] != 'c' {
				// ParseRaw keeps a backslash and the character after it.
				b.Write(f[j : j+2])
				j += 2
				continue
			}
			r, n := utf8.DecodeRune(f[j:])
			if r == utf8.RuneError && n <= 1 || c < 0x20 || c == 0x7f || c == '\\' && j+1 < len(f) {
				fmt.Fprintf(&b, `\x%02x`, c)
				j++
				continue
			}
			b.Write(f[j : j+n])
			j += n
		}
	}
	return b.String()
}
