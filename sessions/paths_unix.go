//go:build unix

package sessions

import (
	"fmt"
	"os"
	"syscall"
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
