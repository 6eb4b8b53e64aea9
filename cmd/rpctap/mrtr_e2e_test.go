package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// This file holds the end-to-end tests of multi round-trip calls (MCP
// 2026-07-28) in replay and diff: the MCP Go SDK's client, which accepts
// elicitations, and its server's confirm tool, which asks for one (input_required), then
// answers the retry.

var confirmDeploy = []string{"-accept-elicitation", "-call", `confirm={"action":"deploy"}`}

// recordConfirm records the Go SDK client's confirm call through rpctap
// run to the Go SDK server -mrtr, in dir/name.
func recordConfirm(t *testing.T, dir, name string) string {
	t.Helper()
	record := filepath.Join(dir, name)
	args := append(append([]string{}, confirmDeploy...), "--", rpctapBinary(t), "run", "--no-listen", "--record", record, "--", needPeer(t, "bin/server"), "-mrtr")
	if out, _ := timed(t, dir, needPeer(t, "bin/client"), args...); !strings.Contains(string(out), `"text":"confirmed deploy"`) {
		t.Fatalf("the client's call did not complete:\n%s", out)
	}
	return record
}

// rewriteSession writes the session file at from to dir/name with each old
// replaced by new, as if the peers had said that.
func rewriteSession(t *testing.T, from, dir, name string, oldNew ...string) string {
	t.Helper()
	b := string(mustReadFile(t, from))
	for i := 0; i < len(oldNew); i += 2 {
		if !strings.Contains(b, oldNew[i]) {
			t.Fatalf("%s holds no %s", from, oldNew[i])
		}
		b = strings.ReplaceAll(b, oldNew[i], oldNew[i+1])
	}
	to := filepath.Join(dir, name)
	if err := os.WriteFile(to, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	return to
}

// replay --as-server answers the Go SDK client's multi round-trip call
// from the recording: the first request gets the recorded
// input_required result, the client's retry (a new id, its
// inputResponses, the requestState handed out) the recorded final
// answer. A recording whose host answered otherwise (declined) answers
// the client's retry with an error that names the input that differs.
func TestReplayAsServerAnswersTheGoSDKClientsMultiRoundTripCall(t *testing.T) {
	bin := rpctapBinary(t)
	client := needPeer(t, "bin/client")
	dir := t.TempDir()
	record := recordConfirm(t, dir, "confirm.jsonl")
	replayTo := func(file string) []string {
		return append(append([]string{}, confirmDeploy...), "--", bin, "replay", "--as-server", file, "--verbose", "--no-record", "--match", "sequential")
	}
	out, stderr, code := runCmd(t, dir, nil, client, replayTo(record)...)
	if code != 0 || !strings.Contains(string(out), `"text":"confirmed deploy"`) || !strings.Contains(string(out), `"step":"elicitation"`) {
		t.Errorf("the client against the replay: exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(string(stderr), "tools/call id 4: the retry of a call replay asked for input, answered as line 9 of the recording") ||
		!strings.Contains(string(stderr), "4 requests answered from the recording (1 the retry of a multi round-trip call)") {
		t.Errorf("replay --verbose did not say the retry was answered from the recorded retry:\n%s", stderr)
	}
	declined := rewriteSession(t, record, dir, "declined.jsonl", `\"confirmed\":true`, `\"confirmed\":false`)
	out, stderr, _ = runCmd(t, dir, nil, client, replayTo(declined)...)
	want := `the retry of tools/call for confirm differs from the recorded retry of that call, line 9, at 1 path: /params/inputResponses/confirm/content/confirmed: false recorded, true sent`
	if strings.Contains(string(out), "confirmed deploy") || !strings.Contains(string(stderr), want) {
		t.Errorf("a retry with another input was answered, or its error does not say which input differs (%s):\n%s\n%s", want, out, stderr)
	}
}

// replay --as-server --strict-version answers a 2026-07-28 request only
// from a recorded one of the revision its params._meta names: the Go SDK
// client's server/discover (2026-07-28) against a recording whose
// request said 2025-11-25 gets an error naming both revisions and the
// flag; without the flag it is answered.
func TestReplayAsServerStrictVersionComparesTheRevisionInEachRequestsMeta(t *testing.T) {
	bin := rpctapBinary(t)
	client := needPeer(t, "bin/client")
	dir := t.TempDir()
	record := recordConfirm(t, dir, "confirm.jsonl")
	// The recorded server/discover request only (line 2) says 2025-11-25.
	lines := strings.SplitAfter(string(mustReadFile(t, record)), "\n")
	lines[1] = strings.Replace(lines[1], `protocolVersion\":\"2026-07-28`, `protocolVersion\":\"2025-11-25`, 1)
	older := filepath.Join(dir, "older.jsonl")
	if err := os.WriteFile(older, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, _ := runCmd(t, dir, nil, client, "-list=false", "--", bin, "replay", "--as-server", older, "--verbose", "--no-record", "--strict-version")
	want := `server/discover id 1: no recorded answer: the recording's server/discover request (line 2) carries revision "2025-11-25" in params._meta, the host's carries "2026-07-28" (--strict-version)`
	if !strings.Contains(string(stderr), want) {
		t.Errorf("replay --strict-version did not refuse the request of another revision, saying %s:\n%s", want, stderr)
	}
	out, stderr, code := runCmd(t, dir, nil, client, append(append([]string{}, confirmDeploy...), "--", bin, "replay", "--as-server", older, "--no-record")...)
	if code != 0 || !strings.Contains(string(out), `"text":"confirmed deploy"`) {
		t.Errorf("without --strict-version, the revision in _meta counted: exit %d\n%s\n%s", code, out, stderr)
	}
}

// replay --as-host plays the recorded host's multi round-trip call
// against the live Go SDK server: the retry it sends carries the live
// server's requestState, not the recorded one (a recording whose server
// gave another state: the live server answers a stale one with an error
// result), the final answers are compared, and the report counts one
// call, from its first request to its final answer, in 2 rounds.
func TestReplayAsHostRetriesTheGoSDKServersCallWithItsOwnRequestState(t *testing.T) {
	dir := t.TempDir()
	record := recordConfirm(t, dir, "confirm.jsonl")
	stale := rewriteSession(t, record, dir, "stale.jsonl", "confirm:deploy", "confirm:stale")
	doc, code := replayHostJSON(t, dir, stale, nil, needPeer(t, "bin/server"), "-mrtr")
	var calls []string
	for _, c := range doc.Calls {
		calls = append(calls, c.Method+" "+c.Outcome)
	}
	if code != 0 || len(doc.Calls) != 3 || doc.Calls[2].Method != "tools/call" || doc.Calls[2].Outcome != "same" || doc.Calls[2].Rounds != 2 || doc.Calls[2].RecordedRounds != 2 {
		t.Errorf("replay --as-host: exit %d, calls %v; want 3 calls the same, the last tools/call in 2 rounds on both sides", code, calls)
	}
	replayed := filepath.Join(dir, "replayed.jsonl")
	out, stderr, _ := runCmd(t, dir, nil, rpctapBinary(t), "replay", "--as-host", stale, "--record", replayed, "--", needPeer(t, "bin/server"), "-mrtr")
	sent := string(mustReadFile(t, replayed))
	if !strings.Contains(sent, `\"inputResponses\"`) || strings.Contains(sent, "confirm:stale") {
		t.Errorf("the retry replay sent carries the recorded requestState, not the live server's:\n%s", sent)
	}
	for _, want := range []string{"tools/call confirm  id 3     same", "2 rounds)", "3 calls, 4 requests: 3 same"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the report lacks %q:\n%s\n%s", want, out, stderr)
		}
	}
}

// diff takes a multi round-trip call as one call: two recordings of the
// Go SDK pair's confirm call differ in nothing, and one where the call
// was answered at once (its input_required round taken out) differs
// only in the call's rounds, no regression, never in a call only in A.
func TestDiffOfRealSessionsTakesAMultiRoundTripCallAsOneCall(t *testing.T) {
	bin := rpctapBinary(t)
	dir := t.TempDir()
	a := recordConfirm(t, dir, "a.jsonl")
	b := recordConfirm(t, dir, "b.jsonl")
	if out, stderr, code := runCmd(t, dir, nil, bin, "diff", "--exit-code", a, b); code != 0 || !strings.Contains(string(out), "0 differences") {
		t.Errorf("two recordings of the same call: exit %d\n%s\n%s", code, out, stderr)
	}
	// The call answered at once: lines 8 (input_required) and 9 (the
	// retry) left out, the final answer (line 10) answering id 3.
	lines := strings.SplitAfter(string(mustReadFile(t, a)), "\n")
	if !strings.Contains(lines[7], "input_required") || !strings.Contains(lines[8], "inputResponses") {
		t.Fatalf("lines 8 and 9 of %s are not the input_required answer and the retry:\n%s%s", a, lines[7], lines[8])
	}
	final := strings.ReplaceAll(strings.ReplaceAll(lines[9], `"id":4`, `"id":3`), `\"id\":4`, `\"id\":3`)
	once := filepath.Join(dir, "once.jsonl")
	if err := os.WriteFile(once, []byte(strings.Join(append(append(lines[:7:7], final), lines[10:]...), "")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCmd(t, dir, nil, bin, "diff", "--exit-code", a, once)
	if code != 0 || !strings.Contains(string(out), "rounds changed: tools/call confirm (A line 7, B line 7)") || !strings.Contains(string(out), "2 rounds in A, 1 in B") ||
		!strings.Contains(string(out), "1 difference, 0 regressions") {
		t.Errorf("a call answered at once where A took two rounds: exit %d\n%s\n%s", code, out, stderr)
	}
}
