package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 10 point 11: rpctap tail on a session file no tap writes prints
// what it can and exits, whatever the file's end: cut in a line, lines
// after its exit record, binary. -f is there to follow a file anyway.
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
	}{
		{"cut mid-line", good[:len(good)*3/4], true},
		{"lines after the exit record", append(bytes.Clone(good), "{\"t\":1,\"dir\":\"h2s\",\"frame\":\"x\"}\nhalf a li"...), true},
		{"binary", junk, false},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".jsonl")
		os.WriteFile(path, c.data, 0o600)
		var out bytes.Buffer
		cmd := newTailCmd()
		cmd.SetOut(&out)
		cmd.SetArgs([]string{path})
		done := make(chan error, 1)
		go func() { done <- cmd.Execute() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
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
