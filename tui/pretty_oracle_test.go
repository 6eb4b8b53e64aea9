package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/rpctap/rpctap/classify"
)

// The indentPrefix that walked the frame byte by byte, kept as the oracle
// of the one laid out over classify.Indent: for any valid JSON, width and
// number of lines, both give the same lines and say they show as many
// bytes. Run it with
//
//	go test -run XXX -fuzz FuzzIndentPrefixMatchesItsOracle -fuzztime 60s ./tui
func FuzzIndentPrefixMatchesItsOracle(f *testing.F) {
	for _, s := range []string{"{}", "[]", `{"a":1}`, ` [ 1 , "x y" , { } , [ [ ] ] ] `, `{"a":[],"b":[1,2,{"c":"d\"e\\\\"}],"e":{"f":null,"g":true}}`,
		`{"s":"\u202e evil \u001b[2J","t":"日本語"}`, `"just a string"`, `12`, "{\"k\" : \"é\u00e9\" ,\n\"l\":[ -1.5e3 ,true]}\n"} {
		for _, wl := range [][2]uint8{{1, 1}, {3, 2}, {8, 3}, {40, 100}, {200, 200}} {
			f.Add([]byte(s), wl[0], wl[1])
		}
	}
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "sessions", "*", "*.jsonl"))
	for k, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		n := 0
		for l := range bytes.Lines(b) {
			if n == 5 {
				break
			}
			f.Add(l, uint8(4+k%40), uint8(1+n*3))
			n++
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte, width, maxLines uint8) {
		if !json.Valid(frame) {
			return
		}
		w, n := max(int(width), 1), max(int(maxLines), 1)
		got := prettyPrefix(frame, w, n)
		want := oracleIndentPrefix(frame, w, n)
		if got.used != want.used || !slices.Equal(got.lines, want.lines) {
			t.Fatalf("%q in %d lines of %d: used %d, lines\n%s\noracle: used %d, lines\n%s", frame, n, w,
				got.used, strings.Join(got.lines, "\n"), want.used, strings.Join(want.lines, "\n"))
		}
	})
}

// oracleIndentPrefix indents valid JSON as json.Indent does (two spaces, empty
// objects and arrays kept as {} and []), escapes each line, and stops once
// maxLines lines of width cells are full. A line longer than what is left
// is cut, and the layout ends there.
func oracleIndentPrefix(src []byte, width, maxLines int) layout {
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

// BenchmarkIndentPrefix lays out a frame of 2.8 MB in a screenful and in
// the detail pane's first budget, with the oracle beside it as the
// baseline of the same run.
func BenchmarkIndentPrefix(b *testing.B) {
	items := bytes.Repeat([]byte(`{"a":1,"b":[1,2,{"c":"zz"}]},`), 100_000)
	frame := append([]byte(`{"jsonrpc":"2.0","id":2,"result":{"items":[`), items[:len(items)-1]...)
	frame = append(frame, `]}}`...)
	for _, c := range []struct {
		name string
		fn   func([]byte, int, int) layout
	}{{"Indent", indentPrefix}, {"oracle", oracleIndentPrefix}} {
		for _, lines := range []int{24, detailLines} {
			b.Run(fmt.Sprintf("%s/%d", c.name, lines), func(b *testing.B) {
				for b.Loop() {
					c.fn(frame, 80, lines)
				}
			})
		}
	}
}
