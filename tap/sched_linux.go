package tap

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// schedTimes sums, over the process's threads, the CPU time they have
// used and the time they have waited, runnable, for a CPU (the kernel's
// /proc/self/task/*/schedstat); ok is false where it cannot say.
func schedTimes() (cpu, waited time.Duration, ok bool) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0, 0, false
	}
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := bytes.Fields(b)
		if len(f) < 2 {
			return 0, 0, false
		}
		c, err1 := strconv.ParseInt(string(f[0]), 10, 64)
		w, err2 := strconv.ParseInt(string(f[1]), 10, 64)
		if err1 != nil || err2 != nil {
			return 0, 0, false
		}
		cpu += time.Duration(c)
		waited += time.Duration(w)
		ok = true
	}
	return cpu, waited, ok
}
