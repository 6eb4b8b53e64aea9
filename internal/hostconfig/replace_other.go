//go:build !linux

package hostconfig

// replace puts the file tmp in place of path, provided path still holds
// old, looked at just before the rename.
func replace(tmp, path string, old []byte) (keep bool, err error) {
	return false, replaceByRename(tmp, path, old)
}
