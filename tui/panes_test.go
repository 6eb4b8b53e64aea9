package tui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tap"
)

func TestTrafficPaneKeysBecomeIntents(t *testing.T) {
	c := newCommon(asciiRenderer())
	p := newTrafficPane(c, nil, nil)
	cases := map[string]intentKind{
		"enter": intentFocusDetail,
		"p":     intentJumpPair,
		"e":     intentRefilter,
		"n":     intentNextMatch,
		"N":     intentNextMatch,
		"y":     intentCopy,
		"R":     intentReply,  // reply to this frame
		"I":     intentResend, // resend this frame
		"j":     intentNone,
	}
	for k, want := range cases {
		if in, _ := p.Update(press(k)); in.kind != want {
			t.Errorf("key %q: intent %v, want %v", k, in.kind, want)
		}
	}
	if in, _ := p.Update(press("N")); in.step != -1 {
		t.Errorf("N steps back, got step %d", in.step)
	}
}

// pendingItems is a pending pane's list of rs.
func pendingItems(rs ...classify.PendingRequest) []pendingItem {
	var out []pendingItem
	for _, r := range rs {
		out = append(out, pendingItem{PendingRequest: r})
	}
	return out
}

// fixed is a clock (or a timeout) that reads d.
func fixed(d time.Duration) func() time.Duration { return func() time.Duration { return d } }

func TestPendingPaneEnterJumpsToTheRequest(t *testing.T) {
	p := newPendingPane(newCommon(asciiRenderer()), nil, nil)
	p.items = pendingItems(classify.PendingRequest{Seq: 7, Dir: classify.H2S, ID: "1", Method: "a"}, classify.PendingRequest{Seq: 9, Dir: classify.S2H, ID: "0", Method: "roots/list"})
	p.Update(press("j"))
	in, _ := p.Update(press("enter"))
	if in.kind != intentJumpSeq || in.seq != 9 {
		t.Errorf("got %+v, want a jump to #9", in)
	}
}

func TestPendingPaneFlagsTimedOutRequests(t *testing.T) {
	p := newPendingPane(newCommon(asciiRenderer()), fixed(40*time.Second), fixed(30*time.Second))
	p.SetSize(60, 5)
	p.items = pendingItems(classify.PendingRequest{Seq: 7, Dir: classify.H2S, ID: "1", Method: "slow", Sent: 0, TimedOut: true})
	if v := p.View(); !strings.Contains(v, "TIMEOUT") || !strings.Contains(v, "40.0s") {
		t.Errorf("a timed-out request must say so with its wait:\n%s", v)
	}
}

func TestPickerEnterOpensTheSelectedTapOrFile(t *testing.T) {
	p := newPicker(newCommon(asciiRenderer()))
	p.apply(pickerMsg{live: []tap.Info{{Name: "a", Socket: "/tmp/a.sock"}}, files: []sessions.SessionFile{{Path: "/s/b.jsonl"}}})
	if in, _ := p.Update(press("enter")); in.kind != intentOpen || in.target != "/tmp/a.sock" {
		t.Errorf("first row: %+v", in)
	}
	p.Update(press("j"))
	if in, _ := p.Update(press("enter")); in.kind != intentOpen || in.target != "/s/b.jsonl" {
		t.Errorf("second row: %+v", in)
	}
}

func TestBadgesNameTheFourFlags(t *testing.T) {
	var cs sessions.CodeSet
	e := sessions.Entry{Kind: classify.KindResponse, Codes: cs.With(classify.CodeUnmatchedResponse).With(classify.CodeLeakyError).With(classify.CodeTimeout), Redacted: true}
	got := entryBadges(&e)
	want := []string{"UNMATCHED", "REDACTED", "LEAKY", "TIMEOUT"}
	if len(got) != len(want) {
		t.Fatalf("badges %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("badges %v, want %v", got, want)
		}
	}
	inv := sessions.Entry{Kind: classify.KindInvalid}
	if b := entryBadges(&inv); len(b) != 1 || b[0] != "INVALID" {
		t.Errorf("an invalid request: %v", b)
	}
}

