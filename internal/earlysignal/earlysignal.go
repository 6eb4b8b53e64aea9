// Package earlysignal catches the signals rpctap run (and rpctap replay,
// which ends as a tap does) passes on to its server from the moment the
// process starts, so that a host that stops the tap at any moment gets a
// clean end, never the default action.
//
// With cgo on Linux (rpctap's usual build) the catching starts in C,
// before the Go runtime does: the runtime's own handlers, installed in its
// first steps, end the process on a signal nobody has asked os/signal for
// yet, and no Go code runs before them. The C handler notes each signal;
// this package's init asks os/signal for them, hands over to the
// runtime's handlers and raises again each signal noted (early_linux.c
// says how). Without cgo, the catching starts in this package's init:
// it imports only os and os/signal, so it is initialised before the
// packages that take long (a syntax highlighter's tables, a few hundred
// milliseconds on a busy machine; GODEBUG=inittrace=1 shows the order),
// but a signal before it still ends the process.
//
// It does so only for rpctap run and replay: other commands keep the
// default actions. A signal inherited as ignored (nohup, a shell's
// background job) stays ignored, and the server inherits it so, as it
// would have with no tap in front of it (Passed).
package earlysignal

import (
	"os"
	"os/signal"
	"syscall"
)

// Run receives SIGINT, SIGTERM and SIGHUP from the process's start when
// the command is rpctap run or replay; otherwise it is nil and no signal
// is caught.
var Run <-chan os.Signal

// Passed are the signals a tap passes on to its server: SIGINT, SIGTERM
// and SIGHUP, but those the process inherited as ignored. Asking
// os/signal for one would undo the ignoring, for the tap and for the
// server it starts, which inherits the actions the tap has; left ignored,
// the server ignores it too, as it would with no tap in front of it.
func Passed() []os.Signal {
	var sigs []os.Signal
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

func init() {
	if len(os.Args) > 1 && (os.Args[1] == "run" || os.Args[1] == "replay") {
		c := make(chan os.Signal, 8)
		signal.Notify(c, Passed()...)
		handOver()
		Run = c
		if os.Getenv(readyVar) == "fd3" {
			// A lifecycle test learns the moment the signals reach
			// Run: one byte on fd 3.
			f := os.NewFile(3, "ready")
			f.Write([]byte{1})
			f.Close()
		}
	}
}

// readyVar, set to fd3 by a test that passes a pipe as fd 3, has the
// process say there when the signals reach Run.
const readyVar = "RPCTAP_TEST_SIGNALS_READY"
