package tap

import (
	"syscall"
	"unsafe"
)

// unsent is how much of what was written to the socket fd its reader has
// not read yet, as the kernel counts it against the socket's send buffer
// (SO_SNDBUF), its overhead included; ok is false where the platform
// cannot say.
func unsent(fd uintptr) (n int, ok bool) {
	var q int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCOUTQ, uintptr(unsafe.Pointer(&q))); e != 0 {
		return 0, false
	}
	return int(q), true
}
