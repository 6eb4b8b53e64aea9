package classify

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// The fuzz targets check, for any bytes and any way of cutting them into
// reads, that the frames cover the stream exactly, that they are the same
// however the stream was cut, and that every frame's fields agree with its
// bytes. Run them with
//
//	go test -run XXX -fuzz FuzzSplitLSP -fuzztime 60s ./classify

func FuzzSplitNDJSON(f *testing.F) {
	splitterSeed(f, FramingNDJSON)
	f.Add([]byte("a\nb\r\n\n\x00\xff"), uint64(1))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		whole := splitterFuzzOne(t, data, seed, FramingNDJSON)
		if want := splitterLines(data); fmt.Sprint(whole) != fmt.Sprint(want) {
			t.Fatalf("ndjson frames differ from the lines\n got %v\nwant %v", whole, want)
		}
		splitterFuzzOne(t, data, seed, FramingAuto)
	})
}

func FuzzSplitLSP(f *testing.F) {
	splitterSeed(f, FramingLSP)
	f.Add([]byte("Content-Length: 2\r\n\r\n{}Content-Length: 1\n\nx"), uint64(2))
	f.Add([]byte("Content-Length: x\r\n\r\n{}Content-Length: 2\r\n\r\n{}"), uint64(3))
	f.Add([]byte("content-type: a\r\nContent-Length: 03\r\ncontent-length: 3\r\n\r\n{}\n"), uint64(4))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		splitterFuzzOne(t, data, seed, FramingLSP)
		splitterFuzzOne(t, data, seed, FramingAuto)
	})
}

// splitterSeed adds the inputs of the case files for framing f (and auto).
func splitterSeed(f *testing.F, framing Framing) {
	files, _ := filepath.Glob(filepath.Join("testdata", "frames", "*.txtar"))
	for i, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		c := splitterParseCase(f, string(raw))
		if c.framing == framing || c.framing == FramingAuto {
			f.Add(c.input, uint64(i))
		}
	}
}

func splitterFuzzOne(t *testing.T, data []byte, seed uint64, f Framing) []FrameSpan {
	t.Helper()
	whole := SplitAll(data, f)
	splitterCheckFrames(t, data, whole)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	maxPiece := int(seed%19) + 1
	fed := splitterFeed(t, data, f, func() int { return rng.IntN(maxPiece) + 1 })
	if fmt.Sprint(fed) != fmt.Sprint(whole) {
		t.Fatalf("%v: fed in pieces of up to %d bytes\n got %v\nwhole %v", f, maxPiece, fed, whole)
	}
	return whole
}
