package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// heldSession is a recording whose frames were held, one for each thing
// that can become of a held frame.
const heldSession = `{"rpctap":"session","version":1,"id":"held","started":"2026-12-01T10:00:00.000000Z","argv":["cat"],"name":"cat","framing":"ndjson","profile":"auto"}
{"t":1000,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fwd/a\"}","held":"forwarded","held_us":900}
{"t":2000,"dir":"h2s","src":"edit","frame":"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"edit/b\",\"params\":{\"m\":\"after\"}}","original":"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"edit/b\",\"params\":{\"m\":\"before\"}}","held":"edited","held_us":900,"redacted":true}
{"t":3000,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"drop/c\"}","held":"dropped","held_us":900}
{"t":4000,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"answer/d\"}","held":"answered","held_us":900}
{"t":4100,"dir":"s2h","src":"inject","frame":"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}"}
{"t":5000,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"slow/e\"}","held":"timeout","held_us":60000000}
{"t":6000,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"gone/f\"}","held":"detached","held_us":900}
{"t":7000,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"method\":\"plain/g\"}"}
`

// issue 12: the traffic list says, on each row of a recording's held
// frames, what became of it (the record's "held"): forwarded, edited,
// dropped, answered in place, let go when its hold time ran out or its
// view detached; first, in short words when the row's flags do not fit. A frame that
// was never held has none.
func TestTrafficRowsSayWhatBecameOfEachHeldFrame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.jsonl")
	if err := os.WriteFile(path, []byte(heldSession), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		w, h  int
		words []string
	}{
		{60, 24, []string{"HELD", "EDT RED", "DROPPED", "ANSWERED", "EXPIRED", "DETACHED"}},
		{80, 24, []string{"HELD", "EDITED REDACTED", "DROPPED", "ANSWERED", "EXPIRED", "DETACHED"}},
		{140, 40, []string{"HELD", "EDITED REDACTED", "DROPPED", "ANSWERED", "EXPIRED", "DETACHED"}},
	} {
		tm := startProgram(t, []*Source{openFile(t, path)}, c.w, c.h)
		waitFor(t, tm, "plain/g")
		if c.h < 30 {
			enter(tm, "/", "kind:request") // the six held requests fill the pane
			tm.Send(press("g"))
			waitFor(t, tm, "fwd/a")
		}
		view := finalView(t, tm)
		rows := map[string]string{}
		for _, line := range strings.Split(view, "\n")[:c.h/2] { // the traffic pane
			for _, m := range []string{"fwd/a", "edit/b", "drop/c", "answer/d", "slow/e", "gone/f", "plain/g"} {
				if strings.Contains(line, m) && rows[m] == "" {
					rows[m] = line
				}
			}
		}
		for i, m := range []string{"fwd/a", "edit/b", "drop/c", "answer/d", "slow/e", "gone/f"} {
			if !strings.Contains(rows[m], " "+c.words[i]) {
				t.Errorf("%d×%d: the row of %s says no %s: %q\n%s", c.w, c.h, m, c.words[i], rows[m], view)
			}
		}
		if r := rows["plain/g"]; c.h >= 30 && (r == "" || strings.ContainsAny(r[strings.Index(r, "plain/g"):], "HDAE")) {
			t.Errorf("%d×%d: the row of a frame never held: %q\n%s", c.w, c.h, r, view)
		}
	}
}
