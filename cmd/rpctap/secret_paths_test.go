package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// issue 10 point 6: a secret of the tap's environment appears on no
// output path rpctap has, read from a session that a real tap recorded
// (the secret in the id, the method, params, a JSON-escaped spelling,
// the server's argv and its stderr): the file, tail (text and --json),
// check in every format, sessions ls --json, diff --json, every export,
// and replay --as-host's report, its --json and its stderr, each run
// with the secret still in its environment.
func TestNoOutputPathShowsASecretOfTheTapsEnvironment(t *testing.T) {
	bin := rpctapBinary(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	const secret = "supersecret123"
	env := append(os.Environ(), "XDG_STATE_HOME="+state, "API_TOKEN="+secret)
	rec := filepath.Join(dir, "rec.jsonl")
	frames := strings.Join([]string{
		`{"jsonrpc":"2.0","id":"supersecret123","method":"m/supersecret123","params":{"t":"\u0073upersecret123"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"token":"supersecret123"}}}`,
	}, "\n") + "\n"
	// cat answers each request with itself: a request from the other side.
	server := `echo "stderr says supersecret123" >&2; exec cat`
	run := exec.Command(bin, "run", "--record", rec, "--", "sh", "-c", server, "--token="+secret)
	run.Env, run.Stdin = env, strings.NewReader(frames)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("rpctap run: %v\n%s", err, out)
	}
	outputs := map[string][]byte{}
	do := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			if e, ok := err.(*exec.ExitError); !ok || e.ExitCode() > 1 {
				t.Fatalf("rpctap %s: %v\n%s", name, err, out.Bytes())
			}
		}
		outputs[name] = out.Bytes()
	}
	do("tail", "tail", rec)
	do("tail --json", "tail", "--json", rec)
	for _, f := range []string{"text", "json", "junit", "sarif"} {
		do("check --format "+f, "check", "--format", f, rec)
	}
	do("sessions ls --json", "sessions", "ls", "--json")
	do("diff --json", "diff", "--json", rec, rec)
	for _, f := range []string{"markdown", "mermaid", "html", "json", "har", "otlp"} {
		do("export --format "+f, "export", rec, "--format", f, "-o", "-")
	}
	do("replay --as-host", "replay", "--as-host", rec, "--no-record", "--", "sh", "-c", server)
	do("replay --as-host --json", "replay", "--as-host", rec, "--json", "--no-record", "--", "sh", "-c", server)
	file, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	outputs["the session file"] = file
	for name, out := range outputs {
		if len(out) == 0 {
			t.Errorf("%s printed nothing", name)
		}
		if bytes.Contains(out, []byte(secret)) || bytes.Contains(out, []byte(`\u0073upersecret`)) {
			t.Errorf("%s shows the secret:\n%s", name, out)
		}
	}
	if !bytes.Contains(outputs["tail"], []byte("***API_TOKEN***")) {
		t.Errorf("tail shows no mask, so the frames are not there:\n%s", outputs["tail"])
	}
}
