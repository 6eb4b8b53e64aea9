package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// On a session file no tap writes, rpctap tail prints what it can and
// exits, whatever the file's end: cut in a line, lines after its exit
// record. It says on stderr what was wrong with the file; a file with no
// session record at all (binary, a plain JSON-RPC log, empty) exits 2 with
// a sentence, as check does. -f is there to follow a file anyway.
func TestTailOfADamagedFilePrintsAndExits(t *testing.T) {
	good, err := os.ReadFile("../../testdata/sessions/recorded/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 8192)
	for i := range junk {
		junk[i] = byte(i*31 + i/7)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		data   []byte
		frames bool
		says   string // on stderr, or in the exit-2 error
	}{
		{"cut mid-line", good[:len(good)*3/4], true, "ends without an exit record"},
		{"lines after the exit record", append(bytes.Clone(good), "{\"t\":1,\"dir\":\"h2s\",\"frame\":\"x\"}\nhalf a li"...), true, "1 line of "},
		{"binary", junk, false, "it is not a session file rpctap recorded"},
		{"a plain JSON-RPC log", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"), false, "none of its 1 line is a session header or record); give the path of one (rpctap ls lists them); it reads as a plain log of JSON-RPC frames: to judge each one, type rpctap classify < "},
		{"empty", nil, false, "it is empty"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".jsonl")
		os.WriteFile(path, c.data, 0o600)
		var out, stderr bytes.Buffer
		cmd := newTailCmd()
		cmd.SetOut(&out)
		cmd.SetErr(&stderr)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		cmd.SetArgs([]string{path})
		done := make(chan error, 1)
		go func() { done <- cmd.Execute() }()
		select {
		case err := <-done:
			var ex exitError
			switch {
			case c.frames && (err != nil || !strings.Contains(stderr.String(), c.says)):
				t.Errorf("%s: %v, said %q; want exit 0 saying %q", c.name, err, stderr.String(), c.says)
			case !c.frames && (!errors.As(err, &ex) || ex.code != 2 || !strings.Contains(ex.msg, c.says) || !strings.Contains(ex.msg, "rpctap ls")):
				t.Errorf("%s: %v; want exit 2 saying %q and where sessions are", c.name, err, c.says)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: tail still runs after 30 s; it printed %d bytes", c.name, out.Len())
		}
		if got := out.Len() > 0; got != c.frames {
			t.Errorf("%s: printed %q", c.name, out.String())
		}
	}
	if f := newTailCmd().Flags().ShorthandLookup("f"); f == nil || f.Name != "follow" {
		t.Error("tail has no -f/--follow")
	}
}

// tail -f with its output on /dev/null (a character device, but no
// terminal) follows as with a file: it took /dev/null for a terminal at
// its start and for one gone at its first idle moment, and quit.
func TestTailFollowingIntoDevNullKeepsFollowing(t *testing.T) {
	bin := rpctapBinary(t)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	var b bytes.Buffer
	w, err := sessions.NewWriter(&b, sessions.Header{ID: "f", Started: time.Unix(0, 0), Name: "f"})
	if err != nil {
		t.Fatal(err)
	}
	w.WriteFrame(sessions.FrameRecord{T: 1, Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","method":"n"}`)})
	os.WriteFile(path, b.Bytes(), 0o600)
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	cmd := exec.Command(bin, "tail", "-f", path)
	cmd.Stdout = null
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("tail -f into /dev/null ended (%v) while the file has no exit record", err)
	case <-time.After(1500 * time.Millisecond):
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"t":2,"event":"exit","code":0}` + "\n")
	f.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("tail -f ended with %v at the exit record", err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("tail -f did not end at the exit record")
	}
}
