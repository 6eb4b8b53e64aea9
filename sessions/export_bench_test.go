package sessions

import (
	"io"
	"os"
	"testing"
)

// BenchmarkExport exports the session in $RPCTAP_BENCH_SESSION (a large
// one from testdata/bench/gensession; skipped when unset) in each format.
func BenchmarkExport(b *testing.B) {
	path := os.Getenv("RPCTAP_BENCH_SESSION")
	if path == "" {
		b.Skip("set RPCTAP_BENCH_SESSION to a session file (go run ./testdata/bench/gensession -o FILE)")
	}
	for _, f := range []ExportFormat{FormatMarkdown, FormatJSON, FormatHAR, FormatOTLP} {
		b.Run(f.String(), func(b *testing.B) {
			red, _ := NewRedactor(os.Environ(), nil)
			for b.Loop() {
				if _, err := Export(io.Discard, path, ExportOptions{Format: f, Redactor: red}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
