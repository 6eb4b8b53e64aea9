// Package earlysignal catches the signals rpctap run (and rpctap replay,
// which ends as a tap does) passes on to its server from the moment the process starts: before the packages that take
// long to initialise (a syntax highlighter's tables, a few hundred
// milliseconds on a busy machine) and before main, so that a host that
// stops the tap at any moment gets a clean end, never the default action.
//
// It does so only for rpctap run and replay: other commands keep the
// default actions.
// Package initialisation goes in import path order among packages whose
// imports are ready, and this one imports only os and os/signal, so it is
// initialised long before those slow ones (GODEBUG=inittrace=1 shows it).
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

func init() {
	if len(os.Args) > 1 && (os.Args[1] == "run" || os.Args[1] == "replay") {
		c := make(chan os.Signal, 8)
		signal.Notify(c, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		Run = c
		if os.Getenv(readyVar) == "fd3" {
			// A lifecycle test learns the moment the signals are caught
			// (it counts its delays from there): one byte on fd 3.
			f := os.NewFile(3, "ready")
			f.Write([]byte{1})
			f.Close()
		}
	}
}

// readyVar, set to fd3 by a test that passes a pipe as fd 3, has the
// process say there when the signals are caught.
const readyVar = "RPCTAP_TEST_SIGNALS_READY"
