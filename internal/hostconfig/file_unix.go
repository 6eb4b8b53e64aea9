//go:build unix

package hostconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// sameOwner gives f the owner and group of like, when they differ.
func sameOwner(f *os.File, like fs.FileInfo) error {
	want, ok := like.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if have, ok := fi.Sys().(*syscall.Stat_t); ok && have.Uid == want.Uid && have.Gid == want.Gid {
		return nil
	}
	if err := f.Chown(int(want.Uid), int(want.Gid)); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path named is rpctap's new file, not the user's
		}
		return &ownerError{want.Uid, want.Gid, err}
	}
	return nil
}

// syncDir syncs the directory dir, so that a rename in it is on disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// An ownerError says that rpctap cannot give the file it writes the
// owner and group of the file it replaces.
type ownerError struct {
	uid, gid uint32
	err      error
}

func (e *ownerError) Error() string {
	return fmt.Sprintf("the file belongs to uid %d, gid %d, and rpctap cannot give the file it writes in its place to them (%v), so it left the file as it is; run the command as that user, or with sudo", e.uid, e.gid, e.err)
}

func (e *ownerError) Unwrap() error { return e.err }
