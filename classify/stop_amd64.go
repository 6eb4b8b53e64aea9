package classify

// plainRun returns the length of p's leading run of string bytes that
// need no more thought than scanString's word loop gives them, reading
// sixteen bytes at a time (see stop_amd64.s), and whether the run held an
// escape.
//
//go:noescape
func plainRun(p []byte) (n int, escaped bool)
