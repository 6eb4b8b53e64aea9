package sessions

import (
	"cmp"
	"slices"

	"github.com/rpctap/rpctap/classify"
)

// Pairs are every request/response pair of a session, with latency, as
// an Index's tracker made them (the members of a batch each on their
// own), sorted by request line. Collect them while indexing with
// CollectPairs.
type Pairs struct {
	list   []Pair
	sorted bool
}

// A Pair is one request and its answer, as the tracker paired them.
type Pair struct {
	classify.Pair
	// Error says the answer was an error: the batch member that answers
	// the request, when the answer came in a batch.
	Error bool
}

// CollectPairs returns opts with an OnPair that adds to ps (chaining any
// OnPair opts had).
func (ps *Pairs) CollectPairs(opts IndexOptions) IndexOptions {
	prev := opts.OnPair
	opts.OnPair = func(p classify.Pair, isError bool) {
		ps.list = append(ps.list, Pair{Pair: p, Error: isError})
		ps.sorted = false
		if prev != nil {
			prev(p, isError)
		}
	}
	return opts
}

// List returns the pairs by request line (then response line).
func (ps *Pairs) List() []Pair {
	if !ps.sorted {
		slices.SortStableFunc(ps.list, func(a, b Pair) int {
			return cmp.Or(cmp.Compare(a.Request, b.Request), cmp.Compare(a.Response, b.Response))
		})
		ps.sorted = true
	}
	return ps.list
}
