//go:build !unix

package sessions

import (
	"io/fs"
	"os"
)

// checkPrivateDir has no owner to check on this system.
func checkPrivateDir(string) error { return nil }

// openSink opens the device at path, of mode, to write to it as it is.
func openSink(path string, _ fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, createError(path, err)
	}
	return f, nil
}

// openExisting opens the regular file at path to read it.
func openExisting(path string) (*os.File, error) { return os.Open(path) }

// lockFile has no lock to take on this system: a running rpctap's
// file is not told from another one there.
func lockFile(*os.File) {}

func lockedElsewhere(*os.File) bool { return false }
