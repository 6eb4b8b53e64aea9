package classify

import (
	"bytes"
	"hash/maphash"
	"time"
)

// flightTable maps keys (direction + id key, or direction + progress
// token key) to flights without allocating per request: by a 64-bit hash,
// with each flight holding its key bytes to check against; the rare hash
// collision goes to an overflow map.
type flightTable struct {
	seed  maphash.Seed
	m     map[uint64]*flight
	over  map[string]*flight
	keyOf func(*flight) ([]byte, uint64)
}

func newFlightTable(keyOf func(*flight) ([]byte, uint64)) *flightTable {
	return &flightTable{seed: maphash.MakeSeed(), m: map[uint64]*flight{}, keyOf: keyOf}
}

func (ft *flightTable) hash(k []byte) uint64 { return maphash.Bytes(ft.seed, k) }

// get finds the flight stored under k.
func (ft *flightTable) get(k []byte) (*flight, bool) { return ft.getHashed(k, ft.hash(k)) }

// getHashed is get for a key whose hash is known.
func (ft *flightTable) getHashed(k []byte, h uint64) (*flight, bool) {
	if f, ok := ft.m[h]; ok {
		if fk, _ := ft.keyOf(f); bytes.Equal(fk, k) {
			return f, true
		}
	}
	if len(ft.over) > 0 {
		f, ok := ft.over[string(k)]
		return f, ok
	}
	return nil, false
}

// put stores f under its key, replacing what was stored there.
func (ft *flightTable) put(f *flight) {
	k, h := ft.keyOf(f)
	if cur, ok := ft.m[h]; !ok || cur == f {
		ft.m[h] = f
		return
	} else if ck, _ := ft.keyOf(cur); bytes.Equal(ck, k) {
		ft.m[h] = f
		return
	}
	if ft.over == nil {
		ft.over = map[string]*flight{}
	}
	ft.over[string(k)] = f
}

// del removes f, when it is what its key holds.
func (ft *flightTable) del(f *flight) {
	k, h := ft.keyOf(f)
	if cur, ok := ft.m[h]; ok && cur == f {
		delete(ft.m, h)
		return
	}
	if cur, ok := ft.over[string(k)]; ok && cur == f {
		delete(ft.over, string(k))
	}
}

func (ft *flightTable) len() int { return len(ft.m) + len(ft.over) }

// each calls fn for every stored flight until it returns false.
func (ft *flightTable) each(fn func(*flight) bool) {
	for _, f := range ft.m {
		if !fn(f) {
			return
		}
	}
	for _, f := range ft.over {
		if !fn(f) {
			return
		}
	}
}

// pushDeadline adds a deadline, first dropping stale entries (landed
// requests, restarted clocks) when they outnumber the live ones, so the heap
// stays as small as what is in flight.
func (t *Tracker) pushDeadline(e deadlineEntry) {
	if n := len(t.deadlines); n > 1024 && n > 4*(t.nFlights+len(t.owed)+t.owedOld+64) {
		live := t.deadlines[:0]
		for _, d := range t.deadlines {
			if d.live() {
				live = append(live, d)
			}
		}
		clear(t.deadlines[len(live):])
		t.deadlines = live
		t.deadlines.init()
	}
	t.deadlines.push(e)
}

func (e deadlineEntry) live() bool {
	if e.f != nil {
		return e.f.gen == e.gen && e.f.state == flying && !e.f.timedOut && !e.f.atEnd && e.f.deadline == e.at
	}
	return e.o != nil && !e.o.done
}

type deadlineEntry struct {
	at  time.Duration
	f   *flight
	gen uint32 // the flight's generation when pushed (flights are reused)
	o   *owed
}

// deadlineHeap is a min-heap by time, written out so that pushing an entry
// costs no allocation.
type deadlineHeap []deadlineEntry

func (h deadlineHeap) Len() int { return len(h) }

func (h *deadlineHeap) push(e deadlineEntry) {
	*h = append(*h, e)
	a := *h
	for i := len(a) - 1; i > 0; {
		p := (i - 1) / 2
		if a[p].at <= a[i].at {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *deadlineHeap) pop() deadlineEntry {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a[last] = deadlineEntry{}
	a = a[:last]
	*h = a
	h.down(0)
	return top
}

func (h deadlineHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].at < h[l].at {
			m = r
		}
		if h[i].at <= h[m].at {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

func (h deadlineHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}
