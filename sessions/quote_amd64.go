package sessions

// quoteRun quotes the leading printable ASCII of src into dst sixteen
// bytes at a time (see quote_amd64.s) and returns how many bytes it wrote
// and read.
//
//go:noescape
func quoteRun(dst, src []byte) (nd, ns int)
