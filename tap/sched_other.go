//go:build !linux

package tap

import "time"

// schedTimes would say what the process's threads used of the CPU and
// how long they waited for one; this system cannot say (ok false).
func schedTimes() (cpu, waited time.Duration, ok bool) { return 0, 0, false }
