package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
