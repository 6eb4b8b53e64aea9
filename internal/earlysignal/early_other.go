//go:build !linux || !cgo

package earlysignal

// handOver does nothing: without cgo (or off Linux) nothing runs before
// the Go runtime, whose handlers end the process on these signals until
// init asks os/signal for them.
func handOver() {}
