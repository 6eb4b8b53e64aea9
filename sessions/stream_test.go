package sessions

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
)

func TestFrameStreamRecordsAHugeFrameExactlyInPieces(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{ID: "x", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	frame := make([]byte, 3<<20+7)
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range frame {
		frame[i] = byte(rnd.IntN(256))
	}
	fs, err := w.BeginFrame(FrameRecord{T: 5, Dir: classify.S2H, Captured: true})
	if err != nil {
		t.Fatal(err)
	}
	for rest := frame; len(rest) > 0; {
		n := min(len(rest), 1+rnd.IntN(100_000))
		fs.Write(rest[:n])
		rest = rest[n:]
	}
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	w.WriteFrame(FrameRecord{T: 6, Dir: classify.H2S, Frame: []byte("after")})
	r := NewReader(&buf)
	ev, err := r.Next()
	if err != nil || !bytes.Equal(ev.Frame, frame) || !ev.Captured || ev.Dir != classify.S2H || ev.T != 5 {
		t.Fatalf("streamed frame did not read back (err %v, %d bytes, captured %v)", err, len(ev.Frame), ev.Captured)
	}
	ev, err = r.Next()
	if err != nil || string(ev.Frame) != "after" {
		t.Fatalf("the next record: %v %q", err, ev.Frame)
	}
	if _, err := r.Next(); err != io.EOF || r.Skipped() != 0 {
		t.Fatalf("want a clean end, got %v and %d skipped", err, r.Skipped())
	}
}
