package inject

import (
	"strconv"
	"sync"

	"github.com/rpctap/rpctap/classify"
)

// IDs allocates ids for injected requests. An injected request
// impersonates the side that sends in its direction (the host for h2s),
// so its id must not collide with that side's ids: Next returns a string
// id "rpctap-N" above every "rpctap-N" that side has used, and Collides
// tells whether an id the user typed equals one of that side's requests
// in flight.
//
// Feed it every frame of the session with See. Memory is bounded: it
// keeps one number per side and up to maxInFlight ids in flight per side.
// It is safe for concurrent use.
type IDs struct {
	mu       sync.Mutex
	top      [3]int                 // highest N of "rpctap-N" seen or given out, per direction
	used     [3]int                 // highest N of "rpctap-N" seen in a request, per direction
	inFlight [3]map[string]struct{} // requests in flight, by id key, per direction
}

// maxInFlight bounds the ids in flight kept per side; beyond it,
// Collides may miss a collision (a flood of requests), Next never does.
const maxInFlight = 1 << 16

// idPrefix begins every id rpctap chooses.
const idPrefix = "rpctap-"

// NewIDs returns an allocator that has seen nothing yet.
func NewIDs() *IDs {
	a := &IDs{}
	for i := range a.inFlight {
		a.inFlight[i] = map[string]struct{}{}
	}
	return a
}

// See takes in a frame of the session (as classify read it): requests
// from a side are in flight until a response with their id comes back the
// other way. A batch's members count one by one.
func (a *IDs) See(m *classify.Message) {
	if m.Dir != classify.H2S && m.Dir != classify.S2H {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.see(m)
}

// SeeID takes in a frame of the session known only by its kind and its
// id, as an index keeps it (rawID is the id's JSON text as on the wire,
// "" for none), by See's rules: what a view that reads no frames back
// feeds the allocator with.
func (a *IDs) SeeID(dir classify.Direction, kind classify.Kind, rawID string) {
	if dir != classify.H2S && dir != classify.S2H || rawID == "" {
		return
	}
	id := classify.RawID([]byte(rawID))
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seeID(dir, kind, id)
}

func (a *IDs) see(m *classify.Message) {
	for i := range m.Members {
		a.see(&m.Members[i])
	}
	if !m.HasID() {
		return
	}
	a.seeID(m.Dir, m.Kind, m.ID())
}

// seeID takes in a frame of kind with id, sent in dir.
func (a *IDs) seeID(dir classify.Direction, kind classify.Kind, id classify.ID) {
	if id.IsString() {
		if s, ok := classify.StringValue(id.Raw); ok && len(s) > len(idPrefix) && s[:len(idPrefix)] == idPrefix {
			if n, err := strconv.Atoi(s[len(idPrefix):]); err == nil {
				a.top[dir] = max(a.top[dir], n)
				if kind == classify.KindRequest {
					a.used[dir] = max(a.used[dir], n)
				}
			}
		}
	}
	switch kind {
	case classify.KindRequest:
		if set := a.inFlight[dir]; len(set) < maxInFlight {
			set[id.Key()] = struct{}{}
		}
	case classify.KindResponse:
		delete(a.inFlight[dir.Opposite()], id.Key())
	}
}

// Next returns a fresh id, as JSON text, for a request injected in
// direction dir: "rpctap-N", with N above any the sender of dir has used.
func (a *IDs) Next(dir classify.Direction) string {
	if dir != classify.H2S && dir != classify.S2H {
		dir = classify.H2S
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.top[dir]++
	return `"` + idPrefix + strconv.Itoa(a.top[dir]) + `"`
}

// Peek returns the id Next would return, without taking it: templates
// show it, and each template's request shows the same one (one is sent
// at a time).
func (a *IDs) Peek(dir classify.Direction) string {
	if dir != classify.H2S && dir != classify.S2H {
		dir = classify.H2S
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return `"` + idPrefix + strconv.Itoa(a.top[dir]+1) + `"`
}

// Collides reports whether id (JSON text) equals the id of a request in
// flight from the sender of dir, so that a request injected with it makes
// two requests with one id.
func (a *IDs) Collides(dir classify.Direction, id []byte) bool {
	if dir != classify.H2S && dir != classify.S2H {
		return false
	}
	k := classify.RawID(id).Key()
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.inFlight[dir][k]
	return ok
}

// Used reports whether a request with id (JSON text) was already sent in
// direction dir: it is in flight, or it is an id rpctap chose
// ("rpctap-N") at or below the highest one seen in a request. A composer
// gives such an id a fresh one when it sends, so that sending a frame
// twice never sends one id twice.
func (a *IDs) Used(dir classify.Direction, id []byte) bool {
	if dir != classify.H2S && dir != classify.S2H {
		return false
	}
	if a.Collides(dir, id) {
		return true
	}
	s, ok := classify.StringValue(id)
	if !ok || len(s) <= len(idPrefix) || s[:len(idPrefix)] != idPrefix {
		return false
	}
	n, err := strconv.Atoi(s[len(idPrefix):])
	a.mu.Lock()
	defer a.mu.Unlock()
	return err == nil && n <= a.used[dir]
}

// inFlightCount is how many requests from dir's sender are in flight.
func (a *IDs) inFlightCount(dir classify.Direction) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.inFlight[dir])
}
