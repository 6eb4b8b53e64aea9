package sessions_test

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// frame1KiB is a 1 KiB JSON-RPC response, as dense in quotes as real ones.
func frame1KiB(id int) []byte {
	b := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"content":[`, id)
	for i := 0; len(b) < 980; i++ {
		b = fmt.Appendf(b, `{"type":"text","name":"item-%d","ok":true},`, i)
	}
	b = append(b[:len(b)-1], `],"more":"`...)
	for len(b) < 1022 {
		b = append(b, 'x')
	}
	return append(b, `"}`...)
}

func BenchmarkWriteFrame1KiB(b *testing.B) {
	w, err := sessions.NewWriter(io.Discard, testHeader())
	if err != nil {
		b.Fatal(err)
	}
	rec := sessions.FrameRecord{T: 123456, Dir: classify.S2H, Frame: frame1KiB(42), Kind: "response", ID: []byte("42")}
	b.SetBytes(int64(len(rec.Frame)))
	b.ReportAllocs()
	for b.Loop() {
		if err := w.WriteFrame(rec); err != nil {
			b.Fatal(err)
		}
	}
}

const benchRecords = 200_000

// benchFile is a session of benchRecords records of 1 KiB JSON frames.
var benchFile = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	w, err := sessions.NewWriter(&buf, testHeader())
	if err != nil {
		panic(err)
	}
	for i := range benchRecords {
		dir := classify.H2S
		if i%2 == 1 {
			dir = classify.S2H
		}
		if err := w.WriteFrame(sessions.FrameRecord{T: int64(i) * 250, Dir: dir, Frame: frame1KiB(i)}); err != nil {
			panic(err)
		}
	}
	return buf.Bytes()
})

// BenchmarkReadFrames1KiB reads a file of 200,000 records of 1 KiB JSON
// frames; one op is one record, and the bytes are the file's bytes.
func BenchmarkReadFrames1KiB(b *testing.B) {
	file := benchFile()
	runtime.GC() // so that no collection of the set-up's garbage runs alongside
	b.SetBytes(int64(len(file) / benchRecords))
	b.ReportAllocs()
	r := sessions.NewReader(bytes.NewReader(file))
	for b.Loop() {
		e, err := r.Next()
		if err == io.EOF {
			r = sessions.NewReader(bytes.NewReader(file))
			e, err = r.Next()
		}
		if err != nil || len(e.Frame) != 1024 {
			b.Fatalf("Next() = %v, %v", e, err)
		}
	}
}
