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

// fSetPipeSize is F_SETPIPE_SZ (fcntl(2)); package syscall does not name it.
const fSetPipeSize = 1031

// growPipe asks for a pipe of pipeSize bytes; where that is refused (a
// per-user limit), the pipe stays as it is.
func growPipe(f *os.File) {
	sc, err := f.SyscallConn()
	if err != nil {
		return
	}
	sc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, pipeSize)
	})
}
