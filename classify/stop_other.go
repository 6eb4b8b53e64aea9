//go:build !amd64

package classify

// plainRun leaves every byte to the word loop of scanString where there
// is no assembly for it.
func plainRun(p []byte) (n int, escaped bool) { return 0, false }
