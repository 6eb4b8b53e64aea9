package tui

import (
	"fmt"
	"slices"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/source"
)

// hasTick runs cmd, and the commands of any batch it makes, and says
// whether one of them is a tick.
func hasTick(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	switch msg := cmd().(type) {
	case tickMsg:
		return true
	case tea.BatchMsg:
		return slices.ContainsFunc(msg, hasTick)
	}
	return false
}

// ended waits for src to have read its whole file.
func ended(t *testing.T, src *source.Source) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); !src.Ended(); {
		if time.Now().After(deadline) {
			t.Fatal("the session never finished loading")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A view whose sessions have ended has nothing to redraw by itself: the
// tick that syncs it last asks for no other. A source still adding
// records keeps the ticks going, and a view opened once they had stopped
// starts them again (its first tick syncs it).
func TestAnIdleViewOfAnEndedSessionTicksNoMore(t *testing.T) {
	src := openFile(t, demoSession)
	ended(t, src)
	m := New(asciiRenderer(), []*source.Source{src})
	m.Init()
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if _, cmd := m.Update(tickMsg(time.Now())); hasTick(cmd) {
		t.Error("a view of an ended session ticks on")
	}
	if m.view().traffic.scanned != src.Index.Len() {
		t.Errorf("the last tick synced %d of %d entries", m.view().traffic.scanned, src.Index.Len())
	}
	if cmd := m.runCommand("open " + demoSession); !hasTick(cmd) {
		t.Error("a view opened after the ticks stopped gets no tick to sync it")
	}
	m.views[len(m.views)-1].src.Close()

	loading := &source.Source{Name: "loading", Index: sessions.NewIndex(sessions.IndexOptions{})}
	m = New(asciiRenderer(), []*source.Source{loading})
	m.Init()
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if _, cmd := m.Update(tickMsg(time.Now())); !hasTick(cmd) {
		t.Error("a view of a session still adding records stops ticking")
	}
}

// The pending pane keeps its list from what changed in the index: a
// sync with nothing new lists nothing (it allocates nothing, however
// many requests wait), answers take their requests out, and the
// selected request stays selected while others leave; when it leaves,
// the next one is.
func TestPendingPaneKeepsItsListFromTheIndexsChanges(t *testing.T) {
	x := sessions.NewIndex(sessions.IndexOptions{})
	x.SetHeader(sessions.Header{Name: "pending"})
	line := 2
	add := func(dir classify.Direction, frame string) {
		x.Add(&sessions.Event{Line: line, T: int64(line) * 100, Dir: dir, Frame: []byte(frame), Src: sessions.SrcWire}, -1)
		line++
	}
	for i := range 30_000 {
		add(classify.H2S, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call"}`, i))
	}
	p := newPendingPane(newCommon(asciiRenderer()), nil, nil)
	p.SetSize(60, 10)
	same := func(when string) {
		t.Helper()
		var got, want []int64
		for _, it := range p.items {
			got = append(got, it.Seq)
		}
		for _, r := range x.Pending() {
			want = append(want, r.Seq)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: the pane lists %d requests, the index %d", when, len(got), len(want))
		}
	}
	p.sync(x)
	same("first sync")
	if n := testing.AllocsPerRun(20, func() { p.sync(x) }); n != 0 {
		t.Errorf("a sync with nothing new allocates %v times with 30,000 requests waiting", n)
	}
	p.sel = 100
	selected := p.items[p.sel].Seq
	for i := range 50 {
		add(classify.S2H, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i))
	}
	p.sync(x)
	same("after 50 answers")
	if p.items[p.sel].Seq != selected {
		t.Errorf("the selection moved from #%d to #%d as other requests left", selected, p.items[p.sel].Seq)
	}
	add(classify.S2H, `{"jsonrpc":"2.0","id":100,"result":{}}`)
	p.sync(x)
	same("after the selected request's answer")
	if p.items[p.sel].Seq != selected+1 {
		t.Errorf("the selected request was answered: #%d is selected, want the next, #%d", p.items[p.sel].Seq, selected+1)
	}
}
