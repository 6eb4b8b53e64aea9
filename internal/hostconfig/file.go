package hostconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// BackupSuffix names the copy Save keeps of a file before its first
// change: claude_desktop_config.json.rpctap-backup.
const BackupSuffix = ".rpctap-backup"

// A ReadOnlyError is Save's refusal of a file whose mode lets no one write
// it: someone made it read-only, and rpctap does not overrule that.
type ReadOnlyError struct {
	Path string
	Mode fs.FileMode
}

func (e *ReadOnlyError) Error() string {
	return fmt.Sprintf("%s is read-only (mode %04o)", e.Path, e.Mode.Perm())
}

// Save replaces the contents of the file at path, which held old when it
// was read, with b: through a new file, synced to disk, that takes its
// place, so that a host reading it never sees half a file, nor an empty
// one after a crash. The new file has the old one's owner, group and mode,
// so that rpctap run with sudo leaves a user's config the user's. The
// first time (when there is no backup yet) old is kept beside it, with
// the same owner, group and mode. A read-only file is refused, and so is
// a file that changed since it was read (an editor saved it), up to the
// instant it is replaced. It returns the backup's path when it made one.
func Save(path string, old, b []byte) (backup string, err error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // replace the file a link points to, not the link
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if info.Mode().Perm()&0o222 == 0 {
		return "", &ReadOnlyError{path, info.Mode()}
	}
	if err := unchanged(path, path, old); err != nil {
		return "", err
	}
	bak := path + BackupSuffix
	if _, err := os.Lstat(bak); errors.Is(err, fs.ErrNotExist) {
		if err := writeNew(bak, old, info); err != nil {
			if errors.As(err, new(*ownerError)) {
				return "", err
			}
			return "", fmt.Errorf("keeping a backup of %s: %w", path, err)
		}
		backup = bak
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".rpctap-*")
	if err != nil {
		return backup, err
	}
	keep := false
	defer func() {
		if !keep {
			os.Remove(tmp.Name()) // after the swap, the old file; after a rename, nothing
		}
	}()
	if err := fill(tmp, b, info); err != nil {
		tmp.Close()
		return backup, err
	}
	if err := tmp.Close(); err != nil {
		return backup, err
	}
	if keep, err = replace(tmp.Name(), path, old); err != nil {
		return backup, err
	}
	return backup, syncDir(filepath.Dir(path))
}

// unchanged reports, as an error, that the file at p (which is path, or
// what path named an instant ago) no longer holds old.
func unchanged(p, path string, old []byte) error {
	now, err := os.ReadFile(p)
	if err == nil && bytes.Equal(now, old) {
		return nil
	}
	return fmt.Errorf("%s changed while rpctap was editing it (is the host or an editor saving it?); rpctap left it as it is: run the command again", path)
}

// fill writes b into f, gives it like's owner, group and mode (the owner
// first: a change of owner clears the set-id bits), and syncs it to disk.
func fill(f *os.File, b []byte, like fs.FileInfo) error {
	if _, err := f.Write(b); err != nil {
		return err
	}
	if err := sameOwner(f, like); err != nil {
		return err
	}
	if err := f.Chmod(like.Mode().Perm()); err != nil {
		return err
	}
	return f.Sync()
}

// writeNew makes the file path, which must not exist, holding b, with
// like's owner, group and mode; a file it could not finish is removed.
func writeNew(path string, b []byte, like fs.FileInfo) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = fill(f, b, like)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// replaceByRename is replace where the filesystem cannot swap two files:
// the last look at the file comes just before the rename.
func replaceByRename(tmp, path string, old []byte) error {
	if err := unchanged(path, path, old); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
