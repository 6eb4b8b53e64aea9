package source

import (
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// A view of a session with no file keeps the latest frames it saw, and no
// more than heldBytes of them.
func TestHeldFramesKeepTheLatestWithinTheirBound(t *testing.T) {
	h := newHeldFrames()
	frame := make([]byte, 1<<20)
	n := heldBytes>>20 + 8
	for i := 1; i <= n; i++ {
		h.add(&sessions.Event{Line: i, Dir: classify.H2S, Frame: frame})
	}
	if h.bytes > heldBytes {
		t.Errorf("%d bytes held, over the bound of %d", h.bytes, heldBytes)
	}
	if _, ok := h.get(1); ok {
		t.Error("the oldest frame is still held past the bound")
	}
	if ev, ok := h.get(int64(n)); !ok || len(ev.Frame) != len(frame) {
		t.Error("the latest frame is not held")
	}
	// Empty frames cost memory too: a flood of them stays bounded.
	e := newHeldFrames()
	for i := 1; i <= 2*heldBytes/heldCost; i++ {
		e.add(&sessions.Event{Line: i, Dir: classify.Err})
	}
	if len(e.bySeq) > heldBytes/heldCost {
		t.Errorf("%d empty frames held; the bound allows %d", len(e.bySeq), heldBytes/heldCost)
	}
	h.add(&sessions.Event{Line: n + 1, Kind: sessions.EventExit})
	if _, ok := h.get(int64(n + 1)); ok {
		t.Error("an event record was held as a frame")
	}
}

// A view of a tap that records no file keeps the notes it is sent, as it
// keeps frames, so that tail can print them where they came: above all the
// note that says how much the view missed when it fell behind.
func TestAViewWithNoFileKeepsTheNotesItIsSent(t *testing.T) {
	h := newHeldFrames()
	h.add(&sessions.Event{Line: 7, Kind: sessions.EventNote, Text: "this view fell behind the live session and missed 10 bytes of records"})
	ev, ok := h.get(7)
	if !ok || ev.Text == "" {
		t.Fatalf("the note is not kept: %v %+v", ok, ev)
	}
}
