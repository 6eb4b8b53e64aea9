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

// A frame of valid UTF-8 streamed as text, in pieces that cut characters
// anywhere, is recorded in "frame" exactly as WriteFrame records it held
// whole: the same line, escapes and all.
func TestTextFrameStreamRecordsAFrameAsWriteFrameDoes(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "\"", "\\", "\n", "\x00", "\x1b", "\x7f", "é", "✓", "\u2028", "\u202e", "😀", "\u00ad", "{\"id\":1}"}
	var frame []byte
	for len(frame) < 1<<20 {
		frame = append(frame, alphabet[rnd.IntN(len(alphabet))]...)
	}
	rec := FrameRecord{T: 5, Dir: classify.S2H, Captured: true, Kind: "response", ID: []byte(`1`)}
	var whole bytes.Buffer
	w, _ := NewWriter(&whole, Header{ID: "x", Started: time.Unix(0, 0)})
	start := whole.Len()
	wrec := rec
	wrec.Frame = frame
	if err := w.WriteFrame(wrec); err != nil {
		t.Fatal(err)
	}
	want := whole.Bytes()[start:]

	var buf bytes.Buffer
	w, _ = NewWriter(&buf, Header{ID: "x", Started: time.Unix(0, 0)})
	start = buf.Len()
	fs, err := w.BeginTextFrame(rec)
	if err != nil {
		t.Fatal(err)
	}
	for rest := frame; len(rest) > 0; {
		n := min(len(rest), 1+rnd.IntN(5000))
		if _, err := fs.Write(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	if got := buf.Bytes()[start:]; !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("the streamed record differs from WriteFrame's at byte %d of %d: %q, want %q", i, len(want), got[i:min(i+40, len(got))], want[i:min(i+40, len(want))])
	}
	ev, err := NewReader(bytes.NewReader(buf.Bytes())).Next()
	if err != nil || !bytes.Equal(ev.Frame, frame) {
		t.Fatalf("the record does not read back: %v, %d bytes of %d", err, len(ev.Frame), len(frame))
	}
}

// A text frame whose bytes are not UTF-8, or end inside a character,
// fails rather than record other bytes.
func TestTextFrameStreamRefusesBytesThatAreNotUTF8(t *testing.T) {
	for _, parts := range [][]string{{"ok ", "\xff", " more"}, {"ends in \xe2\x80"}} {
		w, _ := NewWriter(io.Discard, Header{ID: "x", Started: time.Unix(0, 0)})
		fs, err := w.BeginTextFrame(FrameRecord{Dir: classify.S2H})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			fs.Write([]byte(p))
		}
		if err := fs.Close(); err == nil {
			t.Errorf("streaming %q as text did not fail", parts)
		}
	}
}
