//go:build linux && cgo

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