// While a view catches up with its tap the program redraws less often:
// the CPU goes to the tap and to catching up.
func TestRedrawsSlowDownWhileAViewCatchesUp(t *testing.T) {
	src := &source.Source{Name: "s"}
	m := &Model{views: []*sessionView{{src: src}}}
	if got := m.tickEvery(); got != frameTick {
		t.Errorf("a view that keeps up redraws every %s, want %s", got, frameTick)
	}
	src.SetCatchingUp(true)
	if got := m.tickEvery(); got != catchUpTick {
		t.Errorf("a view that catches up redraws every %s, want %s", got, catchUpTick)
	}
}

// loadedView is a session view of the demo session, read whole.
func loadedView(t *testing.T) *sessionView {
	t.Helper()
	src := openFile(t, demoSession)
	for deadline := time.Now().Add(10 * time.Second); !src.Ended(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the demo session did not load")
		}
	}
	return newSessionView(1, newCommon(asciiRenderer()), src)
}

// A filter or search that reads payloads never reads the file in Update:
// new entries, too, are matched by a command that runs in the background.
func TestPayloadExpressionsMatchNewEntriesInTheBackground(t *testing.T) {
	v := loadedView(t)
	f := mustParse(`"3 results"`)
	cmd := v.applyFilter(`"3 results"`, f)
	if cmd == nil || len(v.traffic.rows) != 0 {
		t.Fatalf("a text filter matched %d rows in Update; want a background scan", len(v.traffic.rows))
	}
	v.traffic.scanDone(v.src, cmd().(scanDoneMsg))
	if len(v.traffic.rows) != 1 {
		t.Fatalf("the scan found %d rows, want 1", len(v.traffic.rows))
	}
	// Entries the table has not seen yet (as when a live session grows).
	v.traffic.rows, v.traffic.scanned = v.traffic.rows[:0], 0
	if cmd := v.traffic.sync(v.id, v.src); cmd == nil || len(v.traffic.rows) != 0 {
		t.Errorf("sync matched %d new rows in Update; want a background scan", len(v.traffic.rows))
	} else if v.traffic.scanDone(v.src, cmd().(scanDoneMsg)); len(v.traffic.rows) != 1 {
		t.Errorf("the scan of new entries found %d rows, want 1", len(v.traffic.rows))
	}

	cmd = v.setSearch(`"3 results"`, f)
	if cmd == nil || len(v.search.matches) != 0 {
		t.Fatalf("a text search matched %d frames in Update; want a background scan", len(v.search.matches))
	}
	v.searchDone(cmd().(searchDoneMsg))
	if len(v.search.matches) != 1 {
		t.Fatalf("the search found %d frames, want 1", len(v.search.matches))
	}
	v.search.matches, v.search.scanned = nil, 0
	if cmd := v.extendSearch(); cmd == nil || len(v.search.matches) != 0 {
		t.Errorf("the search matched %d new frames in Update; want a background scan", len(v.search.matches))
	}
}

// The detail pane shows the selected frame or says it is rendering it; a
// layout that comes back late, for a frame since left, is never shown.
func TestDetailPaneNeverShowsAnotherFramesContent(t *testing.T) {
	v := loadedView(t)
	d := v.detail
	d.SetSize(60, 20)
	x := v.src.Index
	pos := func(seq int64) int {
		p, ok := x.BySeq(seq)
		if !ok {
			t.Fatalf("no #%d", seq)
		}
		return p
	}
	loaded := func(cmd func() tea.Msg) detailLoadedMsg { return cmd().(detailLoadedMsg) }
	a := d.load(v.id, v.src, pos(7))
	d.apply(loaded(a))
	if !strings.Contains(d.View(), "#7  host") {
		t.Fatalf("#7 is not shown:\n%s", d.View())
	}
	b := d.load(v.id, v.src, pos(8))
	if view := d.View(); strings.Contains(view, "#7") || !strings.Contains(view, "rendering #8") {
		t.Errorf("with #8 selected and not laid out yet, the pane shows:\n%s", view)
	}
	c := d.load(v.id, v.src, pos(14))
	d.apply(loaded(b)) // late: #14 is selected now
	if view := d.View(); strings.Contains(view, "#8") || !strings.Contains(view, "rendering #14") {
		t.Errorf("a late layout of #8 is shown while #14 is selected:\n%s", view)
	}
	d.apply(loaded(c))
	if view := d.View(); !strings.Contains(view, "#14  host") {
		t.Errorf("#14 is not shown once laid out:\n%s", view)
	}
	// Back to #8: laid out already, it shows at once, with no command.
	if cmd := d.load(v.id, v.src, pos(8)); cmd != nil || !strings.Contains(d.View(), "#8  server") {
		t.Errorf("going back to #8 does not show its cached layout (command %v):\n%s", cmd != nil, d.View())
	}
}

