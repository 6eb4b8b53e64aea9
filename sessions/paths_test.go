package sessions_test

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rpctap/rpctap/sessions"
)

func checkDir(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("StateDir() = %s, want %s", got, want)
	}
	fi, err := os.Stat(got)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: mode %v, want a directory with mode 0700", got, fi.Mode())
	}
}

func TestStateDirUsesXDGStateHome(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_STATE_HOME", xdg)
	t.Setenv("HOME", t.TempDir())
	dir, err := sessions.StateDir()
	if err != nil {
		t.Fatal(err)
	}
	checkDir(t, dir, filepath.Join(xdg, "rpctap", "sessions"))
}

func TestStateDirFallsBackToHome(t *testing.T) {
	for _, xdg := range []string{"", "relative/state"} {
		home := t.TempDir()
		t.Setenv("XDG_STATE_HOME", xdg)
		t.Setenv("HOME", home)
		dir, err := sessions.StateDir()
		if err != nil {
			t.Fatal(err)
		}
		checkDir(t, dir, filepath.Join(home, ".local", "state", "rpctap", "sessions"))
	}
}

func TestStateDirWithAnEmptyEnvironmentUsesAPerUserTempDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "")
	t.Setenv("TMPDIR", tmp)
	dir, err := sessions.StateDir()
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(tmp, "rpctap-"+strconv.Itoa(os.Getuid()))
	checkDir(t, dir, filepath.Join(base, "sessions"))
	if fi, err := os.Stat(base); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("%s: %v, %v; want mode 0700", base, fi.Mode(), err)
	}
	if again, err := sessions.StateDir(); err != nil || again != dir {
		t.Errorf("second StateDir() = %s, %v", again, err)
	}
}

func TestStateDirRefusesATempDirOthersCouldHaveMade(t *testing.T) {
	for name, prepare := range map[string]func(base string) error{
		"open to others": func(base string) error {
			if err := os.Mkdir(base, 0o700); err != nil {
				return err
			}
			return os.Chmod(base, 0o777)
		},
		"symbolic link": func(base string) error {
			return os.Symlink(t.TempDir(), base)
		},
		"another user's": func(base string) error {
			if os.Getuid() != 0 {
				t.Skip("only root can give a directory away")
			}
			if err := os.Mkdir(base, 0o700); err != nil {
				return err
			}
			return os.Chown(base, 4242, 4242)
		},
	} {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("XDG_STATE_HOME", "")
			t.Setenv("HOME", "")
			t.Setenv("TMPDIR", tmp)
			if err := prepare(filepath.Join(tmp, "rpctap-"+strconv.Itoa(os.Getuid()))); err != nil {
				t.Fatal(err)
			}
			if dir, err := sessions.StateDir(); err == nil {
				t.Errorf("StateDir() = %s, want it refused", dir)
			}
		})
	}
}

func TestNewFileNameSortsByTimeAndKeepsSafeCharacters(t *testing.T) {
	at := time.Date(2026, 11, 29, 19, 42, 0, 123456789, time.FixedZone("CET", 3600))
	for _, tc := range []struct{ name, want string }{
		{"server-everything", "20261129T184200.123Z-server-everything.jsonl"},
		{"@modelcontextprotocol/server-everything", "20261129T184200.123Z-modelcontextprotocol-server-everything.jsonl"},
		{"my server (v2.1)", "20261129T184200.123Z-my-server-v2.1.jsonl"},
		{"../../etc/passwd", "20261129T184200.123Z-etc-passwd.jsonl"},
		{"héllo\x00\n wörld", "20261129T184200.123Z-h-llo-w-rld.jsonl"},
		{"", "20261129T184200.123Z-session.jsonl"},
		{"///", "20261129T184200.123Z-session.jsonl"},
		{"a_b.c-d", "20261129T184200.123Z-a_b.c-d.jsonl"},
	} {
		if got := sessions.NewFileName(at, tc.name); got != tc.want {
			t.Errorf("NewFileName(%q) = %s, want %s", tc.name, got, tc.want)
		}
	}
	long := sessions.NewFileName(at, string(make([]byte, 0))+"x"+string(make([]byte, 500))+"y")
	if len(long) > 100 {
		t.Errorf("a long name gives a file name of %d bytes", len(long))
	}
	var names []string
	for i, d := range []time.Duration{0, time.Millisecond, time.Second, time.Hour, 24 * time.Hour, 400 * 24 * time.Hour} {
		names = append(names, sessions.NewFileName(at.Add(d), string(rune('z'-i))))
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("names do not sort by time: %v", names)
	}
}

// A session file that is there is never written over unless asked: the
// new session goes beside it, under a name that says when it started,
// and a directory is neither written over nor recorded beside.
// lastLaunch is a session file as the last launch of a host's server
// left it: a header, then its frames.
const lastLaunch = `{"rpctap":"session","version":1,"id":"a1","started":"2026-11-29T18:00:00Z","argv":["cat"],"name":"cat"}` + "\n" +
	`{"t":5,"dir":"h2s","kind":"request","id":1,"method":"ping","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"}` + "\n"

func TestASessionFileThatIsThereIsKeptAndTheSessionRecordedBesideIt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.jsonl")
	os.WriteFile(path, []byte(lastLaunch), 0o644)
	started := time.Date(2026, 11, 29, 18, 42, 0, 123_000_000, time.UTC)
	create := func(p string) (*os.File, error) { return sessions.CreateFile(p, false) }
	var said []string
	f, used, err := sessions.CreateRecording(path, started, create, func(s string) { said = append(said, s) })
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if want := filepath.Join(dir, "x-20261129T184200.123Z.jsonl"); used != want {
		t.Errorf("recorded in %s, want %s", used, want)
	}
	if want := path + " is there already, so this session is recorded in " + used + " (--force writes over it; --record another name keeps both)"; len(said) != 1 || said[0] != want {
		t.Errorf("said %q, want %q", said, want)
	}
	if b, _ := os.ReadFile(path); string(b) != lastLaunch {
		t.Errorf("the file that was there now holds %q", b)
	}
	if st, err := os.Stat(used); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the new file: %v, %v; want mode 0600", st, err)
	}
	f, err = sessions.CreateFile(path, true) // --force
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if st, _ := os.Stat(path); st.Size() != 0 || st.Mode().Perm() != 0o600 {
		t.Errorf("written over: size %d, mode %v; want a new, empty file, 0600", st.Size(), st.Mode().Perm())
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	for _, overwrite := range []bool{false, true} {
		if _, used, err := sessions.CreateRecording(sub, started, func(p string) (*os.File, error) { return sessions.CreateFile(p, overwrite) }, func(s string) { t.Errorf("a directory: said %q", s) }); !errors.Is(err, syscall.EISDIR) || used != sub {
			t.Errorf("a directory, overwrite %v: %s, %v; want EISDIR, nothing beside it", overwrite, used, err)
		}
	}
	if got := sessions.NameBeside("/a/b.c/session", started); got != "/a/b.c/session-20261129T184200.123Z" {
		t.Errorf("a name with no extension: %s", got)
	}
}
