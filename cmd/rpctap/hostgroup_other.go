//go:build !linux

package main

import "syscall"

// awaitExit cannot wait here without reaping the child: cmd.Wait must.
func awaitExit(int) bool { return false }

// groupLives reports whether a process of the group pgid is left.
func groupLives(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }
