package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A secret of the tap's environment appears on no output path rpctap has,
// read from a session that a real tap recorded (the secret in the id, the
// method, params, a JSON-escaped spelling, the server's argv and its
// stderr): the file, tail (text and --json), check in every format,
// sessions ls --json, diff --json, every export, and replay --as-host's
// report, its --json and its stderr, each run with the secret still in its
// environment.
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

// Masking never changes a frame's JSON: a real host and server-everything
// through a tap whose server has variables with secret-looking names set
// to JSON literals and common values (AUTH_ENABLED=true, USE_API_KEY=false,
// a *_KEY of null or 1) record frames that check reads as the JSON they
// were (no not-json, "listChanged":true as it was). Real secrets in the
// same environment are still masked inside strings (the echo's message,
// the sum's text), and one the host sends as a JSON number (get-sum's a)
// is left a number.
func TestCommonValuesOfSecretLookingVariablesLeaveRecordedFramesJSON(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	const secret, pin = "s3cr3t-value-42", "73519246"
	calls := map[string]struct {
		call       []string
		shows      string // what the host prints
		recorded   []string
		unrecorded []string
	}{
		"echo": {[]string{"--tool-name", "echo", "--tool-arg", "message=say " + secret}, "say " + secret,
			[]string{`\"listChanged\":true`, "say ***API_TOKEN***"}, []string{secret}},
		"get-sum": {[]string{"--tool-name", "get-sum", "--tool-arg", "a=" + pin, "--tool-arg", "b=1"}, "The sum of " + pin,
			[]string{`\"a\":` + pin + `,`, "The sum of ***PIN_KEY*** and 1"}, []string{"sum of " + pin}},
	}
	for name, c := range calls {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			rec := filepath.Join(dir, "s.jsonl")
			// The inspector gives the server (here the tap) only the
			// variables named with -e.
			args := []string{"--cli"}
			for _, kv := range []string{"AUTH_ENABLED=true", "USE_API_KEY=false", "SOME_KEY=null", "ONE_KEY=1", "API_TOKEN=" + secret, "PIN_KEY=" + pin} {
				args = append(args, "-e", kv)
			}
			args = append(append(append(args, "--method", "tools/call"), c.call...), "--", bin, "run", "--record", rec, "--", server, "stdio")
			out, _ := timed(t, dir, inspector, args...)
			if !bytes.Contains(out, []byte(c.shows)) {
				t.Fatalf("the host did not get its answer through the tap (the wire must not change):\n%s", out)
			}
			report, err := exec.Command(bin, "check", "--format", "json", rec).Output()
			if e, ok := err.(*exec.ExitError); err != nil && (!ok || e.ExitCode() > 1) {
				t.Fatalf("rpctap check: %v\n%s", err, report)
			}
			var doc checkDoc
			if err := json.Unmarshal(report, &doc); err != nil {
				t.Fatalf("check --format json: %v\n%s", err, report)
			}
			notJSON := 0
			for _, f := range doc.Findings {
				if f.Code == "not-json" {
					notJSON++
					t.Errorf("line %d: not-json: %s", f.Line, f.Message)
				}
			}
			if doc.Frames < 6 {
				t.Errorf("check read %d frames", doc.Frames)
			}
			file, err := os.ReadFile(rec)
			if err != nil {
				t.Fatal(err)
			}
			for _, gone := range append([]string{"***AUTH_ENABLED***", "***USE_API_KEY***", "***SOME_KEY***", "***ONE_KEY***"}, c.unrecorded...) {
				if bytes.Contains(file, []byte(gone)) {
					t.Errorf("the session file holds %s", gone)
				}
			}
			for _, kept := range c.recorded {
				if !bytes.Contains(file, []byte(kept)) {
					t.Errorf("the session file does not hold %s:\n%s", kept, file)
				}
			}
			t.Logf("check: %d frames, %d not-json", doc.Frames, notJSON)
		})
	}
}

// Secret-looking arguments are masked by their shape wherever rpctap
// shows a server's command line, with no secret in the environment to
// compare them with: --token=X, --token X, --api-key X, --password X,
// Bearer X, an sk-… key; and a secret of the environment given as two
// arguments. Each output is read whole: the session header, rpctap ls
// (text and --json) while the tap lives, every export (the JSON export's
// argv array too) and replay --as-host's reports.
func TestSecretLookingArgumentsAreMaskedByTheirShapeEverywhere(t *testing.T) {
	bin := rpctapBinary(t)
	dir := t.TempDir()
	env := append(os.Environ(), "DB_PASSWORD=qzx7v vvk9q")
	secrets := []string{"tok-abc123", "K2-apikey", "hunter2x", "bearer-cred-77", "sk-proj-abcdefghijklmnop1234", "qzx7v", "vvk9q"}
	argv := []string{"sh", "-c", "exec cat", "srv", "--token=tok-abc123", "--api-key", "K2-apikey", "--password", "hunter2x",
		"--header", "Authorization: Bearer bearer-cred-77", "sk-proj-abcdefghijklmnop1234", "--db", "qzx7v", "vvk9q"}
	rec := filepath.Join(dir, "s.jsonl")
	name := "argv-shape-" + filepath.Base(dir)
	run := exec.Command(bin, append([]string{"run", "--name", name, "--record", rec, "--"}, argv...)...)
	run.Env = env
	stdin, err := run.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	run.Stdout = io.Discard
	if err := run.Start(); err != nil {
		t.Fatal(err)
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
				t.Errorf("rpctap %s: %v\n%s", name, err, out.Bytes())
			}
		}
		outputs[name] = out.Bytes()
	}
	stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _ := exec.Command(bin, "ls", "--json").Output()
		if framesOf(out, name) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tap never showed up in rpctap ls:\n%s", out)
		}
	}
	do("ls", "ls")
	do("ls --json", "ls", "--json")
	stdin.Close()
	if err := run.Wait(); err != nil {
		t.Fatalf("rpctap run: %v", err)
	}
	for _, f := range []string{"markdown", "mermaid", "html", "json", "har", "otlp"} {
		do("export --format "+f, "export", rec, "--format", f, "-o", "-")
	}
	// replay's reports name the server it plays to: the same command.
	do("replay --as-host", append([]string{"replay", "--as-host", rec, "--no-record", "--"}, argv...)...)
	do("replay --as-host --json", append([]string{"replay", "--as-host", rec, "--json", "--no-record", "--"}, argv...)...)
	file, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	outputs["the session file"] = file
	for what, out := range outputs {
		if len(out) == 0 {
			t.Errorf("%s printed nothing", what)
		}
		for _, s := range secrets {
			if bytes.Contains(out, []byte(s)) {
				t.Errorf("%s shows %s:\n%s", what, s, out)
			}
		}
	}
	for what, want := range map[string]string{
		"the session file":         `"--token=***TOKEN***","--api-key","***API_KEY***","--password","***PASSWORD***","--header","Authorization: Bearer ***TOKEN***","***API_KEY***","--db","***DB_PASSWORD***","***DB_PASSWORD***"`,
		"export --format json":     `"--api-key","***API_KEY***"`,
		"export --format markdown": "--password ***PASSWORD***",
		"ls --json":                `"***PASSWORD***"`,
		"ls":                       "--token=***TOKEN***",
		"replay --as-host":         "--api-key ***API_KEY***",
		"replay --as-host --json":  `"--token=***TOKEN***"`,
	} {
		if !bytes.Contains(outputs[what], []byte(want)) {
			t.Errorf("%s does not show the masked command line %s:\n%s", what, want, outputs[what])
		}
	}
}
