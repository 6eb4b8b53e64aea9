package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// lastLaunch is a session file as the last launch of a host's server
// left it.
const lastLaunch = `{"rpctap":"session","version":1,"id":"a1","started":"2026-11-29T18:00:00Z","argv":["cat"],"name":"cat"}` + "\n" +
	`{"t":5,"dir":"h2s","kind":"request","id":1,"method":"ping","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"}` + "\n"

// rpctap run, which a host starts at each launch with the same --record
// FILE and no one to read a refusal, keeps the FILE that is there,
// records the session beside it, and says which file on stderr; the
// server runs as ever. --force writes over FILE.
func TestRunRecordsBesideARecordFileThatIsThere(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(dir, "x.jsonl")
	os.WriteFile(record, []byte(lastLaunch), 0o644)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
	run := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(rpctapBinary(t), append(append([]string{"run", "--no-listen", "--record", record}, args...), "--", "cat")...)
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"))
		cmd.Stdin = strings.NewReader(ping)
		var errs bytes.Buffer
		cmd.Stderr = &errs
		out, err := cmd.Output()
		if err != nil || string(out) != ping {
			t.Fatalf("rpctap run %v: %v, relayed %q; stderr: %s", args, err, out, errs.String())
		}
		return string(out), errs.String()
	}
	_, said := run()
	beside, _ := filepath.Glob(filepath.Join(dir, "x-*.jsonl"))
	if len(beside) != 1 {
		t.Fatalf("recorded beside x.jsonl: %v; stderr: %s", beside, said)
	}
	if b, _ := os.ReadFile(record); string(b) != lastLaunch {
		t.Errorf("the file that was there now holds %q", b)
	}
	if b, _ := os.ReadFile(beside[0]); !bytes.HasPrefix(b, []byte(`{"rpctap":"session"`)) || !bytes.Contains(b, []byte(`\"method\":\"ping\"`)) {
		t.Errorf("the session beside it holds:\n%s", b)
	}
	if want := "rpctap: " + record + " is there already, so this session is recorded in " + beside[0] + " (--force writes over it"; !strings.HasPrefix(said, want) {
		t.Errorf("rpctap run said %q; want %q…", said, want)
	}
	if _, said = run("--force"); said != "" {
		t.Errorf("rpctap run --force said %q", said)
	}
	if b, _ := os.ReadFile(record); !bytes.HasPrefix(b, []byte(`{"rpctap":"session"`)) || string(b) == lastLaunch {
		t.Errorf("--force did not write over the file: it holds %q", b)
	}
}

// Commands run at a terminal (watch, demo, replay --as-host) refuse a
// --record FILE that is there before they start anything, saying what
// to type; --force writes over it. replay never records over the
// recording it plays; replay --as-server, which a host starts, records
// beside a FILE that is there, as run does.
func TestCommandsAtATerminalRefuseARecordFileThatIsThere(t *testing.T) {
	dir := t.TempDir()
	env := watchEnv(t, dir)
	record := filepath.Join(dir, "x.jsonl")
	os.WriteFile(record, []byte(lastLaunch), 0o644)
	mark := filepath.Join(dir, "started")
	recording, _ := filepath.Abs("../../testdata/sessions/conversations/cancelled.jsonl")
	for _, args := range [][]string{
		{"watch", "--record", record, "--", "sh", "-c", "touch " + mark},
		{"watch", "--host", "touch " + mark + " # {}", "--record", record, "--", "cat"},
		{"demo", "--no-ui", "--record", record},
		{"replay", "--as-host", recording, "--record", record, "--", "sh", "-c", "touch " + mark},
	} {
		cmd := exec.Command(rpctapBinary(t), args...)
		cmd.Env = env
		var errs bytes.Buffer
		cmd.Stderr = &errs
		err := cmd.Run()
		want := "rpctap: " + record + " is there already; give --record another name, or add --force to write over it\n"
		if ee, _ := err.(*exec.ExitError); ee == nil || ee.ExitCode() != 2 || errs.String() != want {
			t.Errorf("rpctap %s: %v, said %q; want exit 2 and %q", strings.Join(args, " "), err, errs.String(), want)
		}
		if _, err := os.Stat(mark); err == nil {
			t.Errorf("rpctap %s started a process before refusing", strings.Join(args, " "))
			os.Remove(mark)
		}
		if files, _ := filepath.Glob(filepath.Join(dir, "state", "rpctap", "sessions", "*")); len(files) > 0 {
			t.Errorf("rpctap %s recorded %v before refusing", strings.Join(args, " "), files)
		}
	}
	if b, _ := os.ReadFile(record); string(b) != lastLaunch {
		t.Fatalf("the file that was there now holds %q", b)
	}

	// --force: the view's session goes to FILE.
	if stderr, code := runWatchCmd(t, env, "--record", record, "--force", "--", "cat"); code != 0 || !strings.Contains(stderr, "session recorded in "+record+"\n") {
		t.Errorf("watch --record --force: exit %d, said %q", code, stderr)
	}
	if b, _ := os.ReadFile(record); !bytes.HasPrefix(b, []byte(`{"rpctap":"session"`)) || string(b) == lastLaunch {
		t.Errorf("watch --force did not record to the file: it holds %q", b)
	}

	// The recording replay plays is never written over.
	for _, mode := range []string{"--as-host", "--as-server"} {
		cmd := exec.Command(rpctapBinary(t), "replay", mode, recording, "--record", recording, "--force")
		if mode == "--as-host" {
			cmd.Args = append(cmd.Args, "--", "cat")
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if ee, _ := err.(*exec.ExitError); ee == nil || ee.ExitCode() != 2 || !strings.Contains(string(out), "names the recording being replayed") {
			t.Errorf("replay %s --record (the recording) --force: %v, said %q", mode, err, out)
		}
	}

	// replay --as-server records beside the file, and says so.
	os.WriteFile(record, []byte(lastLaunch), 0o644)
	cmd := exec.Command(rpctapBinary(t), "replay", "--as-server", recording, "--record", record)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	var errs bytes.Buffer
	cmd.Stderr = &errs
	if err := cmd.Run(); err != nil || !strings.Contains(errs.String(), "rpctap replay: "+record+" is there already, so this session is recorded in ") {
		t.Errorf("replay --as-server --record (a file that is there): %v, said %q", err, errs.String())
	}
	if b, _ := os.ReadFile(record); string(b) != lastLaunch {
		t.Errorf("replay --as-server wrote over the file: it holds %q", b)
	}
}
