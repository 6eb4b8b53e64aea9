package tui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/rpctap/rpctap/classify"
)

// With room enough, the bounded layout is json.Indent's, line by line
// escaped as JSON (AppendSafeJSON), as every JSON rpctap shows is.
func TestPrettyPrefixIndentsAsJSONIndentDoes(t *testing.T) {
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"a":[],"b":[1,2,{"c":"d\"e\\\\"}],"e":{"f":null,"g":true}}`,
		` [ 1 , "x y" , { } , [ [ ] ] ] `,
		`{"s":"\u202e evil \u001b[2J","t":"日本語"}`,
		`"just a string"`,
		`12`,
	}
	for _, f := range frames {
		var buf bytes.Buffer
		if err := json.Indent(&buf, []byte(f), "", "  "); err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			want = append(want, string(classify.AppendSafeJSON(nil, []byte(l))))
		}
		got := prettyPrefix([]byte(f), 1000, 1000)
		if !got.isJSON || got.used != len(f) {
			t.Errorf("%s: isJSON %v, used %d of %d", f, got.isJSON, got.used, len(f))
		}
		if g, w := strings.Join(got.lines, "\n"), strings.Join(want, "\n"); g != w {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", f, g, w)
		}
	}
}

// A frame of megabytes is laid out only as far as the budget of lines goes,
// each line within the width.
func TestPrettyPrefixIsBoundedByTheLinesItMayFill(t *testing.T) {
	long := []byte(`{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("x", 4<<20) + `"}}`)
	var nested bytes.Buffer
	nested.WriteString(`{"jsonrpc":"2.0","id":2,"result":{"items":[`)
	for i := range 200_000 {
		if i > 0 {
			nested.WriteByte(',')
		}
		nested.WriteString(`{"a":1,"b":[1,2,{"c":"zz"}]}`)
	}
	nested.WriteString(`]}}`)
	notJSON := bytes.Repeat([]byte("not json \x1b[2J\n"), 300_000)
	for name, f := range map[string][]byte{"long string": long, "nested": nested.Bytes(), "not JSON": notJSON} {
		got := prettyPrefix(f, 40, 100)
		if len(got.lines) > 100 {
			t.Errorf("%s: %d lines, want at most 100", name, len(got.lines))
		}
		if got.used >= len(f) {
			t.Errorf("%s: says it shows all %d bytes", name, len(f))
		}
		for i, l := range got.lines {
			if w := ansi.StringWidth(l); w > 40 {
				t.Errorf("%s: line %d is %d cells wide: %q", name, i, w, l)
				break
			}
			if strings.ContainsRune(l, '\x1b') {
				t.Errorf("%s: line %d holds a raw escape", name, i)
			}
		}
		if total := len(strings.Join(got.lines, "\n")); total > 100*40*4 {
			t.Errorf("%s: %d bytes laid out for 100 lines of 40 cells", name, total)
		}
	}
}
