package sessions

import (
	"cmp"
	"slices"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// The requests waiting for their answer change as records are indexed:
// a request comes, and later it is answered, cancelled or no longer
// followed, or it times out and still waits. Once a reader has asked for
// those changes (PendingChanges), an Index keeps a bounded log of them,
// so that a view keeps its list of pending requests up to date from what
// changed instead of listing every request again each time it looks.

// PendingChangeKind says what a PendingChange is.
type PendingChangeKind uint8

const (
	// PendingAdded: a request now waits for its answer.
	PendingAdded PendingChangeKind = iota + 1
	// PendingLeft: a request waits no more (answered, cancelled, or no
	// longer followed). It may have left already: a cancelled request
	// leaves again when its answer comes.
	PendingLeft
	// PendingTimedOut: a request waiting is past its timeout.
	PendingTimedOut
)

// A PendingChange is one change to the requests waiting for their answer.
type PendingChange struct {
	Kind PendingChangeKind
	// Request is the request the change is about: for PendingAdded,
	// every field but Deadline (0) as it is when the change is read;
	// otherwise its Seq only.
	Request classify.PendingRequest
}

// maxPendingLog bounds the changes an Index keeps for its readers: one
// that falls further behind gets the whole list again.
const maxPendingLog = 1 << 16

type pendingEvent struct {
	seq  int64
	kind PendingChangeKind
}

// pendingLog is the Index's log of changes to the requests in flight:
// events[i] is generation base+i+1's change.
type pendingLog struct {
	base   uint64
	events []pendingEvent
}

// gen is the generation after the last change.
func (l *pendingLog) gen() uint64 { return l.base + uint64(len(l.events)) }

func (l *pendingLog) add(seq int64, kind PendingChangeKind) {
	if len(l.events) == maxPendingLog {
		n := copy(l.events, l.events[maxPendingLog/2:])
		l.events = l.events[:n]
		l.base += maxPendingLog / 2
	}
	l.events = append(l.events, pendingEvent{seq: seq, kind: kind})
}

// unsayable is a change that is not one request's (a batch holds several,
// and its entry does not say which one changed): every reader lists them
// all again.
func (l *pendingLog) unsayable() {
	l.base += uint64(len(l.events)) + 1
	l.events = l.events[:0]
}

// pendingChange logs a change about the request entry e, when a reader
// follows the changes.
func (x *Index) pendingChange(e *entry, kind PendingChangeKind) {
	if !x.pendOn.Load() {
		return
	}
	if e.kind == classify.KindBatch {
		x.plog.unsayable()
		return
	}
	x.plog.add(e.seq, kind)
}

// PendingChanges appends to dst the changes to the requests waiting for
// their answer since generation since (as an earlier call returned it),
// in the order they happened, and returns them with the generation to
// ask from next time. When it cannot say what changed (on the first
// call, to a reader that fell too far behind, after a change to a batch,
// which holds several requests), it returns instead every request
// waiting now, oldest first, and reset true; the changes after the
// generation it returns follow on from that list.
func (x *Index) PendingChanges(since uint64, dst []PendingChange) (changes []PendingChange, gen uint64, all []classify.PendingRequest, reset bool) {
	if !x.pendOn.Load() {
		x.mu.Lock()
		defer x.mu.Unlock()
		x.pendOn.Store(true)
		return dst, x.plog.gen(), x.pending(), true
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	l := &x.plog
	if since < l.base || since > l.gen() {
		return dst, l.gen(), x.pending(), true
	}
	for _, ev := range l.events[since-l.base:] {
		c := PendingChange{Kind: ev.kind, Request: classify.PendingRequest{Seq: ev.seq}}
		if ev.kind == PendingAdded {
			if i, ok := x.bySeq(ev.seq); ok {
				e := x.entries.at(i)
				c.Request = classify.PendingRequest{Seq: e.seq, Dir: e.dir, ID: string(x.ids.bytes(e.id)), Method: x.methods[e.method],
					Sent: time.Duration(e.t) * time.Microsecond, TimedOut: e.rs&rsTimedOut != 0}
			}
		}
		dst = append(dst, c)
	}
	return dst, l.gen(), nil, false
}

// pending lists the requests waiting for their answer, oldest first; the
// caller holds the lock.
func (x *Index) pending() []classify.PendingRequest {
	if x.tr == nil {
		return nil
	}
	var out []classify.PendingRequest
	x.tr.Pending(func(p classify.PendingRequest) bool {
		out = append(out, p)
		return true
	})
	// The requests of one batch share its line: by id among them.
	slices.SortFunc(out, func(a, b classify.PendingRequest) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.ID, b.ID))
	})
	return out
}
