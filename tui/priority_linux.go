package tui

import (
	"runtime"
	"syscall"
	"unsafe"
)

// schedIdle is Linux's SCHED_IDLE policy: a thread that runs only when no
// other thread wants the CPU.
const schedIdle = 5

// background puts the calling goroutine on a thread of its own that runs
// only on CPU time nothing else wants (SCHED_IDLE; where that is refused,
// nice 19), for work that must yield to the tap whose traffic it shows.
// The thread ends with the goroutine.
func background() {
	runtime.LockOSThread()
	tid := syscall.Gettid()
	param := struct{ priority int32 }{0}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), schedIdle, uintptr(unsafe.Pointer(&param))); errno != 0 {
		syscall.Setpriority(syscall.PRIO_PROCESS, tid, 19)
	}
}
