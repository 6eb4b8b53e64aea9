//go:build race

package tap

// raceEnabled scales down the tests that move a lot of bytes: the race
// detector makes them ten times slower and adds nothing past a point.
const raceEnabled = true
