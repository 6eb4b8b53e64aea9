//go:build !linux

package tap

import "syscall"

// dieWithTap would have the server killed when the tap dies before it;
// this platform has no such request to the kernel.
func dieWithTap(attr *syscall.SysProcAttr) {}
