package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/sessions"
)

// replayHostJSON runs rpctap replay --as-host --json --exit-code and
// returns its report and exit status.
func replayHostJSON(t *testing.T, dir, file string, flags []string, server ...string) (hostJSON, int) {
	t.Helper()
	args := append(append([]string{"replay", "--as-host", file, "--json", "--exit-code", "--no-record"}, flags...), "--")
	args = append(args, server...)
	cmd := exec.Command(rpctapBinary(t), args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if e := (*exec.ExitError)(nil); errors.As(err, &e) {
		code = e.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var doc hostJSON
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("rpctap %s: exit %d, not a JSON report: %v\n%s\n%s", strings.Join(args, " "), code, err, out, stderr.Bytes())
	}
	return doc, code
}

func TestReplayAsServerAnswersTheInspectorAsServerEverythingDidAndAsHostFindsNoDifference(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	calls := map[string]struct{ call, ignore []string }{
		"tools-list":      {call: []string{"--method", "tools/list"}},
		"tools-call-echo": {call: []string{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"}},
		"tools-call-sum":  {call: []string{"--method", "tools/call", "--tool-name", "get-sum", "--tool-arg", "a=2", "--tool-arg", "b=3"}},
		"resources-read":  {call: []string{"--method", "resources/read", "--uri", "demo://resource/static/document/features.md"}},
		"prompts-get":     {call: []string{"--method", "prompts/get", "--prompt-name", "args-prompt", "--prompt-args", "city=Paris"}},
		// The dynamic resource says when it was made (to the second).
		"resources-read-dynamic": {call: []string{"--method", "resources/read", "--uri", "demo://resource/dynamic/text/1"},
			ignore: []string{"--ignore", "/result/contents/*/text"}},
	}
	for name, c := range calls {
		call := c.call
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			record := filepath.Join(dir, "s.jsonl")
			cli := append([]string{"--cli"}, call...)
			live, _ := timed(t, dir, inspector, append(cli, "--", bin, "run", "--record", record, "--", server, "stdio")...)
			replayed, _ := timed(t, dir, inspector, append(cli, "--", bin, "replay", "--record", filepath.Join(dir, "replay.jsonl"), "--as-server", record)...)
			if !bytes.Equal(live, replayed) {
				t.Errorf("the inspector's output differs against the replay:\n live     %.400s\n replayed %.400s", live, replayed)
			}
			// The replay's own session file holds the conversation.
			checkSessionHasNoErrors(t, filepath.Join(dir, "replay.jsonl"))

			doc, code := replayHostJSON(t, dir, record, c.ignore, server, "stdio")
			if code != 0 || doc.Differs || doc.Counts["same"] < 3 || doc.Counts["same"] != len(doc.Calls) {
				t.Errorf("replay --as-host against a fresh server-everything: exit %d, counts %v, differs %v", code, doc.Counts, doc.Differs)
			}
		})
	}
}

func TestReplayAsHostReportsExactlyTheAnswerADriftedServerChanged(t *testing.T) {
	client := needPeer(t, "bin/client")
	server := needPeer(t, "bin/server")
	drifted := needPeer(t, "bin/drifted")
	bin := rpctapBinary(t)
	dir := t.TempDir()
	record := filepath.Join(dir, "s.jsonl")
	timed(t, dir, client, "-call", `echo={"message":"hi"}`, "-call", `add={"a":2,"b":3}`, "--", bin, "run", "--record", record, "--", server)

	same, code := replayHostJSON(t, dir, record, nil, server)
	if code != 0 || same.Differs || same.Counts["same"] != 4 {
		t.Errorf("against the server it was recorded with: exit %d, counts %v", code, same.Counts)
	}
	doc, code := replayHostJSON(t, dir, record, nil, drifted)
	if code != 1 {
		t.Errorf("against the drifted server, --exit-code exited %d, want 1", code)
	}
	var changed []hostJSONCall
	for _, c := range doc.Calls {
		if c.Outcome != "same" {
			changed = append(changed, c)
		}
	}
	if len(changed) != 1 || changed[0].Method != "tools/call" || changed[0].Name != "echo" || len(changed[0].Changes) != 1 ||
		changed[0].Changes[0].Path != "/result/content/0/text" || string(changed[0].Changes[0].Now) != `"HI"` {
		t.Errorf("want exactly echo's text changed to \"HI\", got %+v", changed)
	}
}

func TestReplayOverContentLengthFramingWithGopls(t *testing.T) {
	drive := needPeer(t, "bin/lspdrive")
	gopls := needPeer(t, "bin/gopls")
	bin := rpctapBinary(t)
	dir := t.TempDir()
	record := filepath.Join(dir, "s.jsonl")
	mod := filepath.Join(dir, "mod")
	live, _ := timed(t, dir, drive, "-dir", mod, "--", bin, "run", "--framing", "auto", "--record", record, "--", "env", "GO_TELEMETRY_CHILD=2", gopls, "serve")
	replayed, _ := timed(t, dir, drive, "-dir", mod, "--", bin, "replay", "--no-record", "--as-server", record)
	if !bytes.Contains(live, []byte("Greet")) || !bytes.Equal(live, replayed) {
		t.Errorf("the LSP client's output differs against the replay:\n live     %s\n replayed %s", live, replayed)
	}
	doc, code := replayHostJSON(t, dir, record, nil, "env", "GO_TELEMETRY_CHILD=2", gopls, "serve")
	if code != 0 || doc.Differs || doc.Counts["same"] != 3 {
		t.Errorf("replay --as-host against a fresh gopls: exit %d, counts %v, calls %+v", code, doc.Counts, doc.Calls)
	}
}

func TestReplayForwardsToServerEverythingWhatTheRecordingCannotAnswer(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	dir := t.TempDir()
	record := filepath.Join(dir, "s.jsonl")
	echo := func(msg string) []string {
		return []string{"--cli", "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=" + msg, "--"}
	}
	timed(t, dir, inspector, append(echo("hi"), bin, "run", "--record", record, "--", server, "stdio")...)
	out, _ := timed(t, dir, inspector, append(echo("bye"), bin, "replay", "--no-record", "--match", "strict", "--as-server", record,
		"--unmatched", "forward", "--", server, "stdio")...)
	if !bytes.Contains(out, []byte(`"Echo: bye"`)) {
		t.Errorf("the call the recording cannot answer did not reach the real server:\n%s", out)
	}
}

// runCmd runs a command in dir with env added to the environment, and
// returns its stdout, stderr and exit status.
func runCmd(t *testing.T, dir string, env []string, name string, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if e := (*exec.ExitError)(nil); errors.As(err, &e) {
		code = e.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), errb.Bytes(), code
}

// recordInspector records the inspector CLI's call through rpctap run to
// server-everything, in dir/name.
func recordInspector(t *testing.T, dir, name string, call ...string) string {
	t.Helper()
	record := filepath.Join(dir, name)
	args := append(append([]string{"--cli"}, call...), "--", rpctapBinary(t), "run", "--record", record, "--", needPeer(t, "node_modules/.bin/mcp-server-everything"), "stdio")
	timed(t, dir, needPeer(t, "node_modules/.bin/inspector"), args...)
	return record
}

var (
	echoHi  = []string{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"}
	echoBye = []string{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=bye"}
	getSum  = []string{"--method", "tools/call", "--tool-name", "get-sum", "--tool-arg", "a=2", "--tool-arg", "b=3"}
)

func TestReplayAsServerAnswersTheInspectorOnlyFromARecordingOfTheSameCall(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	bin := rpctapBinary(t)
	dir := t.TempDir()
	record := recordInspector(t, dir, "echo.jsonl", echoHi...)
	ask := func(call []string, flags ...string) (string, string, int) {
		args := append(append([]string{"--cli"}, call...), "--", bin, "replay", "--no-record", "--as-server", record)
		out, errb, code := runCmd(t, dir, nil, inspector, append(args, flags...)...)
		return string(out), string(errb), code
	}
	for _, match := range []string{"best", "strict", "sequential"} {
		out, errb, code := ask(getSum, "--match", match)
		if code == 0 || strings.Contains(out+errb, "Echo: hi") ||
			!strings.Contains(errb, `no recorded answer: the recording has no tools/call request for get-sum; the nearest is tools/call echo, line 12, which differs at 4 paths: `) ||
			!strings.Contains(errb, `/params/name: \"echo\" recorded, \"get-sum\" sent`) || !strings.Contains(errb, `/params/arguments/b: added 3`) {
			t.Errorf("--match %s: the inspector asking for get-sum got (exit %d):\n%s%s", match, code, out, errb)
		}
	}
	for _, match := range []string{"best", "strict"} {
		out, errb, code := ask(echoBye, "--match", match)
		if code == 0 || strings.Contains(out+errb, "Echo: hi") ||
			!strings.Contains(errb, `the nearest is tools/call echo, line 12, which differs at 1 path: /params/arguments/message: \"hi\" recorded, \"bye\" sent`) {
			t.Errorf("--match %s: the inspector asking echo for bye got (exit %d):\n%s%s", match, code, out, errb)
		}
	}
	if out, errb, code := ask(echoHi); code != 0 || !strings.Contains(out, `"text": "Echo: hi"`) {
		t.Errorf("the inspector asking echo for hi got (exit %d):\n%s%s", code, out, errb)
	}
}

func TestDiffOfRealSessionsPairsCallsByToolAndArguments(t *testing.T) {
	bin := rpctapBinary(t)
	dir := t.TempDir()
	echo := recordInspector(t, dir, "echo.jsonl", echoHi...)
	sum := recordInspector(t, dir, "sum.jsonl", getSum...)
	bye := recordInspector(t, dir, "bye.jsonl", echoBye...)
	diff := func(a, b string) (diffJSON, int) {
		out, errb, code := runCmd(t, dir, nil, bin, "diff", "--json", "--exit-code", a, b)
		var doc diffJSON
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("rpctap diff: exit %d, not a JSON report: %v\n%s%s", code, err, out, errb)
		}
		return doc, code
	}
	doc, code := diff(echo, sum)
	if code != 0 || doc.Regressions != 0 || len(doc.Differences) != 2 ||
		doc.Differences[0].Kind != "call only in A" || doc.Differences[0].Name != "tools/call echo" || doc.Differences[0].LineA == 0 ||
		doc.Differences[1].Kind != "call only in B" || doc.Differences[1].Name != "tools/call get-sum" || doc.Differences[1].LineB == 0 {
		t.Errorf("echo against get-sum: exit %d, %+v", code, doc.Differences)
	}
	doc, code = diff(echo, bye)
	if code != 0 || doc.Regressions != 0 || len(doc.Differences) != 1 || doc.Differences[0].Kind != "arguments changed" ||
		len(doc.Differences[0].Changes) != 2 || doc.Differences[0].Changes[0].Path != "/params/arguments/message" ||
		string(doc.Differences[0].Changes[1].Now) != `"Echo: bye"` {
		t.Errorf("echo hi against echo bye: exit %d, %+v", code, doc.Differences)
	}
	// Two sessions of the same call differ in nothing, start-up included.
	if doc, code := diff(echo, recordInspector(t, dir, "again.jsonl", echoHi...)); code != 0 || len(doc.Differences) != 0 {
		t.Errorf("echo hi against echo hi: exit %d, %+v", code, doc.Differences)
	}
}

func TestReplayAsHostComparesTheAnswersToCapturedInjectionsAsAnswered(t *testing.T) {
	h, _ := hostScript(t, fmt.Sprintf("e2e-replay-inject-%d", time.Now().UnixNano()), func(h *liveHost) {
		for _, args := range [][]string{
			{"--capture", "--method", "tools/call", "--tool", "echo", "--arg", "message=one"},
			{"--capture", "--method", "tools/call", "--tool", "get-sum", "--arg", "a=1", "--arg", "b=2"},
			{"--capture", "--method", "tools/list"},
		} {
			if out, code := h.inject(t, args...); code != 0 {
				t.Fatalf("inject %v: exit %d: %s", args, code, out)
			}
		}
	})
	doc, code := replayHostJSON(t, t.TempDir(), h.record, nil, needPeer(t, "node_modules/.bin/mcp-server-everything"), "stdio")
	injected := 0
	for _, c := range doc.Calls {
		if strings.HasPrefix(string(c.ID), `"rpctap-`) {
			injected++
		}
	}
	if code != 0 || doc.Differs || doc.Counts["missing"] != 0 || injected != 3 || doc.Counts["same"] != len(doc.Calls) {
		t.Errorf("replay --as-host of a session with 3 captured injections: exit %d, counts %v, %d injected calls: %+v", code, doc.Counts, injected, doc.Calls)
	}
}

func TestReplayAsHostMasksWhatTheRecordingMaskedAndComparesItEqual(t *testing.T) {
	client := needPeer(t, "bin/client")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	dir := t.TempDir()
	const secret = "hunter2-s3cr3t-77"
	// DBPASS does not look like a secret's name: only --redact masks it.
	env := func(run string) []string {
		return []string{"DBPASS=" + secret, "RPCTAP_TEST_RUN=" + run, "XDG_STATE_HOME=" + dir, "XDG_CONFIG_HOME=" + dir}
	}
	record := filepath.Join(dir, "s.jsonl")
	if out, errb, code := runCmd(t, dir, env("1"), client, "-list=false", "-call", "get-env={}", "--", bin, "run", "--redact", "DBPASS", "--record", record, "--", server, "stdio"); code != 0 {
		t.Fatalf("recording get-env: exit %d\n%s%s", code, out, errb)
	}
	if b := mustReadFile(t, record); bytes.Contains(b, []byte(secret)) || !namesMask(b, "DBPASS") {
		t.Fatalf("the recording holds the secret, or its header does not name DBPASS:\n%.600s", b)
	}
	replays := 0
	replay := func(run string, flags ...string) (hostJSON, []byte, int) {
		replays++ // each replay records a file of its own: replay refuses one that is there
		session := filepath.Join(dir, fmt.Sprintf("replay-%d-env%s.jsonl", replays, run))
		args := append([]string{"replay", "--as-host", record, "--json", "--exit-code", "--record", session}, flags...)
		out, errb, code := runCmd(t, dir, env(run), bin, append(args, "--", server, "stdio")...)
		var doc hostJSON
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("replay: exit %d, not a JSON report: %v\n%s%s", code, err, out, errb)
		}
		if bytes.Contains(out, []byte(secret)) || bytes.Contains(errb, []byte(secret)) {
			t.Errorf("the report holds the secret:\n%s%s", out, errb)
		}
		if b := mustReadFile(t, session); bytes.Contains(b, []byte(secret)) || !namesMask(b, "DBPASS") {
			t.Errorf("the replay's session file holds the secret, or its header does not name DBPASS:\n%.600s", b)
		}
		return doc, out, code
	}
	// The same environment: the same answers, the masked one too.
	if doc, _, code := replay("1"); code != 0 || doc.Differs {
		t.Errorf("against the same environment: exit %d, %+v", code, doc.Calls)
	}
	// Another: get-env's answer changed, and shows DBPASS masked.
	if doc, out, code := replay("2"); code != 1 || doc.Counts["changed"] != 1 || !bytes.Contains(out, []byte(`\"DBPASS\": \"***DBPASS***\"`)) {
		t.Errorf("against another environment: exit %d, %s", code, out)
	}

	// A recording made without --redact: the config file's redact masks
	// the secret in what replay writes and shows.
	plain := filepath.Join(dir, "plain.jsonl")
	if out, errb, code := runCmd(t, dir, env("1"), client, "-list=false", "-call", "get-env={}", "--", bin, "run", "--record", plain, "--", server, "stdio"); code != 0 {
		t.Fatalf("recording get-env: exit %d\n%s%s", code, out, errb)
	}
	if err := os.MkdirAll(filepath.Join(dir, "rpctap"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rpctap", "config.toml"), []byte(`redact = ["DBPASS"]`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	record = plain
	if doc, out, code := replay("2"); code != 1 || doc.Counts["changed"] != 1 || !bytes.Contains(out, []byte(`***DBPASS***`)) {
		t.Errorf("with the config file's redact: exit %d, %s", code, out)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// namesMask reports whether a session file's header names a mask.
func namesMask(file []byte, name string) bool {
	h, _ := sessions.NewReader(bytes.NewReader(file)).Header()
	return slices.Contains(h.Redact, name)
}
