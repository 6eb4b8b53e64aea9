package tap

import (
	"os"
	"syscall"
)

// pipeSize is the capacity asked for the pipes to and from the server (and
// the host's, when they are pipes):
// larger than the default, so that bursts cost fewer wake-ups on each
// side.
const pipeSize = 1 << 20

// F_SETPIPE_SZ and F_GETPIPE_SZ (fcntl(2)); package syscall does not name
// them.
const (
	fSetPipeSize = 1031
	fGetPipeSize = 1032
)

// growPipe asks for a pipe of pipeSize bytes when f is a pipe with less;
// where that is refused (a per-user limit), or f is not a pipe, it stays
// as it is. A larger pipe is left alone.
func growPipe(f *os.File) { growPipeTo(f, pipeSize) }

func growPipeTo(f *os.File, size int) {
	sc, err := f.SyscallConn()
	if err != nil {
		return
	}
	sc.Control(func(fd uintptr) {
		n, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSize, 0)
		if errno == 0 && int(n) < size {
			syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, uintptr(size))
		}
	})
}
