package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A baseline accepted from one session of the Go SDK server judges the
// next: the same server listing echo with another description is
// tool-drift in check (which --fail-on drift fails on), in an export,
// and in baseline show; diff names the same change; a session that
// lists what was accepted, or any session once the baseline is reset,
// has no drift.
func TestABaselineAcceptedFromASessionJudgesTheServersNextSessions(t *testing.T) {
	bin := rpctapBinary(t)
	client := needPeer(t, "bin/client")
	server := needPeer(t, "bin/server")
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	trusted, drifted := filepath.Join(dir, "trusted.jsonl"), filepath.Join(dir, "drifted.jsonl")
	timed(t, dir, client, "--", bin, "run", "--no-listen", "--record", trusted, "--", server)
	timed(t, dir, client, "--", bin, "run", "--no-listen", "--record", drifted, "--", server, "-echo-description", "Echoes back the message, and mails it to a stranger")

	if out, stderr, code := rpctapIn(t, dir, "baseline", "accept", trusted); code != 0 || !strings.Contains(out, `server "rpctap-gosdk-server": 3 tools`) {
		t.Fatalf("baseline accept: exit %d, %q %q", code, out, stderr)
	}
	if out, _, code := rpctapIn(t, dir, "check", "--fail-on", "drift", trusted); code != 0 || strings.Contains(out, "tool-drift") {
		t.Errorf("the accepted session itself: exit %d\n%s", code, out)
	}
	out, _, code := rpctapIn(t, dir, "check", "--fail-on", "drift", drifted)
	if code != 1 || !strings.Contains(out, `tool-drift`) || !strings.Contains(out, `Tool "echo" changed its description since the baseline accepted for server "rpctap-gosdk-server"`) {
		t.Errorf("check --fail-on drift of the drifted session: exit %d, want 1 and a tool-drift naming echo's description\n%s", code, out)
	}
	if _, _, code := rpctapIn(t, dir, "check", drifted); code != 0 {
		t.Errorf("check with the default --fail-on error: exit %d, want 0 (drift is a warning)", code)
	}
	if _, _, code := rpctapIn(t, dir, "check", "--no-baseline", "--fail-on", "drift", drifted); code != 0 {
		t.Errorf("check --no-baseline --fail-on drift: exit %d, want 0", code)
	}
	if out, _, _ := rpctapIn(t, dir, "export", "--format", "json", drifted); !strings.Contains(out, "tool-drift") {
		t.Errorf("the json export of the drifted session has no tool-drift:\n%.2000s", out)
	}
	if out, _, code := rpctapIn(t, dir, "baseline", "show", drifted); code != 0 || !strings.Contains(out, `~ tool "echo" changed its description`) {
		t.Errorf("baseline show SESSION: exit %d\n%s", code, out)
	}
	if out, _, _ := rpctapIn(t, dir, "diff", trusted, drifted); !strings.Contains(out, "echo") || !strings.Contains(out, "/description") {
		t.Errorf("diff of the two sessions does not name echo's description:\n%s", out)
	}

	if out, stderr, code := rpctapIn(t, dir, "baseline", "reset", "rpctap-gosdk-server"); code != 0 || !strings.Contains(out, "removed the baseline") {
		t.Fatalf("baseline reset: exit %d, %q %q", code, out, stderr)
	}
	if _, _, code := rpctapIn(t, dir, "check", "--fail-on", "drift", drifted); code != 0 {
		t.Errorf("check --fail-on drift after the reset: exit %d, want 0", code)
	}
	if _, stderr, code := rpctapIn(t, dir, "baseline", "reset", "rpctap-gosdk-server"); code != 2 || !strings.Contains(stderr, "no baseline was accepted for server") {
		t.Errorf("a second reset: exit %d, %q", code, stderr)
	}
}

// A baseline that cannot be read is said in the live view's status line
// (as check and export say it on stderr), not passed over in silence: the
// session is then not judged against it.
func TestTheLiveViewSaysABaselineCannotBeRead(t *testing.T) {
	bin := rpctapBinary(t)
	client := needPeer(t, "bin/client")
	server := needPeer(t, "bin/server")
	dir := t.TempDir()
	env := watchEnv(t, dir)
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	session := filepath.Join(dir, "session.jsonl")
	timed(t, dir, client, "--", bin, "run", "--no-listen", "--record", session, "--", server)
	if _, stderr, code := rpctapIn(t, dir, "baseline", "accept", session); code != 0 {
		t.Fatalf("baseline accept: exit %d, %q", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "state", "rpctap", "baselines", "*.json"))
	if len(files) != 1 {
		t.Fatalf("baselines: %v", files)
	}
	if err := os.WriteFile(files[0], []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, _ := rpctapIn(t, dir, "check", session); !strings.Contains(stderr, "is damaged") {
		t.Errorf("check says nothing of the damaged baseline: %q", stderr)
	}
	waitfor, _, _ := tmuxScreen(t, 250, 30, env[len(env)-3:], bin, "ui", session)
	waitfor(`the session is not judged against the baseline of server rpctap-gosdk-server: the baseline`, "is damaged")
}
