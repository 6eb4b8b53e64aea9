//go:build linux && cgo && (386 || amd64 || arm64 || loong64 || ppc64le)

package earlysignal

// void earlysignal_hand_over(void);
import "C"

// handOver has the Go runtime's handlers take over from early_linux.c's,
// which caught the signals from before the runtime started, and raises
// again each signal that came meanwhile. os/signal has been asked for
// them already, so that they reach its channel.
func handOver() {
	C.earlysignal_hand_over()
}
