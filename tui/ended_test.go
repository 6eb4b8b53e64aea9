package tui

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpctap/rpctap/source"
)

// openFollowing opens a session file that is followed whatever writes it.
func openFollowing(t *testing.T, path string) *source.Source {
	t.Helper()
	src, err := source.OpenFollowing(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	return src
}

// waitEnded waits until src has read all it will, failing after a
// generous failsafe.
func waitEnded(t *testing.T, src *source.Source) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !src.Ended(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %q after 20 s", src.Name, src.State())
		}
	}
}

// A damaged session file that no tap writes (cut in a line, lines after its
// exit record, binary) is read as it is and ends; the view says when it
// ended without an exit record, or held no session record at all, never
// loading or following forever.
func TestDamagedSessionFileEndsAndSaysItHasNoExitRecord(t *testing.T) {
	good, err := os.ReadFile(demoSession)
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 8192)
	for i := range junk {
		junk[i] = byte(i*31 + i/7)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name, state string
		data        []byte
	}{
		{"cut mid-line", "ended without an exit record", good[:len(good)*3/4]},
		{"lines after the exit record", "recorded", append(bytes.Clone(good), "{\"t\":1,\"dir\":\"h2s\",\"frame\":\"x\"}\nhalf a li"...)},
		{"binary", "not a session file: none of its 38 lines is a record", junk},
		{"empty", "empty: no session record in it", nil},
	} {
		path := filepath.Join(dir, c.name+".jsonl")
		os.WriteFile(path, c.data, 0o600)
		src := openFile(t, path)
		waitEnded(t, src)
		if src.State() != c.state {
			t.Errorf("%s: state %q, want %q", c.name, src.State(), c.state)
		}
	}
	path := filepath.Join(dir, "cut mid-line.jsonl")
	tm := startProgram(t, []*source.Source{openFile(t, path)}, 140, 36)
	waitFor(t, tm, "ended without an exit record")
	finalView(t, tm)
}

// A file a live tap writes is followed while the tap runs, and its source
// ends at the exit record once the tap is done, though it was opened while
// the tap was live.
func TestFileOfALiveTapIsFollowedUntilItsExitRecord(t *testing.T) {
	info, host := startLiveTap(t)
	io.WriteString(host, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	src := openFile(t, info.Session)
	tm := startProgram(t, []*source.Source{src}, 140, 36)
	waitFor(t, tm, "following")
	io.WriteString(host, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	waitFor(t, tm, "tools/list")
	host.Close()
	waitEnded(t, src)
	if src.State() != "recorded" || !src.Index.Counts().Exit {
		t.Errorf("state %q, counts %+v; want the whole session with its exit record", src.State(), src.Index.Counts())
	}
	finalView(t, tm)
}
