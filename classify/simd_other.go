//go:build !amd64

package classify

// plainRun leaves every byte to the word loop of scanString where there
// is no assembly for it.
func plainRun(p []byte) (n int, escaped bool) { return 0, false }

// quoteRun leaves every byte to AppendQuoted's word loop where there is
// no assembly for it.
func quoteRun(dst, src []byte) (nd, ns int) { return 0, 0 }
