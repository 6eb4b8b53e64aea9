package classify

import (
	"bytes"
	"hash/maphash"
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
