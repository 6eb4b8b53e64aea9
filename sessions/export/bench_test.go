package export

import (
	"io"
	"os"
	"testing"

	"github.com/rpctap/rpctap/sessions"
)

// BenchmarkExport exports the session in $RPCTAP_BENCH_SESSION (a large
// one from testdata/bench/gensession; skipped when unset) in each format.
func BenchmarkExport(b *testing.B) {
	path := os.Getenv("RPCTAP_BENCH_SESSION")
	if path == "" {
		b.Skip("set RPCTAP_BENCH_SESSION to a session file (go run ./testdata/bench/gensession -o FILE)")
	}
	for _, f := range []Format{FormatMarkdown, FormatJSON, FormatHAR, FormatOTLP} {
		b.Run(f.String(), func(b *testing.B) {
			red, _ := sessions.NewRedactor(os.Environ(), nil)
			for b.Loop() {
				if _, err := Write(io.Discard, path, Options{Format: f, Redactor: red}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
