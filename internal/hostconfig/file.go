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

// Save replaces the contents of the file at path, which held old when it
// was read, with b: through a new file renamed over it, so that a host
// reading it never sees half a file, and with the old file's mode. The
// first time (when there is no backup yet) old is kept beside it. A file
// that changed since it was read is left alone. It returns the backup's
// path when it made one.
func Save(path string, old, b []byte) (backup string, err error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // replace the file a link points to, not the link
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	now, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if !bytes.Equal(now, old) {
		return "", fmt.Errorf("%s changed while rpctap was editing it (is the host saving it?); run the command again", path)
	}
	bak := path + BackupSuffix
	if _, err := os.Lstat(bak); errors.Is(err, fs.ErrNotExist) {
		if err := writeNew(bak, old, info.Mode().Perm()); err != nil {
			return "", fmt.Errorf("keeping a backup of %s: %w", path, err)
		}
		backup = bak
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".rpctap-*")
	if err != nil {
		return backup, err
	}
	defer os.Remove(tmp.Name()) // after a rename there is nothing left to remove
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return backup, err
	}
	if err := tmp.Chmod(info.Mode().Perm()); err != nil {
		tmp.Close()
		return backup, err
	}
	if err := tmp.Close(); err != nil {
		return backup, err
	}
	return backup, os.Rename(tmp.Name(), path)
}

func writeNew(path string, b []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
