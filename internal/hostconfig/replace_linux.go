package hostconfig

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// replace puts the file tmp in place of path, provided path still holds
// old: an editor may save it between rpctap's read and the replacement.
// A last look just before cannot see a save that lands after it, so the
// two files swap places (renameat2's RENAME_EXCHANGE, one atomic step)
// and the file that was at path, now at tmp, is looked at: when it is
// not what was read, it goes back, and nothing is lost. keep is true when
// tmp holds someone's file and must stay.
func replace(tmp, path string, old []byte) (keep bool, err error) {
	if err := unchanged(path, path, old); err != nil {
		return false, err
	}
	err = unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
	switch {
	case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP):
		return false, replaceByRename(tmp, path, old) // a kernel or filesystem that cannot swap
	case errors.Is(err, unix.ENOENT):
		if changed := unchanged(path, path, old); changed != nil {
			return false, changed // path went away: an editor is saving it
		}
		fallthrough
	case err != nil:
		return false, &os.LinkError{Op: "renameat2", Old: tmp, New: path, Err: err}
	}
	if changed := unchanged(tmp, path, old); changed != nil {
		if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE); err != nil {
			return true, fmt.Errorf("%w; what was saved meanwhile is in %s, put it back with: %s", changed, tmp, putBack(tmp, path))
		}
		return false, changed
	}
	return false, nil
}

// putBack is the command that puts what was saved meanwhile, left at tmp,
// back at path.
func putBack(tmp, path string) string { return "mv " + ShellQuote(tmp) + " " + ShellQuote(path) }
