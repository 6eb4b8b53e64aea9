package source

import (
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// backgroundNice is the nice value of a live view's indexing threads: on a
// busy machine they get a small share of the CPU beside the tap's threads,
// so the view yields to the traffic it shows. Not SCHED_IDLE: a thread
// starved outright while it holds a P stalls every stop-the-world pause of
// the Go runtime, and the view's drawing with it. Measured with both cores
// saturated by other processes, a goroutine's 10 ms sleep overran by p99
// 10 ms (max 0.3 s) beside a nice-19 worker, p99 62 ms (max 1.2 s) beside
// a SCHED_IDLE one, p99 11 ms beside one at normal priority.
const backgroundNice = 19

// background puts the calling goroutine on a thread of its own at a lower
// CPU priority, for work that should yield to the tap whose traffic it
// shows. The thread ends with the goroutine.
func background() {
	runtime.LockOSThread()
	syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), backgroundNice)
}

// backgroundProcess puts every thread of the process at that priority,
// and so the threads they start, for a process that does nothing but
// observe (rpctap tail): its garbage collection and its reading of the
// tap's notes yield to the tap too, not only its indexing.
func backgroundProcess() {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		background()
		return
	}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			syscall.Setpriority(syscall.PRIO_PROCESS, tid, backgroundNice)
		}
	}
}