// The pending pane says what it is, and how many.
func TestPendingPaneHasATitle(t *testing.T) {
	p := newPendingPane(newCommon(asciiRenderer()), fixed(0), fixed(0))
	p.SetSize(28, 5)
	if v := p.View(); !strings.HasPrefix(v, "Pending (0)") {
		t.Errorf("an empty pending pane:\n%s", v)
	}
	p.items = pendingItems(classify.PendingRequest{Seq: 7, Dir: classify.H2S, ID: "1", Method: "slow", TimedOut: true})
	p.clock, p.timeout = fixed(40*time.Second), fixed(30*time.Second)
	v := p.View()
	if !strings.HasPrefix(v, "Pending (1)") || !strings.Contains(v, "slow") || !strings.Contains(v, "TMO") {
		t.Errorf("a narrow pending pane with one timed-out request:\n%s", v)
	}
}

// Sizes are written in one format everywhere, none wider than its column.
func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 11878: "11.6 KiB",
		120 << 10: "120 KiB", 1023 << 10: "1023 KiB", 19 << 20: "19.0 MiB", 5 << 30: "5.0 GiB"} {
		if got := FormatSize(n); got != want || len([]rune(got)) > colSize {
			t.Errorf("FormatSize(%d) = %q, want %q (at most %d cells)", n, got, want, colSize)
		}
	}
}

// The footer shows the keys of the view in use: the picker's, the stats'
// (and how to leave them), the detail pane's.
func TestFooterShowsTheKeysOfTheViewInUse(t *testing.T) {
	m := New(asciiRenderer(), nil)
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 30})
	if f := m.footer(); !strings.Contains(f, "enter open") || strings.Contains(f, "raw") || strings.Contains(f, "pair") {
		t.Errorf("the picker's footer: %s", f)
	}
	v := loadedView(t)
	m = New(asciiRenderer(), []*source.Source{v.src})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 30})
	m.Update(tickMsg{})
	if f := m.footer(); !strings.Contains(f, "/ filter") || !strings.Contains(f, "r raw") {
		t.Errorf("the traffic footer: %s", f)
	}
	m.Update(press("tab"))
	if f := m.footer(); !strings.Contains(f, "m more") || !strings.Contains(f, "esc back") || strings.Contains(f, "/ filter") {
		t.Errorf("the detail pane's footer: %s", f)
	}
	m.Update(press("esc"))
	m.Update(press("s"))
	if f := m.footer(); !strings.Contains(f, "s/esc back") || strings.Contains(f, "/ filter") {
		t.Errorf("the stats footer: %s", f)
	}
	m.Update(press("esc"))
	if m.view().showStats {
		t.Error("esc does not leave the stats")
	}
}

// ? help and q quit show in the footer of every pane that lists them,
// whatever the width (at 80 and 120 columns the traffic's keys do not all
// fit): the pane's other keys give way, an ellipsis saying so.
func TestFooterAlwaysShowsHelpAndQuit(t *testing.T) {
	v := loadedView(t)
	for _, w := range []int{40, 80, 120, 200} {
		m := New(asciiRenderer(), []*source.Source{v.src})
		m.Update(tea.WindowSizeMsg{Width: w, Height: 30})
		m.Update(tickMsg{})
		for _, c := range []struct{ pane, key, back string }{{"traffic", "", ""}, {"detail", "tab", "esc"}, {"pending", "P", "esc"}, {"stats", "s", "s"}} {
			if c.key != "" {
				m.Update(press(c.key))
			}
			f := m.footer()
			if !strings.HasSuffix(f, "? help • q quit") || lipgloss.Width(f) > w {
				t.Errorf("%d columns, the %s footer: %q", w, c.pane, f)
			}
			if w == 80 && c.pane == "traffic" && !strings.Contains(f, "/ filter • r raw/pretty … • ? help") {
				t.Errorf("at 80 columns the traffic footer does not cut its other keys with an ellipsis: %q", f)
			}
			if c.back != "" {
				m.Update(press(c.back))
			}
		}
	}
}

