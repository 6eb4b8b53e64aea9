package sessions

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestEndsWithExitTellsAFinishedSessionFromOneStillWritten(t *testing.T) {
	dir := t.TempDir()
	head := `{"rpctap":"session","version":1,"id":"x","started":"2026-11-29T18:00:00.000000Z","argv":["s"]}` + "\n"
	frame := `{"t":1,"dir":"h2s","frame":"{\"event\":\"exit\"}"}` + "\n"
	cases := map[string]bool{
		head + frame: false, // the text is in a frame, not an exit record
		head + frame + `{"t":2,"event":"exit","code":0}` + "\n": true,
		head + `{"t":2,"event":"exit","code":0}`:                true, // no final newline
		head:                                                    false,
	}
	for content, want := range cases {
		p := filepath.Join(dir, "s.jsonl")
		os.WriteFile(p, []byte(content), 0o600)
		if got := EndsWithExit(p); got != want {
			t.Errorf("EndsWithExit(%q) = %v, want %v", content, got, want)
		}
	}
}

func listed(files []SessionFile, path string) bool {
	for _, f := range files {
		if f.Path == path {
			return true
		}
	}
	return false
}

// A session a tap registered is listed from any environment, wherever the
// tap's own environment put the file; one that was removed is forgotten,
// link and all.
func TestRegisteredSessionsAreListedFromAnyEnvironmentUntilRemoved(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	path := filepath.Join(t.TempDir(), "20261201T000000.000Z-registered.jsonl")
	if err := os.WriteFile(path, []byte(`{"rpctap":"session","version":1}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if listed(RecentSessions(0), path) {
		t.Fatalf("%s is listed before it is registered", path)
	}
	if err := Register(path); err != nil {
		t.Fatal(err)
	}
	// Twice (a second file of the same name elsewhere) is not an error.
	other := filepath.Join(t.TempDir(), filepath.Base(path))
	os.WriteFile(other, nil, 0o600)
	if err := Register(other); err != nil {
		t.Fatal(err)
	}
	files := RecentSessions(0)
	if !listed(files, path) || !listed(files, other) {
		t.Fatalf("registered %s and %s; RecentSessions lists %v", path, other, files)
	}
	os.Remove(path)
	os.Remove(other)
	if files := RecentSessions(0); listed(files, path) || listed(files, other) {
		t.Errorf("removed files are still listed: %v", files)
	}
	dir, _ := knownDir()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if target, _ := os.Readlink(filepath.Join(dir, e.Name())); target == path || target == other {
			t.Errorf("the link %s to a removed session is kept", e.Name())
		}
	}
}

// A tap started with HOME but no XDG_STATE_HOME records under HOME; a shell
// with XDG_STATE_HOME set still looks there.
func TestSessionDirsIncludeTheHomeDefaultWhenXDGStateHomeIsSet(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	tapDir, err := StateDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dirs := SessionDirs()
	found := false
	for _, d := range dirs {
		found = found || d == tapDir
	}
	if !found {
		t.Errorf("SessionDirs() = %q, without the tap's %s", dirs, tapDir)
	}
}

// A link to a session file that is gone gives its name up: a file is
// registered under its own name though a hundred links of that name,
// each to a removed file (tests' and removed sessions'), are in the way.
func TestRegisteringReusesTheNameOfALinkToAFileThatIsGone(t *testing.T) {
	dir, err := knownDir()
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("registered-%d-%s.jsonl", os.Getpid(), filepath.Base(t.TempDir()))
	gone := filepath.Join(t.TempDir(), "gone", name)
	for i := range 100 {
		link := filepath.Join(dir, name)
		if i > 0 {
			link += "." + strconv.Itoa(i)
		}
		if err := os.Symlink(gone, link); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(link) })
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(`{"rpctap":"session","version":1}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Register(path); err != nil {
		t.Fatalf("registering %s among links to a file that is gone: %v", path, err)
	}
	if to, _ := os.Readlink(filepath.Join(dir, name)); to != path {
		t.Errorf("the link %s points to %q, want %s", name, to, path)
	}
}
