package sessions_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

const indexBenchFrames = 100_000

// indexBenchFile is a session of indexBenchFrames MCP tools/call requests
// and their results of about 1 KiB each, as testdata/bench/gensession
// writes them.
var indexBenchFile = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	h := testHeader()
	h.Profile = "mcp"
	w, err := sessions.NewWriter(&buf, h)
	if err != nil {
		panic(err)
	}
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)[:880]
	for i := range indexBenchFrames / 2 {
		t := int64(i) * 100
		req := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"%s","n":%d}}}`, i, text, i)
		resp := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}],"isError":false}}`, i, text)
		if err := w.WriteFrame(sessions.FrameRecord{T: t, Dir: classify.H2S, Frame: req}); err != nil {
			panic(err)
		}
		if err := w.WriteFrame(sessions.FrameRecord{T: t + 50, Dir: classify.S2H, Frame: resp}); err != nil {
			panic(err)
		}
	}
	return buf.Bytes()
})

// BenchmarkIndexAdd1KiB adds records one at a time, as a live session
// does; one op is one record, read and indexed.
func BenchmarkIndexAdd1KiB(b *testing.B) {
	file := indexBenchFile()
	runtime.GC()
	b.SetBytes(int64(len(file) / indexBenchFrames))
	b.ReportAllocs()
	var x *sessions.Index
	var r *sessions.Reader
	start := func() {
		r = sessions.NewReader(bytes.NewReader(file))
		h, _ := r.Header()
		x = sessions.NewIndex(sessions.IndexOptions{})
		x.SetHeader(h)
	}
	start()
	for b.Loop() {
		ev, err := r.Next()
		if err == io.EOF {
			start()
			ev, err = r.Next()
		}
		if err != nil {
			b.Fatal(err)
		}
		x.Add(ev, r.Offset())
	}
}

// BenchmarkIndexFile indexes a file of 100,000 frames of about 1 KiB (100
// MB) with ReadFile; one op is the whole file. It reports the time per
// entry and the heap an entry keeps.
func BenchmarkIndexFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "session.jsonl")
	if err := os.WriteFile(path, indexBenchFile(), 0o600); err != nil {
		b.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heap0 := ms.HeapAlloc
	b.SetBytes(int64(len(indexBenchFile())))
	var x *sessions.Index
	start := time.Now()
	for b.Loop() {
		x = sessions.NewIndex(sessions.IndexOptions{})
		if err := x.ReadFile(context.Background(), path, nil); err != nil {
			b.Fatal(err)
		}
		if x.Len() != indexBenchFrames {
			b.Fatalf("Len() = %d", x.Len())
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*indexBenchFrames), "ns/entry")
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(int64(ms.HeapAlloc)-int64(heap0))/indexBenchFrames, "heap-B/entry")
	runtime.KeepAlive(x)
}
