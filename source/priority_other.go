//go:build !linux

package source

// background leaves the goroutine's priority as it is where threads have
// no priority of their own.
func background() {}

// backgroundProcess leaves the process's priority as it is.
func backgroundProcess() {}
