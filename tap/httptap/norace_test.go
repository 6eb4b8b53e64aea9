//go:build !race

package httptap

const raceEnabled = false
