package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/rpctap/rpctap/source"
)

// playHostSession is a session of the host rpctap plays: its ids all
// begin "rpctap-host-"; methods short and long.
func playHostSession(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"rpctap":"session","version":1,"id":"p","started":"2026-11-29T18:00:00.000000Z","argv":["server"],"name":"server","framing":"ndjson","profile":"auto"}` + "\n")
	methods := []string{"initialize", "tools/list", "resources/list", "prompts/list", "notifications/tools/list_changed"}
	for i := 1; i <= 12; i++ {
		m := methods[i%len(methods)]
		fmt.Fprintf(&b, `{"t":%d,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":\"rpctap-host-%d\",\"method\":\"%s\"}"}`+"\n", i*1000, i, m)
		fmt.Fprintf(&b, `{"t":%d,"dir":"s2h","frame":"{\"jsonrpc\":\"2.0\",\"id\":\"rpctap-host-%d\",\"result\":{}}"}`+"\n", i*1000+500, i)
	}
	b.WriteString(`{"t":20000,"event":"exit","code":0}` + "\n")
	path := filepath.Join(t.TempDir(), "playhost.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The id and method columns are as wide as what they show: wide enough
// for the widest id and method at 120 columns and more (the rest goes to
// the flags, at the end of the row, not to empty cells in the middle);
// at 80 an id cut short keeps its end, where the ids of rpctap's own host
// differ; past the widest, a column does not grow.
func TestColumnsFollowWhatTheyShow(t *testing.T) {
	for _, c := range []struct {
		w     int
		width contentWidths
		id    int // want
	}{
		{118, contentWidths{id: 15, method: 32}, 15},
		{198, contentWidths{id: 15, method: 32}, 15},
		{198, contentWidths{id: 1, method: 4}, 2},
	} {
		cols := layoutColumns(c.w, false, c.width)
		if cols.id != c.id || cols.method != max(c.width.method, colMethod) {
			t.Errorf("at %d cells, with ids %d and methods %d wide: id %d, method %d wide", c.w, c.width.id, c.width.method, cols.id, cols.method)
		}
		if used := cols.used() + cols.method + cols.flags; used != c.w {
			t.Errorf("at %d cells the columns take %d", c.w, used)
		}
	}
	if got := cutID(`"rpctap-host-12"`, colIDMin); got != `…ost-12"` || lipgloss.Width(got) != colIDMin {
		t.Errorf("an id cut to %d cells reads %q", colIDMin, got)
	}
	// However long the id, and whatever it holds, its cut shows its end,
	// escaped.
	for _, c := range []struct{ id, end string }{
		{`"` + strings.Repeat("x", 200) + `-host-7"`, `-host-7"`},
		{`"` + strings.Repeat("é", 200) + "-\\x1b\x1b-7\"", `-\\x1b\x1b-7"`},
		{`"` + strings.Repeat("\u0301", 200) + `-7"`, `-7"`}, // marks that take no cell
	} {
		if got := cutID(c.id, colIDMax); !strings.HasSuffix(got, c.end) || !strings.HasPrefix(got, "…") || lipgloss.Width(got) > colIDMax {
			t.Errorf("an id of %d bytes cut to %d cells reads %q, want …%s at the end", len(c.id), colIDMax, got, c.end)
		}
	}

	path := playHostSession(t)
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 50}} {
		tm := startProgram(t, []*source.Source{openFile(t, path)}, size[0], size[1])
		waitFor(t, tm, "recorded", `ost-12"`)
		tm.Send(press("g"))
		view := finalView(t, tm)
		checkFits(t, view, size[0], size[1])
		for i := 1; i <= 3; i++ {
			id := fmt.Sprintf(`"rpctap-host-%d"`, i)
			if size[0] == 80 {
				id = id[len(id)-colIDMin+1:]
			}
			if !strings.Contains(view, " "+id+" ") && !strings.Contains(view, "…"+id+" ") {
				t.Errorf("%d×%d: the id %s does not show:\n%s", size[0], size[1], id, view)
			}
		}
		if size[0] >= 120 && !strings.Contains(view, "notifications/tools/list_changed") {
			t.Errorf("%d×%d: the longest method is cut:\n%s", size[0], size[1], view)
		}
	}
}
