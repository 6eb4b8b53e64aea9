//go:build !amd64

package sessions

// quoteRun leaves every byte to appendQuoted's word loop where there is
// no assembly for it.
func quoteRun(dst, src []byte) (nd, ns int) { return 0, 0 }
