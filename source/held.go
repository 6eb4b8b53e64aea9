package source

import (
	"bytes"
	"sync"

	"github.com/rpctap/rpctap/sessions"
)

// heldBytes bounds the frames a view keeps of a session that has no file,
// counting heldCost for each besides its bytes.
const heldBytes = 64 << 20

// heldCost is what keeping a frame costs besides its bytes (the record,
// the map entry).
const heldCost = 256

// heldFrames keeps the latest frames of a live session whose tap records
// no file, so that the detail pane, copy and text filters can still read
// them: up to heldBytes of them, the oldest let go first.
type heldFrames struct {
	mu    sync.Mutex
	bySeq map[int64]*sessions.Event
	order []int64 // seqs, oldest first, from head
	head  int
	bytes int
}

func newHeldFrames() *heldFrames { return &heldFrames{bySeq: map[int64]*sessions.Event{}} }

// add keeps a copy of a frame record.
func (h *heldFrames) add(ev *sessions.Event) {
	if !ev.IsFrame() && ev.Kind != sessions.EventNote {
		return // notes are kept too: tail prints them (a gap's, a demo's)
	}
	cp := *ev
	cp.Frame = bytes.Clone(ev.Frame)
	cp.Header = bytes.Clone(ev.Header)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.bySeq[int64(ev.Line)] = &cp
	h.order = append(h.order, int64(ev.Line))
	h.bytes += heldCost + len(cp.Frame) + len(cp.Header)
	for h.bytes > heldBytes && h.head < len(h.order) {
		seq := h.order[h.head]
		h.head++
		if old := h.bySeq[seq]; old != nil {
			h.bytes -= heldCost + len(old.Frame) + len(old.Header)
			delete(h.bySeq, seq)
		}
	}
	if h.head > 4096 && h.head > len(h.order)/2 {
		h.order = append(h.order[:0], h.order[h.head:]...)
		h.head = 0
	}
}

// get returns the frame record with line seq, while it is held.
func (h *heldFrames) get(seq int64) (*sessions.Event, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ev, ok := h.bySeq[seq]
	return ev, ok
}
