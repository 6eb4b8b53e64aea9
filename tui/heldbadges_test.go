package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/filter"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/source"
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

// The traffic list says, on each row of a recording's held frames, that
// it was held and what became of it (the record's "held"): forwarded,
// edited, dropped, answered in place, let go when its hold time ran out
// or its view detached; first, in short words when the row's flags do
// not fit. A frame that was never held has none.
func TestTrafficRowsSayWhatBecameOfEachHeldFrame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "held.jsonl")
	if err := os.WriteFile(path, []byte(heldSession), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		w, h  int
		words []string
	}{
		{60, 24, []string{"HELD", "HLD EDT …", "HELD DROPPED", "HLD ANS", "HELD EXPIRED", "HLD DET"}},
		{80, 24, []string{"HELD", "HLD EDT RED", "HELD DROPPED", "HELD ANSWERED", "HELD EXPIRED", "HELD DETACHED"}},
		{140, 40, []string{"HELD", "HELD EDITED REDACTED", "HELD DROPPED", "HELD ANSWERED", "HELD EXPIRED", "HELD DETACHED"}},
	} {
		tm := startProgram(t, []*source.Source{openFile(t, path)}, c.w, c.h)
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

// fateSession is heldSession with a frame for each other fate: waited
// behind a held one, let go past the tap's bounds or at the session's
// end, captured, the open end of a raw injection, edited with no hold.
const fateSession = heldSession + `{"t":8000,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"method\":\"behind/h\"}","held":"waited","held_us":900}
{"t":9000,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"method\":\"many/i\"}","held":"overflow","held_us":900}
{"t":10000,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"method\":\"end/j\"}","held":"ended","held_us":900}
{"t":11000,"dir":"h2s","src":"inject","frame":"{\"jsonrpc\":\"2.0\",\"id\":\"rpctap-1\",\"method\":\"ping\"}"}
{"t":12000,"dir":"s2h","captured":true,"frame":"{\"jsonrpc\":\"2.0\",\"id\":\"rpctap-1\",\"result\":{}}"}
{"t":13000,"dir":"h2s","src":"inject","partial":true,"frame":"{\"jsonrpc\":\"2.0\",\"method\":\"raw/k\""}
{"t":14000,"dir":"h2s","src":"edit","frame":"{\"jsonrpc\":\"2.0\",\"method\":\"edit/l\"}","original":"{}"}
`

// A row's badges are its frame's fate as the filter language reads it:
// each fate word has one badge, which a row shows exactly when fate:WORD
// matches its frame (HELD on every frame the tap held, whatever became of
// it then), and the + before the kind says injected.
func TestARowsBadgesSayItsFateAsTheFilterReadsIt(t *testing.T) {
	seen := map[string]bool{}
	for _, b := range fateBadges {
		if seen[b.word] {
			t.Errorf("the fate word %s has two badges", b.word)
		}
		seen[b.word] = true
	}
	for _, w := range sessions.FateWords {
		if !seen[w] {
			t.Errorf("the fate word %s has no badge", w)
		}
	}
	path := filepath.Join(t.TempDir(), "fates.jsonl")
	if err := os.WriteFile(path, []byte(fateSession), 0o600); err != nil {
		t.Fatal(err)
	}
	src := openFile(t, path)
	for deadline := time.Now().Add(10 * time.Second); !src.Ended(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the file was not read to its end within 10 s")
		}
	}
	said := map[string]bool{}
	for i := 0; i < src.Index.Len(); i++ {
		e := src.Index.At(i)
		if !e.IsFrame() {
			continue
		}
		badges := strings.Join(entryBadges(&e), " ")
		for _, b := range fateBadges {
			f, err := filter.Parse("fate:" + b.word)
			if err != nil {
				t.Fatal(err)
			}
			match := f.Match(source.FilterFrame(&e, nil))
			said[b.word] = said[b.word] || match
			if b.badge == "" {
				if match != (e.Src == sessions.SrcInject) {
					t.Errorf("#%d %s: fate:%s matches %v, src %q", e.Seq, e.Method, b.word, match, e.Src)
				}
				continue
			}
			if shown := strings.Contains(" "+badges+" ", " "+b.badge+" "); shown != match {
				t.Errorf("#%d %s: fate:%s matches %v, but its badges %q say %s %v", e.Seq, e.Method, b.word, match, badges, b.badge, shown)
			}
		}
	}
	for _, w := range sessions.FateWords {
		if !said[w] {
			t.Errorf("no frame of the session has the fate %s", w)
		}
	}
}
