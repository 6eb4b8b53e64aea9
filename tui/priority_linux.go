package tui

import (
	"runtime"
	"syscall"
)

// backgroundNice is the nice value of a live view's indexing threads: on a
// busy machine they get about a tenth of the CPU share of the tap's, so the
// view yields to the traffic it shows, yet is never starved for long. (The
// lowest priorities would be: a starved thread that holds a P stalls every
// stop-the-world pause of the Go runtime, and with it the view's drawing.)
const backgroundNice = 10

// background puts the calling goroutine on a thread of its own at a lower
// CPU priority, for work that should yield to the tap whose traffic it
// shows. The thread ends with the goroutine.
func background() {
	runtime.LockOSThread()
	syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), backgroundNice)
}
