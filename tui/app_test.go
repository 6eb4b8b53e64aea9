package tui

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	xgolden "github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/muesli/termenv"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/source"
)

func TestMain(m *testing.M) {
	time.Local = time.UTC // wall-clock columns read the same everywhere
	os.Exit(m.Run())
}

const demoSession = "../testdata/sessions/recorded/session.jsonl"

// asciiRenderer draws without colour, so views compare as text.
func asciiRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return r
}

func openFile(t *testing.T, path string) *source.Source {
	t.Helper()
	src, err := source.OpenFile(path, classify.DefaultTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	return src
}

func startProgram(t *testing.T, srcs []*source.Source, w, h int) *teatest.TestModel {
	t.Helper()
	m := New(asciiRenderer(), srcs)
	return teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h))
}

// The wait is a failsafe: under the race detector on a loaded 2-core machine
// a render can take seconds.
func waitFor(t *testing.T, tm *teatest.TestModel, what ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, w := range what {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(30*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

func press(s string) tea.KeyMsg {
	switch s {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "tab":
		return tea.KeyMsg{Type: tea.KeyTab}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// openDemo runs the program on the demo session and waits for its flags.
func openDemo(t *testing.T, w, h int) *teatest.TestModel {
	t.Helper()
	tm := startProgram(t, []*source.Source{openFile(t, demoSession)}, w, h)
	waitFor(t, tm, "UNMATCHED")
	return tm
}

// enter opens an input with key (/ or :), types text and presses enter.
func enter(tm *teatest.TestModel, key, text string) {
	tm.Send(press(key))
	typeText(tm, text)
	tm.Send(press("enter"))
}

func typeText(tm *teatest.TestModel, s string) {
	for _, r := range s {
		tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

func finalView(t *testing.T, tm *teatest.TestModel) string {
	t.Helper()
	tm.Send(press("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))
	return fm.View()
}

// golden compares a view with testdata/<test name>.golden; -update (the
// flag teatest's golden package defines) rewrites it.
func golden(t *testing.T, got string) {
	t.Helper()
	xgolden.RequireEqual(t, []byte(got))
}

func TestRecordedSessionShowsTheFourFlagsAtAGlance(t *testing.T) {
	tm := startProgram(t, []*source.Source{openFile(t, demoSession)}, 140, 40)
	// All four flags, and the selected frame's detail loaded.
	waitFor(t, tm, "UNMATCHED", "INVALID", "TIMEOUT", "OPAQUE", "LEAKY", `"result": {}`)
	view := finalView(t, tm)
	golden(t, view)
}

func TestViewFitsAfterResize(t *testing.T) {
	tm := startProgram(t, []*source.Source{openFile(t, demoSession)}, 140, 40)
	waitFor(t, tm, "UNMATCHED", `"result": {}`)
	tm.Send(tea.WindowSizeMsg{Width: 90, Height: 24})
	waitFor(t, tm, "#19  server") // redrawn at the new size
	view := finalView(t, tm)
	for i, line := range strings.Split(view, "\n") {
		if w := lipgloss.Width(line); w > 90 {
			t.Errorf("line %d is %d cells wide after resizing to 90: %q", i, w, line)
		}
	}
	if n := len(strings.Split(view, "\n")); n > 24 {
		t.Errorf("the view is %d lines tall after resizing to 24", n)
	}
	golden(t, view)
}

func TestFilterShowsOnlyMatchingFramesAndSaysWhenItDoesNotParse(t *testing.T) {
	tm := openDemo(t, 140, 40)
	tm.Send(press("/"))
	typeText(tm, "method:tools/li")
	waitFor(t, tm, "✓")
	typeText(tm, "st dir:sideways")
	waitFor(t, tm, "✗")
	for i := 0; i < len(" dir:sideways"); i++ {
		tm.Send(tea.KeyMsg{Type: tea.KeyBackspace})
	}
	tm.Send(press("enter"))
	waitFor(t, tm, "filter: method:tools/list")
	view := finalView(t, tm)
	// The table (the pending pane lists what waits, filter or not).
	table, _, _ := strings.Cut(view, "╰")
	if strings.Contains(table, "tools/call") || strings.Contains(table, "initialize") {
		t.Errorf("frames outside the filter show:\n%s", view)
	}
	// The filter line counts the same frames the header counts (→8 ←9 !1).
	if !strings.Contains(view, "→8 ←9 !1") || !strings.Contains(view, "(2 of 18 frames)") {
		t.Errorf("the filter line does not say how many of the header's frames match:\n%s", view)
	}
}

// A filter that hides every frame says so, rather than that there are
// no frames yet.
func TestAFilterThatMatchesNothingSaysSo(t *testing.T) {
	tm := openDemo(t, 100, 30)
	enter(tm, "/", "method:no/such/method")
	waitFor(t, tm, "no frame matches the filter (/ to change it)")
	if view := finalView(t, tm); strings.Contains(view, "no frames yet") {
		t.Errorf("the view says there are no frames yet:\n%s", view)
	}
}

func TestDetailShowsFindingsAndTheStrictAnswerAndPairJumps(t *testing.T) {
	tm := openDemo(t, 160, 50)
	// Go to the invalid request (#14) with :goto, then read its detail.
	enter(tm, ":", "goto 14")
	waitFor(t, tm, "A strict receiver must answer", "bad-id", "-32600")
	// #8 answers #7: jump from the response to its request.
	enter(tm, ":", "goto 8")
	waitFor(t, tm, "answers #7")
	tm.Send(press("p"))
	waitFor(t, tm, "#7  host → server  request", "answered by #8")
	finalView(t, tm)
}

func TestNewTrafficNeverMovesTheSelectionUnlessFollowing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, `{"rpctap":"session","version":1,"id":"x","started":"2026-11-29T18:00:00.000000Z","argv":["srv"],"name":"growing","framing":"ndjson","profile":"auto"}`)
	write := func(from, to int) {
		for i := from; i < to; i++ {
			fmt.Fprintf(f, `{"t":%d,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"m%d\"}"}`+"\n", i*1000, i, i)
		}
	}
	write(1, 6)
	// No tap writes the file: it is followed as tail -f follows it.
	tm := startProgram(t, []*source.Source{openFollowing(t, path)}, 120, 30)
	waitFor(t, tm, "m5", "#6  host → server") // following: the last frame is selected
	tm.Send(press("k"))                       // select #5: following lets go
	waitFor(t, tm, "#5  host → server")
	tm.Send(press("k"))
	waitFor(t, tm, "#4  host → server")
	write(6, 9)
	// Still on #4 (line 4 holds m3) when m8 comes.
	waitFor(t, tm, "m8", "#4  host → server")
	tm.Send(press("G")) // follow again
	write(9, 10)
	waitFor(t, tm, "m9", "#10  host → server")
	finalView(t, tm)
}

func TestPeerTextNeverReachesTheTerminalRaw(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "evil.jsonl")
	huge := strings.Repeat("A", 100_000)
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"\u001b[2J\u001b[H","params":{"x":"\u001b]52;c;SGVsbG8=\u0007"}}`,
		`{"jsonrpc":"2.0","id":"\u001b]8;;http://evil.example\u0007click\u001b]8;;\u0007","result":{}}`,
		`{"jsonrpc":"2.0","method":"note","params":{"c1":"a\u009bb","bidi":"\u202etxt.exe","ls":"a\u2028b"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"big","params":{"s":"` + huge + `"}}`,
	}
	var b strings.Builder
	b.WriteString(`{"rpctap":"session","version":1,"id":"x","started":"2026-11-29T18:00:00.000000Z","argv":["srv"],"name":"evil","framing":"ndjson","profile":"auto"}` + "\n")
	for i, fr := range frames {
		q := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(fr)
		fmt.Fprintf(&b, `{"t":%d,"dir":"s2h","frame":"%s"}`+"\n", (i+1)*1000, q)
	}
	// Raw bytes too: an ESC and a C1 control straight in the stderr text.
	b.WriteString(`{"t":9000,"dir":"err","frame":"raw \u001b[31mred\u001b[0m and \u009b and \u202e"}` + "\n")
	os.WriteFile(path, []byte(b.String()), 0o600)
	tm := startProgram(t, []*source.Source{openFile(t, path)}, 200, 60)
	waitFor(t, tm, "big")
	for _, seq := range []string{"goto 2", "goto 3", "goto 4", "goto 5", "goto 6"} {
		enter(tm, ":", seq)
		tm.Send(press("r")) // raw view too
	}
	view := finalView(t, tm)
	for _, bad := range []string{"\x1b", "\u009b", "\u202e", "\u2028", "\a"} {
		if strings.Contains(view, bad) {
			t.Errorf("the view holds %q raw", bad)
		}
	}
	if strings.Contains(view, huge[:5000]) {
		t.Error("a huge string is drawn whole")
	}
}

func TestTextFilterReadsPayloadsInTheBackground(t *testing.T) {
	tm := openDemo(t, 140, 40)
	enter(tm, "/", `"3 results"`)
	waitFor(t, tm, "(1 of ")
	view := finalView(t, tm)
	if !strings.Contains(view, "UNMATCHED") || strings.Contains(view, "initialize") {
		t.Errorf("the text filter should leave only the frame whose payload holds the text:\n%s", view)
	}
}

// A search marks the frames that match and hides none; n and N step
// through the marks, wrapping at the ends; esc ends the search.
func TestSearchMarksMatchesWithoutHidingOthersAndNStepsThroughThem(t *testing.T) {
	tm := openDemo(t, 160, 50)
	tm.Send(press("/"))
	typeText(tm, "method:tools/list")
	tm.Send(press("tab"))
	waitFor(t, tm, "search /method:tools/list")
	tm.Send(press("enter"))
	// The selection followed the traffic to the last frame: the first
	// match is past the end.
	waitFor(t, tm, "search went past the last match to the first", "#7  host → server  request")
	tm.Send(press("n"))
	waitFor(t, tm, "answers #7", "search: method:tools/list  (2 matches")
	tm.Send(press("N"))
	waitFor(t, tm, "#7  host → server  request")
	tm.Send(press("N"))
	waitFor(t, tm, "search went past the first match to the last", "answers #7")
	tm.Send(press("esc"))
	view := finalView(t, tm)
	if !strings.Contains(view, "initialize") || !strings.Contains(view, "tools/call") {
		t.Errorf("a search hid frames that do not match:\n%s", view)
	}
	if strings.Contains(view, "search:") || strings.Contains(view, "7*") {
		t.Errorf("esc did not end the search:\n%s", view)
	}
}

// With a search on, the table marks exactly the matching rows.
func TestSearchMarksExactlyTheMatchingRows(t *testing.T) {
	tm := openDemo(t, 160, 50)
	enter(tm, ":", "search kind:notification")
	waitFor(t, tm, "search: kind:notification")
	view := finalView(t, tm)
	marked, notes := 0, 0
	for _, line := range strings.Split(view, "\n") {
		row := strings.Fields(strings.Trim(line, "│ "))
		isNote := strings.Contains(line, " notification ")
		if isNote {
			notes++
		}
		if len(row) > 0 && strings.HasSuffix(strings.TrimRight(row[0], "0123456789."), "*") {
			marked++
			if !isNote {
				t.Errorf("a row that is not a notification is marked: %q", line)
			}
		}
	}
	if marked == 0 || marked != notes {
		t.Errorf("%d rows are marked; %d rows are notifications:\n%s", marked, notes, view)
	}
}

// A search for text reads frame payloads in the background, as a text
// filter does, and then marks the one frame that holds it.
func TestTextSearchReadsPayloadsInTheBackground(t *testing.T) {
	tm := openDemo(t, 160, 50)
	enter(tm, ":", `search "3 results"`)
	waitFor(t, tm, "(1 match; n/N go to it)")
	tm.Send(press("n"))
	waitFor(t, tm, "3 results")
	view := finalView(t, tm)
	if !strings.Contains(view, "initialize") {
		t.Errorf("a search hid frames that do not match:\n%s", view)
	}
}

// In the list and the detail a peer's backslash never reads as the view's
// own escape: the method \x1b[2J a peer typed shows as \\x1b[2J, a real ESC
// as \x1b[2J; indented JSON is escaped as JSON, so a raw U+202E shows as
// \u202e and the peer's JSON escapes as they are.
func TestViewShowsAPeersBackslashApartFromRealControls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typed.jsonl")
	var b strings.Builder
	b.WriteString(`{"rpctap":"session","version":1,"id":"x","started":"2026-11-29T18:00:00.000000Z","argv":["srv"],"name":"typed","framing":"ndjson","profile":"auto"}` + "\n")
	b.WriteString(`{"t":1000,"dir":"s2h","frame":"{\"jsonrpc\":\"2.0\",\"method\":\"typed\\\\x1b[2J\"}"}` + "\n")
	b.WriteString(`{"t":2000,"dir":"s2h","frame":"{\"jsonrpc\":\"2.0\",\"method\":\"real\\u001b[2J\",\"params\":{\"a\":\"q\\\"\\n` + "\u202e" + `\"}}"}` + "\n")
	os.WriteFile(path, []byte(b.String()), 0o600)
	for _, raw := range []bool{false, true} {
		tm := startProgram(t, []*source.Source{openFile(t, path)}, 160, 40)
		waitFor(t, tm, "real")
		enter(tm, ":", "goto 3")
		want := `"a": "q\"\n\u202e"`
		if raw {
			tm.Send(press("tab")) // the detail
			tm.Send(press("r"))
			want = `"a":"q\"\\n\u202e"`
			// The raw layout is made in a command: wait for it.
			waitFor(t, tm, "Raw bytes")
		}
		view := finalView(t, tm)
		for _, w := range []string{`typed\\x1b[2J`, `real\x1b[2J`, want} {
			if !strings.Contains(view, w) {
				t.Errorf("raw %v: the view does not show %s:\n%s", raw, w, view)
			}
		}
	}
}

// Keys typed in one burst come as one message of several runes; each acts,
// as if typed alone.
func TestEveryKeyOfABurstActs(t *testing.T) {
	tm := openDemo(t, 140, 40)
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("kkk")})
	waitFor(t, tm, "#16  host → server")
	// A burst that opens the filter types the rest into it.
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/ping")})
	tm.Send(press("enter"))
	waitFor(t, tm, "filter: ping")
	// A paste is text: outside an input it is no command (q does not quit).
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("qq"), Paste: true})
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("kj")})
	tm.Send(press("?"))
	waitFor(t, tm, "any key closes help")
	tm.Send(press("esc"))
	finalView(t, tm)
}

// bigSession writes a session whose responses are megabytes: a long
// string, and a long array of small objects.
func bigSession(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big.jsonl")
	var b strings.Builder
	b.WriteString(`{"rpctap":"session","version":1,"id":"x","started":"2026-11-29T18:00:00.000000Z","argv":["srv"],"name":"big","framing":"ndjson","profile":"auto"}` + "\n")
	rec := func(t int, dir, frame string) {
		q := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(frame)
		fmt.Fprintf(&b, `{"t":%d,"dir":"%s","frame":"%s"}`+"\n", t, dir, q)
	}
	rec(1000, "h2s", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"long"}}`)
	rec(2000, "s2h", `{"jsonrpc":"2.0","id":1,"result":{"text":"`+strings.Repeat("x", 4<<20)+`"}}`)
	rec(3000, "h2s", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"many"}}`)
	items := strings.Repeat(`{"a":1,"b":[1,2,{"c":"zz"}]},`, 150_000)
	rec(4000, "s2h", `{"jsonrpc":"2.0","id":2,"result":{"items":[`+items+`{}]}}`)
	rec(5000, "h2s", `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	rec(6000, "s2h", `{"jsonrpc":"2.0","id":3,"result":{}}`)
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A frame of megabytes is laid out as far as a budget of lines goes, in
// lines that fit the pane; the pane says how much it shows, and m shows
// more.
func TestAHugeFrameIsLaidOutAsFarAsTheScreenNeeds(t *testing.T) {
	tm := startProgram(t, []*source.Source{openFile(t, bigSession(t))}, 80, 24)
	waitFor(t, tm, "#7  server → host")
	tm.Send(press("k"))
	tm.Send(press("k"))
	waitShowing(t, tm, "#5  server → host", "4.1 MiB", "")
	tm.Send(press("k"))
	tm.Send(press("k"))
	first := waitShowing(t, tm, "#3  server → host", "4.0 MiB", "")
	tm.Send(press("m"))
	if more := waitShowing(t, tm, "", "4.0 MiB", first); parseSize(t, more) < 2*parseSize(t, first)*9/10 {
		t.Errorf("m showed %s after %s: want about twice as much", more, first)
	}
	tm.Send(press("r")) // the raw bytes, from the list
	waitFor(t, tm, "Raw bytes", "the pretty view")
	view := finalView(t, tm)
	checkFits(t, view, 80, 24)
}

var showingRE = regexp.MustCompile(`showing ([0-9.]+ [KMG]?i?B) of ([0-9.]+ [KMG]?i?B)`)

// waitShowing waits for the detail pane to show title and say it shows
// part of a frame of size, other than a part of size not; it returns the
// size of the part.
func waitShowing(t *testing.T, tm *teatest.TestModel, title, size, not string) string {
	t.Helper()
	var got string
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		if !bytes.Contains(b, []byte(title)) {
			return false
		}
		for _, m := range showingRE.FindAllStringSubmatch(string(b), -1) {
			if m[2] == size && m[1] != not {
				got = m[1]
			}
		}
		return got != ""
	}, teatest.WithDuration(20*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
	return got
}

func parseSize(t *testing.T, s string) float64 {
	t.Helper()
	var v float64
	var unit string
	if _, err := fmt.Sscanf(s, "%g %s", &v, &unit); err != nil {
		t.Fatalf("%q is no size: %v", s, err)
	}
	return v * map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20}[unit]
}

// checkFits fails when a view has a line wider than w cells or more than
// h lines.
func checkFits(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	for i, line := range lines {
		if n := lipgloss.Width(line); n > w {
			t.Errorf("line %d is %d cells wide, more than %d: %q", i, n, w, line)
		}
	}
	if len(lines) > h {
		t.Errorf("the view is %d lines tall, more than %d:\n%s", len(lines), h, view)
	}
}

// Every view fits 80×24, the default terminal: no line is wider than 80
// cells (none wraps), none is past the 24th; the table's columns give way
// and its badges still show.
func TestEveryViewFitsTheDefaultTerminal(t *testing.T) {
	long := strings.Repeat("a-very-long-name-", 8)
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	t.Setenv("XDG_RUNTIME_DIR", dir)
	sessDir := filepath.Join(dir, "rpctap", "sessions")
	if err := os.MkdirAll(sessDir, 0o700); err != nil {
		t.Fatal(err)
	}
	demo, err := os.ReadFile(demoSession)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sessDir, long+".jsonl"), demo, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		keys []string
		want []string // in the output once the view shows
	}{
		{"traffic", nil, nil},
		{"detail", []string{"tab"}, []string{"m more", "? help • q quit"}},
		{"pending", []string{"P"}, []string{"enter open • esc back"}},
		{"raw", []string{"r"}, []string{"Raw bytes"}},
		{"stats", []string{"s"}, []string{"Latency of tools/call", "s/esc back"}},
		{"capabilities", []string{"c"}, []string{"#5 Server capabilities", "c/esc close"}},
		{"tools", []string{"T"}, []string{"Tools 3 listed", "T/esc close"}},
		{"help", []string{"?"}, []string{"any key closes help"}},
		{"filter typed", []string{"/", "method:" + long}, []string{"✓"}},
		{"filter", []string{"/", "method:tools/list", "enter"}, []string{"(2 of 18 frames)"}},
		{"command", []string{":", "goto " + long}, []string{"enter apply"}},
		{"picker", []string{":", "open", "enter"}, []string{"Recent sessions", "a-very-long-name-"}},
		// The composer itself is in TestComposerFitsTheDefaultTerminal (it needs a live tap).
		{"inject on a recording", []string{"i"}, []string{"inject needs a live tap"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tm := startProgram(t, []*source.Source{openFile(t, demoSession)}, 80, 24)
			waitFor(t, tm, "INVALID")
			for _, k := range c.keys {
				tm.Send(press(k))
			}
			if len(c.want) > 0 {
				waitFor(t, tm, c.want...)
			}
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			view := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View()
			checkFits(t, view, 80, 24)
			if c.name == "traffic" {
				for _, b := range []string{"INVALID", "TIMEOUT"} {
					if !strings.Contains(view, b) {
						t.Errorf("the %s badge does not show at 80×24:\n%s", b, view)
					}
				}
			}
		})
	}
}

// Every view fits a 40×12 terminal too: no pane grows past the lines it
// is given (the pending pane's "nothing pending" wrapped, pushing the
// header off the screen), and the header stays on the first line.
func TestEveryViewFitsASmallTerminal(t *testing.T) {
	answered := playHostSession(t) // nothing pending
	for _, c := range []struct {
		name string
		keys []string
		want []string
	}{
		{"nothing pending", nil, nil},
		// Keys and quit go in order: the final view is the keys'.
		{"traffic", nil, nil},
		{"detail", []string{"tab"}, nil},
		{"pending", []string{"P"}, nil},
		{"stats", []string{"s"}, nil},
		{"capabilities", []string{"c"}, []string{"Capabilities"}},
		{"tools", []string{"T"}, []string{"Tools"}},
		{"help", []string{"?"}, nil},
		{"filter", []string{"/", "method:tools/list", "enter"}, []string{"(2 of 18"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, header := demoSession, "demo-server"
			if c.name == "nothing pending" {
				path, header = answered, "server"
			}
			tm := startProgram(t, []*source.Source{openFile(t, path)}, 40, 12)
			waitFor(t, tm, "recorded", "Pending (")
			for _, k := range c.keys {
				tm.Send(press(k))
			}
			if len(c.want) > 0 {
				waitFor(t, tm, c.want...)
			}
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			view := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View()
			checkFits(t, view, 40, 12)
			if first := strings.Split(view, "\n")[0]; c.name != "help" && c.name != "stats" && !strings.HasPrefix(first, header) {
				t.Errorf("the first line is not the header: %q\n%s", first, view)
			}
		})
	}
}

// The header counts the peers' errors; findings about frames the user
// injected or edited are apart, as check tells them apart.
func TestTheHeaderCountsTheUsersFindingsApart(t *testing.T) {
	tm := startProgram(t, []*source.Source{openFile(t, "../testdata/sessions/fates/user-actions.jsonl")}, 120, 30)
	waitFor(t, tm, "0 err", "1 warn", "2 yours")
	finalView(t, tm)
}
