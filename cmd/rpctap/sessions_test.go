package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/sessions"
)

// sessionFileAt writes a session file (or, with junk, a file that is no
// session) last written at mod.
func sessionFileAt(t *testing.T, dir, name string, mod time.Time, junk bool) sessions.SessionFile {
	t.Helper()
	p := filepath.Join(dir, name)
	body := `{"rpctap":"session","version":1,"id":"` + name + `","started":"2015-01-01T00:00:00Z","name":"srv"}` + "\n" + `{"t":5,"event":"exit","code":0}` + "\n"
	if junk {
		body = "my notes, not a session\n"
	}
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(p, mod, mod)
	return sessions.SessionFile{Path: p, Modified: mod, Size: int64(len(body))}
}

// stateSessionDir makes a state directory for the test and returns its
// session directory, where rpctap records by default.
func stateSessionDir(t *testing.T) string {
	t.Helper()
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dir := filepath.Join(state, "rpctap", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// Pruning sessions removes the files older than the age given, and only
// those: never a file that is no session, nor a live tap's; it lists and
// keeps everything with --dry-run, and asks first (refusing when it cannot
// ask) without --yes.
func TestSessionsPruneRemovesOnlyOldSessionFilesAndAsksFirst(t *testing.T) {
	dir := stateSessionDir(t)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	old := now.Add(-40 * 24 * time.Hour)
	files := []sessions.SessionFile{ // newest first, as RecentSessions gives them
		sessionFileAt(t, dir, "new.jsonl", now.Add(-time.Hour), false),
		sessionFileAt(t, dir, "old-live.jsonl", old, false),
		sessionFileAt(t, dir, "old-notes.jsonl", old, true),
		sessionFileAt(t, dir, "old.jsonl", old, false),
	}
	live := map[string]bool{realPath(filepath.Join(dir, "old-live.jsonl")): true}
	prune := func(o pruneOptions) (string, error) {
		var out, errs bytes.Buffer
		err := runPrune(strings.NewReader("y\n"), &out, &errs, files, live, 30*24*time.Hour, now, o)
		return out.String() + errs.String(), err
	}
	out, err := prune(pruneOptions{dryRun: true})
	if err != nil || !strings.Contains(out, "would remove "+filepath.Join(dir, "old.jsonl")) || strings.Count(out, "would remove "+dir) != 1 || !exists(files[3].Path) {
		t.Errorf("--dry-run: %v\n%s", err, out)
	}
	out, err = prune(pruneOptions{})
	var ex exitError
	if !errors.As(err, &ex) || ex.code != 2 || !strings.Contains(ex.msg, "give --yes") || !exists(files[3].Path) {
		t.Errorf("without --yes, and no terminal to ask at: %v\n%s", err, out)
	}
	out, err = prune(pruneOptions{yes: true})
	if err != nil || exists(files[3].Path) || !strings.Contains(out, "removed 1 session file of 1 session file") {
		t.Errorf("--yes: %v\n%s", err, out)
	}
	for _, f := range files[:3] {
		if !exists(f.Path) {
			t.Errorf("prune removed %s", f.Path)
		}
	}
	if !strings.Contains(out, "keeping "+files[1].Path+": a tap is still recording it") {
		t.Errorf("prune does not say it kept the live session:\n%s", out)
	}
}

// A session file recorded with --record outside the session directories
// (a fixture in a project's testdata) is the user's: prune keeps it, and
// says so, unless --everywhere.
func TestSessionsPruneKeepsFilesRecordedElsewhereUnlessEverywhere(t *testing.T) {
	dir := stateSessionDir(t)
	fixtures := filepath.Join(t.TempDir(), "project", "testdata")
	os.MkdirAll(fixtures, 0o755)
	now := time.Now()
	old := now.Add(-40 * 24 * time.Hour)
	files := []sessions.SessionFile{
		sessionFileAt(t, fixtures, "fixture.jsonl", old, false),
		sessionFileAt(t, dir, "old.jsonl", old, false),
	}
	var out, errs bytes.Buffer
	if err := runPrune(strings.NewReader(""), &out, &errs, files, nil, 30*24*time.Hour, now, pruneOptions{yes: true}); err != nil {
		t.Fatal(err)
	}
	if !exists(files[0].Path) || exists(files[1].Path) {
		t.Errorf("prune --yes: the fixture is there %v (want true), the state directory's file %v (want false)\n%s%s", exists(files[0].Path), exists(files[1].Path), out.String(), errs.String())
	}
	if !strings.Contains(errs.String(), "keeping 1 session file as old, recorded outside the session directories") || !strings.Contains(errs.String(), "--everywhere") {
		t.Errorf("prune does not say it kept the file recorded elsewhere, nor how to remove it:\n%s", errs.String())
	}
	out.Reset()
	errs.Reset()
	if err := runPrune(strings.NewReader(""), &out, &errs, files[:1], nil, 30*24*time.Hour, now, pruneOptions{yes: true, everywhere: true}); err != nil || exists(files[0].Path) {
		t.Errorf("prune --yes --everywhere kept the fixture: %v\n%s%s", err, out.String(), errs.String())
	}
}

func TestSessionsRmRemovesSessionFilesAndRefusesAnythingElseWithStatus2(t *testing.T) {
	dir := t.TempDir()
	s := sessionFileAt(t, dir, "s.jsonl", time.Now(), false)
	notes := sessionFileAt(t, dir, "notes.jsonl", time.Now(), true)
	var out, errs bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetErr(&errs)
	root.SetArgs([]string{"sessions", "rm", s.Path, notes.Path, filepath.Join(dir, "gone.jsonl")})
	err := root.Execute()
	var ex exitError
	if !errors.As(err, &ex) || ex.code != 2 {
		t.Errorf("rm of a session, a file that is none and a missing one: %v, want exit 2 (a file rpctap could not act on)", err)
	}
	if exists(s.Path) || !exists(notes.Path) || !strings.Contains(out.String(), "removed "+s.Path) ||
		!strings.Contains(errs.String(), "no session file rpctap recorded") || !strings.Contains(errs.String(), "gone.jsonl") {
		t.Errorf("rm: out %q err %q", out.String(), errs.String())
	}
}

func TestSessionsLsListsEveryRecordedSessionWithItsState(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dir := filepath.Join(state, "rpctap", "sessions")
	os.MkdirAll(dir, 0o700)
	ended := sessionFileAt(t, dir, "ended.jsonl", time.Now().Add(-time.Hour), false)
	os.WriteFile(filepath.Join(dir, "open.jsonl"), []byte(`{"rpctap":"session","version":1,"id":"o","name":"srv\u202e"}`+"\n"), 0o600)
	sessionFileAt(t, dir, "notes.jsonl", time.Now(), true)
	var out bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"sessions", "ls", "--json"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var list []struct{ Path, State, Name string }
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, e := range list {
		states[filepath.Base(e.Path)] = e.State
	}
	if states["ended.jsonl"] != "ended" || states["open.jsonl"] != "unfinished" {
		t.Errorf("states %v", states)
	}
	if _, ok := states["notes.jsonl"]; ok {
		t.Errorf("ls lists a file that is no session")
	}
	out.Reset()
	root = newRootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"sessions", "ls"})
	root.Execute()
	if !strings.Contains(out.String(), ended.Path) || !strings.Contains(out.String(), `srv\u202e`) || strings.Contains(out.String(), "\u202e") {
		t.Errorf("ls text:\n%s", out.String())
	}
}

func TestAgesAreDaysWeeksOrGoDurations(t *testing.T) {
	for in, want := range map[string]time.Duration{"30d": 720 * time.Hour, "2w": 336 * time.Hour, "12h": 12 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := parseAge(in); err != nil || got != want {
			t.Errorf("parseAge(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "d", "-3d", "0d", "3x", "1.5d", "-1h"} {
		if _, err := parseAge(in); err == nil || !strings.Contains(err.Error(), "30d, 2w, 12h or 90m") {
			t.Errorf("parseAge(%q): %v", in, err)
		}
	}
	if formatAge(90*time.Minute) != "1h30m" || formatAge(time.Hour) != "1h" || formatAge(48*time.Hour) != "2 days" {
		t.Errorf("formatAge: %s %s %s", formatAge(90*time.Minute), formatAge(time.Hour), formatAge(48*time.Hour))
	}
}