// The bottom of a narrow terminal goes to the detail pane first: at 40
// columns the pending pane takes two fifths (it took 30 columns, leaving
// the detail 6); from 80 a third, 30 to 60 columns.
func TestNarrowTerminalLeavesTheDetailPaneTheLargerPart(t *testing.T) {
	c := newCommon(asciiRenderer())
	v := newSessionView(1, c, &source.Source{Index: sessions.NewIndex(sessions.IndexOptions{})})
	fw := c.styles.Pane.GetHorizontalFrameSize()
	for _, s := range []struct{ w, pending int }{{40, 14}, {60, 22}, {80, 30}, {120, 40}, {200, 60}} {
		v.setSize(s.w, 9)
		if v.pending.width != s.pending || v.detail.width+v.pending.width+2*fw != s.w || v.detail.width <= v.pending.width {
			t.Errorf("at %d columns: detail %d, pending %d; want pending %d, the rest the detail's", s.w, v.detail.width, v.pending.width, s.pending)
		}
	}
}

// The latency column shows, on the final answer of a multi round-trip
// call, the call's latency from its first request with a mark of its
// rounds, and on each input_required answer its own round's, within the
// column's width whatever the latency or the rounds.
func TestTheLatencyColumnShowsAMultiRoundTripCallsLatencyOnItsFinalAnswer(t *testing.T) {
	asked := sessions.Entry{Kind: classify.KindResponse, Latency: 800 * time.Microsecond, Call: sessions.CallLink{InputRequired: true, Round: 1}}
	final := sessions.Entry{Kind: classify.KindResponse, Latency: 1200 * time.Microsecond, Call: sessions.CallLink{Origin: 7, CallLatency: 3100 * time.Microsecond, Round: 2}}
	plain := sessions.Entry{Kind: classify.KindResponse, Latency: 1500 * time.Microsecond}
	for _, c := range []struct {
		e    sessions.Entry
		want string
	}{{asked, "800µs"}, {final, "×2 3.1ms"}, {plain, "1.5ms"}} {
		if got := latencyCell(&c.e); got != c.want {
			t.Errorf("latency %q, want %q (%+v)", got, c.want, c.e)
		}
	}
	for _, lat := range []time.Duration{999 * time.Microsecond, 9999 * time.Microsecond, 999 * time.Millisecond, 9999 * time.Millisecond, 999 * time.Second, 1000 * time.Hour} {
		for _, round := range []int{2, 9, 10, 300} {
			e := sessions.Entry{Kind: classify.KindResponse, Call: sessions.CallLink{Origin: 1, CallLatency: lat, Round: round}}
			if got := latencyCell(&e); lipgloss.Width(got) > colLat || !strings.HasPrefix(got, "×") {
				t.Errorf("a call of %d rounds and %v: %q, %d cells (the column has %d)", round, lat, got, lipgloss.Width(got), colLat)
			}
		}
	}
}

// The stats pane counts a multi round-trip call once, with its latency
// from the first request to the final answer, as the tools pane and the
// exports do: the input_required answer is a round of it, not a call.
func TestStatsPaneCountsAMultiRoundTripCallOnceWithItsWholeLatency(t *testing.T) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	path := sessionFile(t, "mcp",
		"h2s", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`,"name":"confirm"}}`,
		"s2h", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s","inputRequests":{"c":{"method":"elicitation/create","params":{}}}}}`,
		"h2s", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{`+meta+`,"name":"confirm","inputResponses":{"c":{"action":"accept"}},"requestState":"s"}}`,
		"s2h", `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[]}}`,
	)
	tm := startProgram(t, []*source.Source{openFile(t, path)}, 80, 24)
	waitFor(t, tm, "×2 6.0ms")
	tm.Send(press("s"))
	waitFor(t, tm, "tools/call                             1       0     6.0ms     6.0ms     6.0ms", "≤10ms")
	view := finalView(t, tm)
	checkFits(t, view, 80, 24)
}
