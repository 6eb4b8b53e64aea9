package tui

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tap"
)

// A live tap in this process, with cat as the server: what the test writes
// as the host comes back as the server's output. It records a file.
func startLiveTap(t *testing.T) (tap.Info, io.WriteCloser) {
	t.Helper()
	return startLiveTapWith(t, tap.Options{Record: true, Path: filepath.Join(t.TempDir(), "live.jsonl"), Timeout: 300 * time.Millisecond})
}

// startLiveTapWith runs cat (or opts.Argv) behind a listening tap with
// opts (its name is set here, and its framing, when not, to ndjson) and
// waits until the tap lists itself.
func startLiveTapWith(t *testing.T, opts tap.Options) (tap.Info, io.WriteCloser) {
	t.Helper()
	hostR, hostW := io.Pipe()
	outR, outW := io.Pipe()
	go io.Copy(io.Discard, outR)
	if opts.Argv == nil {
		opts.Argv = []string{"cat"}
	}
	// The name is unique on the machine: tests of other processes list
	// their taps in the same live directory.
	opts.Name, opts.Listen = fmt.Sprintf("live-%d-%s", os.Getpid(), filepath.Base(t.TempDir())), true
	if opts.Framing == 0 {
		opts.Framing = classify.FramingNDJSON
	}
	tp, err := tap.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { tp.Run(ctx, hostR, outW, io.Discard); close(done) }()
	t.Cleanup(func() { hostW.Close(); cancel(); <-done })
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		taps, _ := tap.LiveTaps()
		for _, info := range taps {
			if info.Name == opts.Name {
				return info, hostW
			}
		}
	}
	t.Fatal("the tap never listed itself")
	return tap.Info{}, nil
}

func TestLiveTapTrafficShowsAndAPendingRequestTimesOut(t *testing.T) {
	info, host := startLiveTap(t)
	src, err := source.OpenLive(info, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	tm := startProgram(t, []*source.Source{src}, 140, 36)
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
	info, hostW := startLiveTapWith(t, tap.Options{})
	if info.Session != "" {
		t.Fatalf("the tap records %s; want no file", info.Session)
	}
	src, err := source.OpenLive(info, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	tm := startProgram(t, []*source.Source{src}, 140, 36)
	waitFor(t, tm, "live")
	io.WriteString(hostW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"only-in-memory"}}`+"\n")
	waitFor(t, tm, `"only-in-memory"`)
	finalView(t, tm)
}
