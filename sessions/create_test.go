package sessions_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/sessions"
)

// A session file with an automatic name goes to the state directory; when
// that name is taken (another session of the same server, begun in the
// same millisecond), the session id's first six characters tell the two
// apart, and nothing is said or written over.
func TestATakenAutomaticNameTakesTheSessionID(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	started := time.Date(2026, 11, 29, 18, 42, 0, 123_000_000, time.UTC)
	path, auto, err := sessions.Place("", started, "server everything")
	if want := filepath.Join(state, "rpctap", "sessions", "20261129T184200.123Z-server-everything.jsonl"); err != nil || !auto || path != want {
		t.Fatalf("Place: %s, %v, %v; want %s, automatic", path, auto, err, want)
	}
	os.WriteFile(path, []byte(lastLaunch), 0o600)
	warn := func(s string) { t.Errorf("said %q", s) }
	for _, replace := range []bool{false, true} {
		f, used, sink, err := sessions.Create(sessions.NewFile[*os.File]{Path: path, Auto: auto, ID: "0123456789abcdef", Started: started,
			Replace: replace, Open: sessions.CreateFile, Warn: warn})
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if want := strings.TrimSuffix(path, ".jsonl") + "-012345.jsonl"; used != want || sink {
			t.Errorf("replace %v: recorded in %s (sink %v), want %s", replace, used, sink, want)
		}
		os.Remove(used)
	}
	if b, _ := os.ReadFile(path); string(b) != lastLaunch {
		t.Errorf("the file that was there now holds %q", b)
	}
}

// A given name is said as it was given, and the path Create returns is
// absolute; a sink is not a file to read back.
func TestAGivenNameIsRecordedBesideAndAnnouncedAbsolutely(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("x.jsonl", []byte(lastLaunch), 0o644)
	started := time.Date(2026, 11, 29, 18, 42, 0, 123_000_000, time.UTC)
	path, auto, err := sessions.Place("x.jsonl", started, "cat")
	if err != nil || auto || path != "x.jsonl" {
		t.Fatalf("Place: %s, %v, %v; want x.jsonl as given", path, auto, err)
	}
	var said []string
	f, used, sink, err := sessions.Create(sessions.NewFile[*os.File]{Path: path, ID: "0123456789abcdef", Started: started, Open: sessions.CreateFile,
		Warn: func(s string) { said = append(said, s) }})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if want := filepath.Join(dir, "x-20261129T184200.123Z.jsonl"); used != want || sink {
		t.Errorf("recorded in %s (sink %v), want %s", used, sink, want)
	}
	if len(said) != 1 || !strings.HasPrefix(said[0], "x.jsonl is there already, so this session is recorded in x-20261129T184200.123Z.jsonl") {
		t.Errorf("said %q", said)
	}
	f, used, sink, err = sessions.Create(sessions.NewFile[*os.File]{Path: os.DevNull, ID: "0123456789abcdef", Started: started,
		Replace: true, Open: sessions.CreateFile, Warn: func(s string) { t.Errorf("a sink: said %q", s) }})
	if err != nil || !sink || used != os.DevNull {
		t.Errorf("%s: %s, sink %v, %v; want a sink", os.DevNull, used, sink, err)
	}
	f.Close()
}
