package tap

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Start runs a session beside its caller: Wait says how it ended, After
// runs before Done is closed, Path is the file once it ended, and what the
// tap warned of is kept in order and still passed to the Warn of its
// options.
func TestStartRunsTheSessionBesideItsCaller(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var passed []string
	opts := Options{Argv: sh("cat; echo err >&2; exit 3"), Record: true, Path: filepath.Join(dir, "s.jsonl"), NoRedact: true,
		Warn: func(s string) { mu.Lock(); passed = append(passed, s); mu.Unlock() }}
	inR, inW := io.Pipe()
	out, errOut := newSink(true), newSink(true)
	after := make(chan struct{})
	run, err := Start(context.Background(), opts, Pipes{In: inR, Out: out, Err: errOut, After: func() { time.Sleep(50 * time.Millisecond); close(after) }})
	if err != nil {
		t.Fatal(err)
	}
	if run.Tap() == nil || run.Tap().ID() == "" {
		t.Fatal("no tap")
	}
	if run.WaitFor(0) {
		t.Fatal("the session ended before the host closed its stdin")
	}
	inW.Write([]byte(`{"jsonrpc":"2.0","method":"n"}` + "\n"))
	inW.Close()
	res, err := run.Wait()
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("Wait: %+v, %v; want exit 3", res, err)
	}
	select {
	case <-after:
	default:
		t.Error("Done was closed before After ran")
	}
	if !run.WaitFor(generous) || run.Path() != res.Path || res.Path != filepath.Join(dir, "s.jsonl") {
		t.Errorf("Path %q, Result.Path %q", run.Path(), res.Path)
	}
	if out.String() != `{"jsonrpc":"2.0","method":"n"}`+"\n" || errOut.String() != "err\n" {
		t.Errorf("host read %q, stderr %q", out.String(), errOut.String())
	}
	if len(run.Warnings()) != 0 {
		t.Errorf("warned %q", run.Warnings())
	}

	// A file it cannot record to is warned of, to both.
	opts.Path = filepath.Join(dir, "no", "such", "dir", "s.jsonl")
	run, err = Start(context.Background(), opts, Pipes{In: strings.NewReader(""), Out: newSink(false), Err: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if w := run.Warnings(); len(w) == 0 || !strings.HasPrefix(w[0], "cannot record this session") || strings.Join(w, "\n") != strings.Join(passed, "\n") {
		t.Errorf("kept %q, passed on %q", w, passed)
	}
	if run.Path() != "" {
		t.Errorf("Path %q with no file", run.Path())
	}
	if _, err := os.Stat(opts.Path); err == nil {
		t.Error("a file was written")
	}
}

func TestStartRefusesWhatNewRefuses(t *testing.T) {
	if _, err := Start(context.Background(), Options{}, Pipes{}); err == nil {
		t.Error("no server command: no error")
	}
}

// What the caller warns of beside the tap (Warn) is kept with what the
// tap warns of, in the order they came, and passed on to the Warn of the
// tap's options as the tap's own warnings are.
func TestStartKeepsTheCallersWarningsWithTheTaps(t *testing.T) {
	var mu sync.Mutex
	var passed []string
	opts := Options{Argv: sh("cat"), Record: true, Path: filepath.Join(t.TempDir(), "no", "such", "dir", "s.jsonl"), NoRedact: true,
		Warn: func(s string) { mu.Lock(); passed = append(passed, s); mu.Unlock() }}
	inR, inW := io.Pipe()
	run, err := Start(context.Background(), opts, Pipes{In: inR, Out: newSink(false), Err: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	run.Warn("the host's first word")
	inW.Write([]byte(`{"jsonrpc":"2.0","method":"n"}` + "\n"))
	inW.Close()
	if _, err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	run.Warn("the host's last word")
	w := run.Warnings()
	if len(w) < 3 || w[len(w)-1] != "the host's last word" || !slices.Contains(w, "the host's first word") || !slices.ContainsFunc(w, func(s string) bool { return strings.HasPrefix(s, "cannot record this session") }) {
		t.Errorf("kept %q", w)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(w, "\n") != strings.Join(passed, "\n") {
		t.Errorf("kept %q, passed on %q", w, passed)
	}
}
