package classify

// plainRun returns the length of p's leading run of string bytes that
// need no more thought than scanString's word loop gives them, reading
// sixteen bytes at a time (see simd_amd64.s), and whether the run held an
// escape.
//
//go:noescape
func plainRun(p []byte) (n int, escaped bool)

// quoteRun quotes the leading printable ASCII of src into dst sixteen
// bytes at a time (see simd_amd64.s) and returns how many bytes it wrote
// and read.
//
//go:noescape
func quoteRun(dst, src []byte) (nd, ns int)
