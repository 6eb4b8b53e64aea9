package filter

import (
	"strings"
	"testing"
)

// benchFrames is a varied stream: the corpus, repeated, with 1 KiB
// payloads.
func benchFrames() []Frame {
	text := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` +
		strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)[:880] + `"}}}`)
	frames := make([]Frame, 0, 4096)
	for len(frames) < cap(frames) {
		for _, c := range corpus {
			fr := c.frame
			fr.Payload = func() []byte { return text }
			frames = append(frames, fr)
		}
	}
	return frames[:cap(frames)]
}

func benchmarkMatch(b *testing.B, expr string) {
	f, err := Parse(expr)
	if err != nil {
		b.Fatal(err)
	}
	frames := benchFrames()
	b.ReportAllocs()
	n, matched := 0, 0
	for b.Loop() {
		if f.Match(&frames[n%len(frames)]) {
			matched++
		}
		n++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/frame")
	_ = matched
}

// A filter of index-only tokens, the kind a view runs over a million
// frames: per frame it reads the index and never a payload.
func BenchmarkMatchIndexOnly(b *testing.B) {
	benchmarkMatch(b, "method:tools/* !dir:err flag:timeout")
}

func BenchmarkMatchIndexGeneralGlob(b *testing.B) {
	benchmarkMatch(b, "method:t*o?s/*l sev:warn !status:ok id:7")
}

// A phrase that is in no frame: every payload is scanned to the end.
func BenchmarkMatchTextASCIIMiss(b *testing.B) { benchmarkMatch(b, "zebra") }

func BenchmarkMatchTextNonASCIIMiss(b *testing.B) { benchmarkMatch(b, "zébra") }

// One million frames in one go, as the UI would filter its index.
func BenchmarkMatchMillionFrames(b *testing.B) {
	f, err := Parse("method:tools/* !dir:err flag:timeout")
	if err != nil {
		b.Fatal(err)
	}
	frames := benchFrames()
	for b.Loop() {
		for i := range 1_000_000 {
			f.Match(&frames[i&(len(frames)-1)])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/1M-frames")
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(`method:tools/* !dir:err flag:timeout "most recent" id:"1"`); err != nil {
			b.Fatal(err)
		}
	}
}
