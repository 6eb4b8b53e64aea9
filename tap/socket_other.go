//go:build !linux

package tap

// unsent is how much of what was written to the socket fd its reader has
// not read yet; this platform cannot say (ok false).
func unsent(fd uintptr) (n int, ok bool) { return 0, false }
