//go:build !unix

package hostconfig

import (
	"io/fs"
	"os"
)

// sameOwner has nothing to do where files have no owner rpctap can set.
func sameOwner(*os.File, fs.FileInfo) error { return nil }

// syncDir has nothing to do where a directory cannot be synced.
func syncDir(string) error { return nil }

// An ownerError never happens here.
type ownerError struct{}

func (*ownerError) Error() string { return "" }
