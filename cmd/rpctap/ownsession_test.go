package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/tap"
)

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// A session that ended before its view could attach (a server that exits
// at once; the demo's LSP exit run) is still shown: read from its file,
// as it was recorded, with its exit.
func TestOwnSessionThatEndedBeforeTheViewIsReadFromItsFile(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	path := filepath.Join(t.TempDir(), "ended.jsonl")
	tp, err := tap.New(tap.Options{Argv: []string{"sh", "-c", "echo '{\"jsonrpc\":\"2.0\",\"method\":\"bye\"}'"}, Name: "ended", Record: true, Path: path, Listen: true})
	if err != nil {
		t.Fatal(err)
	}
	run := tp.Start(context.Background(), tap.Pipes{In: strings.NewReader(""), Out: nopWriteCloser{io.Discard}, Err: io.Discard})
	<-run.Done()
	src, ended, err := ownSession(run, time.Second)
	if err != nil || !ended {
		t.Fatalf("ended %v, %v", ended, err)
	}
	defer src.Close()
	if src.Path != path {
		t.Errorf("the session is read from %s, want %s", src.Path, path)
	}
	for deadline := time.Now().Add(10 * time.Second); !src.Index.Counts().Exit; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the session's exit never showed; %d records", src.Index.Len())
		}
	}
	if src.Index.Len() == 0 {
		t.Error("the session shows no frame")
	}
}
