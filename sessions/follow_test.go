package sessions_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

func TestFollowReadsAGrowingFileWrittenInRandomPieces(t *testing.T) {
	// The whole session, made up front, then appended in random pieces.
	var whole bytes.Buffer
	w, err := sessions.NewWriter(&whole, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var want [][]byte
	for i := range 300 {
		frame := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":"%s"}`, i, bytes.Repeat([]byte("é"), rng.IntN(200)))
		if i%50 == 7 {
			frame = bytes.Repeat(frame, 1+(100<<10)/len(frame)) // longer than the Reader's buffer
		}
		if err := w.WriteFrame(sessions.FrameRecord{T: int64(i), Dir: classify.S2H, Frame: frame}); err != nil {
			t.Fatal(err)
		}
		want = append(want, frame)
	}

	path := filepath.Join(t.TempDir(), "growing.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	done := make(chan error, 1)
	go func() {
		data := whole.Bytes()
		for len(data) > 0 {
			n := min(len(data), 1+rng.IntN(3000))
			if _, err := f.Write(data[:n]); err != nil {
				done <- err
				return
			}
			data = data[n:]
			if rng.IntN(20) == 0 {
				time.Sleep(time.Millisecond) // pace the writer so the reader catches up mid-line
			}
		}
		done <- nil
	}()

	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := sessions.NewReader(in).Follow(ctx, time.Millisecond)
	if h, ok := r.Header(); !ok || h.Name != "server-everything" {
		t.Errorf("Header() = %+v, %v", h, ok)
	}
	for i, frame := range want {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !bytes.Equal(e.Frame, frame) || e.Line != i+2 {
			t.Fatalf("record %d: read %.40q on line %d, want %.40q on line %d", i, e.Frame, e.Line, frame, i+2)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r.Skipped() != 0 {
		t.Errorf("Skipped() = %d: a half line was read", r.Skipped())
	}
}

func TestFollowHoldsAPartialLastLineUntilItEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "partial.jsonl")
	line := []byte(`{"t":1,"dir":"h2s","frame":"whole"}` + "\n")
	if err := os.WriteFile(path, line[:20], 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	r := sessions.NewReader(in).Follow(ctx, time.Millisecond)
	if e, err := r.Next(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next on a half line = %+v, %v; want it to wait until the deadline", e, err)
	}

	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(line[20:]); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	r.Follow(ctx2, time.Millisecond)
	e, err := r.Next()
	if err != nil || string(e.Frame) != "whole" || e.Line != 1 {
		t.Fatalf("Next once the line ends = %+v, %v", e, err)
	}
	if r.Skipped() != 0 {
		t.Errorf("Skipped() = %d", r.Skipped())
	}
}

func TestFollowStopsWaitingWhenTheContextIsCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r := sessions.NewReader(in).Follow(ctx, time.Hour)
	go cancel()
	if _, err := r.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("Next() error = %v, want context.Canceled", err)
	}
}

// Following a file a tap writes ends at its exit record (lines after it are
// not waited for), and at the end of what is written once the tap is gone
// (a last line cut short does not keep it waiting for its "\n").
func TestFollowWhileEndsAtTheExitRecordOrWhenTheTapIsGone(t *testing.T) {
	var whole bytes.Buffer
	w, err := sessions.NewWriter(&whole, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	w.WriteFrame(sessions.FrameRecord{T: 1, Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)})
	code := 0
	w.WriteEvent(sessions.EventRecord{T: 2, Kind: sessions.EventExit, Code: &code})
	withExit := bytes.Clone(whole.Bytes())
	cut := withExit[:len(withExit)-10]
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
		live bool // the tap is still there
		exit bool
	}{
		{"an exit record, then more lines", append(bytes.Clone(withExit), "{\"t\":9,\"dir\":\"h2s\",\"frame\":\"x\"}\njunk"...), true, true},
		{"cut in its last line, its tap gone", cut, false, false},
	} {
		path := filepath.Join(dir, "s.jsonl")
		os.WriteFile(path, c.data, 0o600)
		x := sessions.NewIndex(sessions.IndexOptions{})
		done := make(chan error, 1)
		go func() {
			done <- x.FollowWhile(context.Background(), path, 10*time.Millisecond, func() bool { return c.live }, nil)
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: FollowWhile still waits", c.name)
		}
		if got := x.Counts(); got.H2S != 1 || got.Exit != c.exit {
			t.Errorf("%s: counts %+v; want the frame, exit record %v", c.name, got, c.exit)
		}
	}
}
