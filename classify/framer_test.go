package classify

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// What AppendFrame writes is read back by the Splitter as one frame per
// body, with the body as it was given and a plain header block for lsp.
func TestAppendFrameIsReadBackAsTheFramesWritten(t *testing.T) {
	bodies := [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), []byte(`{}`), {}, []byte("caf\xc3\xa9 \xff")}
	for _, f := range []Framing{FramingNDJSON, FramingLSP, FramingAuto} {
		var wire []byte
		for _, b := range bodies {
			wire = AppendFrame(wire, f, b, nil)
		}
		spans := SplitAll(wire, f)
		if len(spans) != len(bodies) {
			t.Fatalf("%s: %d frames read back, want %d", f, len(spans), len(bodies))
		}
		for i, sp := range spans {
			frame := wire[sp.Start : sp.Start+sp.Size]
			if got := sp.Body(frame); !bytes.Equal(got, bodies[i]) {
				t.Errorf("%s frame %d: body %q, want %q", f, i, got, bodies[i])
			}
			if f == FramingLSP && !sp.PlainHeader {
				t.Errorf("%s frame %d: header block %q is not the plain one", f, i, frame[:sp.HeaderLen])
			}
		}
	}
}

// A recorded header block is written as it was, for lsp only.
func TestAppendFrameKeepsAGivenHeaderForLSPOnly(t *testing.T) {
	header := []byte("Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n")
	if got := string(AppendFrame([]byte("x"), FramingLSP, []byte("{}"), header)); got != "x"+string(header)+"{}" {
		t.Errorf("lsp: %q", got)
	}
	if got := string(AppendFrame(nil, FramingNDJSON, []byte("{}"), header)); got != "{}\n" {
		t.Errorf("ndjson: %q", got)
	}
}

// Frames written from many goroutines at once reach the stream whole.
func TestFrameWriterNeverInterleavesFrames(t *testing.T) {
	var out lockedBuffer
	fw := NewFrameWriter(&out, FramingLSP)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := []byte(`{"n":"` + strings.Repeat(string(rune('a'+i)), 3000) + `"}`)
			for range 20 {
				fw.WriteFrame(body)
			}
		}()
	}
	wg.Wait()
	fw.WriteRaw([]byte("Content-Type: x\r\n\r\n"))
	spans := SplitAll(out.b.Bytes(), FramingLSP)
	if len(spans) != 161 {
		t.Fatalf("%d frames, want 161", len(spans))
	}
	for i, sp := range spans[:160] {
		if sp.Bad != "" || !sp.PlainHeader {
			t.Fatalf("frame %d: bad %q, plain %v", i, sp.Bad, sp.PlainHeader)
		}
	}
	if spans[160].Bad != frameBadNoLength {
		t.Errorf("the raw block reads as %q, want it written as it was", spans[160].Bad)
	}
}

// lockedBuffer stands for a pipe that may take one Write in two pieces,
// with another writer's bytes between them.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := len(p) / 2
	l.b.Write(p[:h])
	l.mu.Unlock()
	runtime.Gosched()
	l.mu.Lock()
	l.b.Write(p[h:])
	return len(p), nil
}

// SplitOpen reads the start of a stream: whole frames as SplitAll does,
// and a last frame the data ends inside as open, with the info it would
// have if the stream ended there.
func TestSplitOpenMarksTheFrameTheDataEndsInside(t *testing.T) {
	for _, c := range []struct {
		framing Framing
		data    string
		frames  int
		open    bool
	}{
		{FramingNDJSON, "", 0, false},
		{FramingNDJSON, "{}\n{}\n", 2, false},
		{FramingNDJSON, "{}\n{", 2, true},
		{FramingLSP, "Content-Length: 2\r\n\r\n{}", 1, false},
		{FramingLSP, "Content-Length: 2\r\n\r\n{}Content-Length: 2\r\n", 2, true},
		{FramingLSP, "Content-Length: 3\r\n\r\n{}", 1, true},
	} {
		spans, open := SplitOpen([]byte(c.data), c.framing)
		if len(spans) != c.frames || open != c.open {
			t.Errorf("%s %q: %d frames, open %v; want %d, %v", c.framing, c.data, len(spans), open, c.frames, c.open)
			continue
		}
		whole := SplitAll([]byte(c.data), c.framing)
		if fmt.Sprint(whole) != fmt.Sprint(spans) {
			t.Errorf("%s %q: %v, want SplitAll's %v", c.framing, c.data, spans, whole)
		}
	}
}
