//go:build !linux || !cgo || !(386 || amd64 || arm64 || loong64 || ppc64le)

package earlysignal

// handOver does nothing: without cgo (or off Linux, or where the Go
// runtime does not ask the C library's sigaction) nothing runs before the
// Go runtime, whose handlers end the process on these signals until init
// asks os/signal for them.
func handOver() {}
