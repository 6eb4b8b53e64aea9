package sessions

import (
	"fmt"
	"io"
	"slices"

	"github.com/rpctap/rpctap/classify"
)

// Len is the number of entries.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.entries.n
}

// At returns the entry at position i (0 ≤ i < Len()).
func (x *Index) At(i int) Entry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if i < 0 || i >= x.entries.n {
		panic(fmt.Sprintf("sessions: Index.At(%d) with %d entries", i, x.entries.n))
	}
	return x.entry(x.entries.at(i))
}

// Entries appends the entries at positions from to to (clipped to the
// index) to dst, under one lock, and returns it: a screen's worth of rows
// at once.
func (x *Index) Entries(dst []Entry, from, to int) []Entry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	from, to = max(from, 0), min(to, x.entries.n)
	for i := from; i < to; i++ {
		dst = append(dst, x.entry(x.entries.at(i)))
	}
	return dst
}

func (x *Index) entry(e *entry) Entry {
	method, event := x.methods[e.method], ""
	if e.event != 0 {
		method, event = "", method
	}
	return Entry{
		Seq:      e.seq,
		Offset:   e.offset,
		T:        e.t,
		Dir:      e.dir,
		Event:    event,
		Kind:     e.kind,
		Src:      srcNames[e.flags&srcMask],
		Captured: e.flags&flagCaptured != 0,
		Redacted: e.flags&flagRedacted != 0,
		EOF:      e.flags&flagEOF != 0,
		Partial:  e.flags&flagPartial != 0,
		Held:     heldNames[e.held],
		Size:     e.size,
		ID:       string(x.ids.bytes(e.id)),
		Method:   method,
		Codes:    e.codes,
		Worst:    max(e.worst, e.userWorst),
		Pair:     e.pair,
		Latency:  e.latency,
		Status:   e.status(),
		Call:     x.calls[e.seq],
	}
}

// BySeq returns the position of the entry for line seq, and whether there
// is one.
func (x *Index) BySeq(seq int64) (int, bool) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.bySeq(seq)
}

func (x *Index) bySeq(seq int64) (int, bool) {
	n := x.entries.n
	if n == 0 || seq < x.entries.at(0).seq {
		return 0, false
	}
	// Lines grow by at least one an entry, so seq is at or before
	// position seq - first; in a file with no blank or unreadable lines it
	// is there.
	hi := n
	if d := seq - x.entries.at(0).seq; d < int64(n) {
		hi = int(d) + 1
		if x.entries.at(hi-1).seq == seq {
			return hi - 1, true
		}
	}
	lo := 0
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if x.entries.at(mid).seq < seq {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < n && x.entries.at(lo).seq == seq
}

// Findings returns the findings about the entry at position i, with their
// messages, in the order they were found: the frame's own, its batch
// members', then session findings.
func (x *Index) Findings(i int) []EntryFinding {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if i < 0 || i >= x.entries.n {
		return nil
	}
	var out []EntryFinding
	for k := x.entries.at(i).finding; k != 0; {
		f := x.findings.at(int(k - 1))
		out = append(out, EntryFinding{
			Finding: classify.Finding{Code: f.code, Severity: f.sev, Message: f.msg},
			Member:  int(f.member),
			Related: f.related,
		})
		k = f.prev
	}
	slices.Reverse(out)
	return out
}

// Pending returns the requests waiting for their answer, oldest first.
func (x *Index) Pending() []classify.PendingRequest {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.pending()
}

// Counts sums up the index so far.
func (x *Index) Counts() Counts {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.counts
}

// ReadRecord reads the record of entry e back from the session file f, by
// its offset, and decodes it as a Reader does; the Event's Line is e.Seq.
// It fails when the line there is not e's record (its time, direction,
// kind or size differ: the file is not the one indexed). To read many
// records, use a RecordReader, which keeps its buffer.
func ReadRecord(f io.ReaderAt, e Entry) (*Event, error) {
	return NewRecordReader(f).Read(e)
}
