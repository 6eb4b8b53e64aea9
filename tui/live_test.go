package tui

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/tap"
)

// A live tap in this process, with cat as the server: what the test writes
// as the host comes back as the server's output.
func startLiveTap(t *testing.T) (tap.Info, io.WriteCloser) {
	t.Helper()
	hostR, hostW := io.Pipe()
	outR, outW := io.Pipe()
	go io.Copy(io.Discard, outR)
	tp, err := tap.New(tap.Options{Argv: []string{"cat"}, Name: "live-" + filepath.Base(t.TempDir()), Framing: classify.FramingNDJSON,
		Record: true, Path: filepath.Join(t.TempDir(), "live.jsonl"), Listen: true, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { tp.Run(ctx, hostR, outW, io.Discard); close(done) }()
	t.Cleanup(func() { hostW.Close(); cancel(); <-done })
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		taps, _ := tap.LiveTaps()
		for _, info := range taps {
			if info.Session == tp.Path() && info.Session != "" {
				return info, hostW
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the tap never listed itself")
	return tap.Info{}, nil
}

func TestLiveTapTrafficShowsAndAPendingRequestTimesOut(t *testing.T) {
	info, host := startLiveTap(t)
	src, err := OpenLive(info, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	tm := startProgram(t, []*Source{src}, 140, 36)
	// cat echoes the request back: the host's request, then the "server's"
	// identical request (a request from the other side, also unanswered).
	io.WriteString(host, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`+"\n")
	waitFor(t, tm, "tools/call", "live")
	// Nothing answers it: past 300 ms the pending pane and the row say so.
	waitFor(t, tm, "TIMEOUT")
	io.WriteString(host, `{"jsonrpc":"2.0","id":"x","result":{}}`+"\n")
	waitFor(t, tm, "UNMATCHED")
	finalView(t, tm)
}

// A tap run with --no-record has no file to read frames back from: the
// view keeps the frames it saw, so the detail pane still shows them.
func TestLiveViewOfATapWithNoFileShowsTheFramesItSaw(t *testing.T) {
	hostR, hostW := io.Pipe()
	outR, outW := io.Pipe()
	go io.Copy(io.Discard, outR)
	name := "norec-" + filepath.Base(t.TempDir())
	tp, err := tap.New(tap.Options{Argv: []string{"cat"}, Name: name, Framing: classify.FramingNDJSON, Listen: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { tp.Run(ctx, hostR, outW, io.Discard); close(done) }()
	t.Cleanup(func() { hostW.Close(); cancel(); <-done })
	var info tap.Info
	for deadline := time.Now().Add(5 * time.Second); info.Name != name; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the tap never listed itself")
		}
		taps, _ := tap.LiveTaps()
		for _, i := range taps {
			if i.Name == name {
				info = i
			}
		}
	}
	if info.Session != "" {
		t.Fatalf("the tap records %s; want no file", info.Session)
	}
	src, err := OpenLive(info, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	tm := startProgram(t, []*Source{src}, 140, 36)
	waitFor(t, tm, "live")
	io.WriteString(hostW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"only-in-memory"}}`+"\n")
	waitFor(t, tm, `"only-in-memory"`)
	finalView(t, tm)
}
