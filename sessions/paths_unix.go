//go:build unix

package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/charmbracelet/x/term"
)

// checkPrivateDir refuses dir unless it is a real directory (not a
// symbolic link) owned by the user, with no access for group or others:
// in a shared temporary directory, anyone could have made it first.
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("checking the session directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("refusing to keep sessions in %s: it is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("refusing to keep sessions in %s: it belongs to user %d, not to you; remove it or set HOME", dir, st.Uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("refusing to keep sessions in %s: others can open it (mode %v); run chmod 700 on it", dir, fi.Mode().Perm())
	}
	return nil
}

// openSink opens the character device or FIFO at path, of mode, to write
// to it as it is. A FIFO that no one reads is refused rather than waited
// for (the session would wait with it), and so is a terminal: records
// hold the peers' text as they sent it, and a terminal would act on the
// escape sequences in it.
func openSink(path string, mode fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	switch {
	case errors.Is(err, syscall.ENXIO) && mode&fs.ModeNamedPipe != 0:
		return nil, &RecordError{what: "nothing reads the FIFO " + quoted(path),
			todo: "start its reader first (as in: cat " + quoted(path) + " > copy.jsonl &), or give --record a file's path", err: err}
	case err != nil:
		return nil, createError(path, err)
	}
	if isTerminal(f) {
		f.Close()
		return nil, &RecordError{what: quoted(path) + " is a terminal, where the peers' text would be shown unescaped",
			todo: "follow the session with rpctap tail or rpctap watch, or give --record a file's path", err: syscall.ENOTTY}
	}
	return f, nil
}

// openExisting opens the regular file at path to read it, never through
// a link, nor waiting on a FIFO put there meanwhile.
func openExisting(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

func isTerminal(f *os.File) bool {
	tty := false
	if sc, err := f.SyscallConn(); err == nil {
		sc.Control(func(fd uintptr) { tty = term.IsTerminal(fd) })
	}
	return tty
}

// lockFile marks f as the file of a session that is being recorded, for
// as long as f is open (the lock goes with the process, however it
// ends). A file system that takes no locks leaves f unmarked.
func lockFile(f *os.File) { tryLock(f) }

// lockedElsewhere says whether another open file holds f's lock: a
// command that is still recording it.
func lockedElsewhere(f *os.File) bool { return errors.Is(tryLock(f), syscall.EWOULDBLOCK) }

func tryLock(f *os.File) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := sc.Control(func(fd uintptr) {
		for {
			if lerr = syscall.Flock(int(fd), syscall.LOCK_EX|syscall.LOCK_NB); lerr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return lerr
}
