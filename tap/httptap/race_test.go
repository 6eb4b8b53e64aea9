//go:build race

package httptap

// raceEnabled says the race detector runs: it makes sync.Pool drop what
// is put back at random, so a count of allocations means nothing.
const raceEnabled = true
