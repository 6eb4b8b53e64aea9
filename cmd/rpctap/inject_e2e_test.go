package main

import (
	"bytes"
	"context"
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

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
)

// hostScript is what the long-lived host does; between its tools/list and
// its ping, inject (when set) runs against its tap.
func hostScript(t *testing.T, name string, inject func(h *liveHost)) (*liveHost, []string) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	h := startLiveHost(t, name, server, "stdio")
	h.handshake(t)
	h.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	h.waitLine(t, `"id":1`)
	if inject != nil {
		inject(h)
	}
	h.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	h.waitLine(t, `"id":2`)
	h.close(t)
	return h, h.lines()
}

// With a long-lived host → rpctap run → server-everything,
// rpctap inject --method tools/call --tool echo --capture gets the answer
// and prints it with its latency, and the host's output is what it is
// without the injection; a notification injected toward the host reaches
// it.
func TestInjectedToolCallIsAnsweredToRpctapAndTheHostSeesNothingOfIt(t *testing.T) {
	_, plain := hostScript(t, fmt.Sprintf("e2e-plain-%d", time.Now().UnixNano()), nil)
	var printed []byte
	var asJSON map[string]any
	h, injected := hostScript(t, fmt.Sprintf("e2e-inject-%d", time.Now().UnixNano()), func(h *liveHost) {
		var code int
		printed, code = h.inject(t, "--capture", "--method", "tools/call", "--tool", "echo", "--arg", "message=hi from rpctap")
		if code != 0 {
			t.Errorf("inject --capture exited %d: %s", code, printed)
		}
		out, code := h.inject(t, "--capture", "--json", "--method", "tools/call", "--tool", "echo", "--arg", "message=again")
		if err := json.Unmarshal(out, &asJSON); err != nil || code != 0 {
			t.Errorf("inject --capture --json: exit %d, %v: %s", code, err, out)
		}
		if out, code := h.inject(t, "--capture", "--method", "tools/call", "--tool", "echo"); code != 2 || !strings.Contains(string(out), "add --arg message=VALUE") {
			t.Errorf("a call without its required argument: exit %d: %s", code, out)
		}
		if out, code := h.inject(t, "--capture", `{"jsonrpc":"2.0","id":"rpctap-nope","method":"no/such"}`); code != 1 || !strings.Contains(string(out), "the answer is an error (code -32601)") {
			t.Errorf("an error answer: exit %d: %s", code, out)
		}
	})
	if !strings.Contains(string(printed), `Echo: hi from rpctap`) || !strings.Contains(string(printed), "latency ") {
		t.Errorf("inject --capture printed %s", printed)
	}
	if asJSON["answered"] != true || asJSON["error"] != false || asJSON["latency_ms"] == nil || asJSON["id"] != "rpctap-2" {
		t.Errorf("inject --capture --json printed %v", asJSON)
	}
	if !slices.Equal(plain, injected) {
		t.Errorf("the host's output changed with the injection:\nwithout: %q\nwith:    %q", plain, injected)
	}
	rec, _ := os.ReadFile(h.record)
	if !bytes.Contains(rec, []byte(`Echo: hi from rpctap`)) || !bytes.Contains(rec, []byte(`"src":"inject"`)) {
		t.Error("the session file lacks the injected call or its answer")
	}

	// Toward the host: it reads the notification.
	g := startLiveHost(t, fmt.Sprintf("e2e-s2h-%d", time.Now().UnixNano()), needPeer(t, "node_modules/.bin/mcp-server-everything"), "stdio")
	g.handshake(t)
	if out, code := g.inject(t, "--dir", "s2h", "--method", "notifications/tools/list_changed"); code != 0 {
		t.Fatalf("inject --dir s2h: exit %d: %s", code, out)
	}
	g.waitLine(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`+"\n")

	// An id the user types that a request in flight from the host has is
	// sent, with a warning; an answer slower than --wait fails.
	g.send(t, `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":1,"steps":1}}}`)
	g.waitRecorded(t, `"id":77`)
	if out, code := g.inject(t, "--method", "ping", "--id", "77"); code != 0 || !strings.Contains(string(out), "the id 77 is that of a request in flight from the host") {
		t.Errorf("a colliding --id: exit %d: %s", code, out)
	}
	if out, code := g.inject(t, "--capture", "--wait", "100ms", "--method", "tools/call", "--tool", "trigger-long-running-operation", "--arg", "duration=1", "--arg", "steps=1"); code != 1 || !strings.Contains(string(out), "no answer within 100ms") {
		t.Errorf("an answer slower than --wait: exit %d: %s", code, out)
	}
	g.close(t)
}

// With the inspector CLI as host, its output and exit status are the same
// with and without an injection during its call; and the same when the
// injection gives up waiting for its answer, which comes late, during the
// inspector's call: the inspector never reads it, and the session records
// it as captured.
func TestInspectorIsTheSameWithAnInjectionDuringItsCall(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	run := func(inject ...string) (string, int, string, []byte) {
		name := fmt.Sprintf("e2e-inspector-%d", time.Now().UnixNano())
		// A call that takes 2 s, so that the injection lands during it.
		// (The inspector passes the server no environment of its own.)
		record := filepath.Join(t.TempDir(), name+".jsonl")
		cmd := exec.Command(inspector, "--cli", "--method", "tools/call", "--tool-name", "trigger-long-running-operation", "--tool-arg", "duration=2", "--tool-arg", "steps=2",
			"--", bin, "run", "--name", name, "--record", record, "--", server, "stdio")
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = &out
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		captured := ""
		if inject != nil {
			// Once the tap has relayed the host's tools/call (its fifth
			// frame), the call is under way: inject a call of its own.
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				ls, _ := exec.Command(bin, "ls", "--json").Output()
				if framesOf(ls, name) >= 5 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the tap behind the inspector never showed 5 frames")
				}
			}
			b, _ := exec.Command(bin, append([]string{"inject", "--tap", name}, inject...)...).CombinedOutput()
			captured = string(b)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		code := 0
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		rec, _ := os.ReadFile(record)
		return out.String(), code, captured, rec
	}
	plainOut, plainCode, _, _ := run()
	if !strings.Contains(plainOut, "Long running operation completed") {
		t.Errorf("the inspector printed %s", plainOut)
	}
	out, code, captured, _ := run("--capture", "--method", "tools/call", "--tool", "echo", "--arg", "message=injected")
	if !strings.Contains(captured, "Echo: injected") {
		t.Errorf("the injected call's answer: %s", captured)
	}
	if out != plainOut || code != plainCode {
		t.Errorf("the inspector's output or status changed with an injection:\nwithout (exit %d): %s\nwith (exit %d):    %s", plainCode, plainOut, code, out)
	}
	out, code, gaveUp, rec := run("--capture", "--wait", "200ms", "--method", "tools/call", "--tool", "trigger-long-running-operation", "--arg", "duration=1", "--arg", "steps=1")
	if !strings.Contains(gaveUp, "no answer within 200ms") {
		t.Errorf("the injected call that gives up: %s", gaveUp)
	}
	if out != plainOut || code != plainCode {
		t.Errorf("the inspector's output or status changed with a late answer to an injection:\nwithout (exit %d): %s\nwith (exit %d):    %s", plainCode, plainOut, code, out)
	}
	if !bytes.Contains(rec, []byte(`"captured":true,"kind":"response","id":"rpctap-`)) {
		t.Errorf("the late answer is not recorded as captured:\n%s", rec)
	}
}

// With --raw, rpctap inject writes the bytes as given to server-everything:
// two frames in one argument (\x0a between them), a partial frame refused
// with the reason, then forced and completed by a second raw write; the
// server answers every frame it reads.
func TestRawInjectionReachesServerEverythingAsWritten(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	h := startLiveHost(t, fmt.Sprintf("e2e-raw-%d", time.Now().UnixNano()), server, "stdio")
	h.handshake(t)
	if out, code := h.inject(t, "--raw", `{"jsonrpc":"2.0","id":"rpctap-r1","method":"ping"}\x0a{"jsonrpc":"2.0","id":"rpctap-r2","method":"ping"}`); code != 0 {
		t.Fatalf("inject --raw of two frames: exit %d: %s", code, out)
	}
	h.waitRecorded(t, `"kind":"response","id":"rpctap-r2"`) // captured, as is every injected request's answer
	partial := `{"jsonrpc":"2.0","id":"rpctap-p","method":"ping"\c`
	if out, code := h.inject(t, "--raw", partial); code != 2 || !strings.Contains(string(out), "refused a partial frame") || !strings.Contains(string(out), "force it") {
		t.Errorf("a partial frame without --force: exit %d: %s", code, out)
	}
	if out, code := h.inject(t, "--raw", "--force", partial); code != 0 {
		t.Fatalf("inject --raw --force: exit %d: %s", code, out)
	}
	if out, code := h.inject(t, "--raw", `}`); code != 0 {
		t.Fatalf("inject --raw of the frame's end: exit %d: %s", code, out)
	}
	h.waitLine(t, `"id":"rpctap-p"`) // the server read the two writes as one frame
	h.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	h.waitLine(t, `"id":2`)
	h.close(t)
	rec, _ := os.ReadFile(h.record)
	for _, want := range []string{`"src":"inject","kind":"request","id":"rpctap-r2"`, `"src":"inject","partial":true`} {
		if !bytes.Contains(rec, []byte(want)) {
			t.Errorf("the session file lacks %s:\n%s", want, rec)
		}
	}
}

// An injection as the live view makes it (capture kept, no one waiting on
// the socket) toward server-everything: the answer, though it comes after
// the client's wait, never reaches the host; it is recorded as captured,
// and paired with the request, with its latency.
func TestViewStyleCaptureKeepsALateAnswerFromTheHost(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	h := startLiveHost(t, fmt.Sprintf("e2e-keep-%d", time.Now().UnixNano()), server, "stdio")
	h.handshake(t)
	info, err := tap.FindTap(h.name)
	if err != nil {
		t.Fatal(err)
	}
	call := `{"jsonrpc":"2.0","id":"rpctap-9","method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":1,"steps":1}}}`
	rep, err := tap.SendInjectWith(info.Socket, tap.InjectRequest{Dir: "h2s", Frame: []byte(call), Capture: true, Keep: true, Wait: 50 * time.Millisecond})
	if err != nil || !rep.OK {
		t.Fatalf("inject: %v %+v", err, rep)
	}
	h.waitRecorded(t, `"captured":true`)
	h.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	h.waitLine(t, `"id":2`)
	h.close(t)
	for _, l := range h.lines() {
		if strings.Contains(l, "rpctap-9") {
			t.Errorf("the host read the answer to the injected call: %s", l)
		}
	}
	x := sessions.NewIndex(sessions.IndexOptions{})
	if err := x.ReadFile(context.Background(), h.record, nil); err != nil {
		t.Fatal(err)
	}
	found := false
	for i := range x.Len() {
		e := x.At(i)
		if e.Captured && e.ID == `"rpctap-9"` {
			found = true
			if e.Pair == 0 || e.Latency < 900*time.Millisecond {
				t.Errorf("the captured answer is paired with line %d, latency %v; want its request, at least the server's 1 s", e.Pair, e.Latency)
			}
		}
	}
	if !found {
		t.Error("the index has no captured answer to rpctap-9")
	}
}

// injectedIDs are the ids of the requests injected into a session, in
// the order the session file records them.
func injectedIDs(t *testing.T, record string) []string {
	t.Helper()
	f, err := os.Open(record)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := sessions.NewReader(f)
	hdr, _ := rd.Header()
	var ids []string
	for {
		ev, err := rd.Next()
		if err != nil {
			return ids
		}
		if ev.IsFrame() && ev.Src == sessions.SrcInject {
			if m := hdr.Classify(ev.Frame, ev.Dir, classify.Auto); m.Kind == classify.KindRequest {
				ids = append(ids, string(m.ID().Raw))
			}
		}
	}
}

// The answer to a request rpctap inject sends never reaches the host,
// which never sent it, however late it comes: when inject --capture gave
// up waiting for it, when inject was not asked to wait (the default), and
// when inject went away while it waited. Each is recorded as captured.
// --forward sends one whose answer goes on to the host, as asked.
func TestLateAnswersToInjectedRequestsNeverReachTheHost(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	h := startLiveHost(t, fmt.Sprintf("e2e-late-%d", time.Now().UnixNano()), server, "stdio")
	h.handshake(t)
	h.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	h.waitLine(t, `"id":1`)
	slow := []string{"--method", "tools/call", "--tool", "trigger-long-running-operation", "--arg", "duration=2", "--arg", "steps=1"}
	if out, code := h.inject(t, append([]string{"--capture", "--wait", "1s"}, slow...)...); code != 1 || !strings.Contains(string(out), "no answer within 1s") {
		t.Errorf("inject --capture --wait 1s of a 2 s call: exit %d: %s", code, out)
	}
	if out, code := h.inject(t, slow...); code != 0 || len(out) != 0 {
		t.Errorf("inject with no flags: exit %d: %s", code, out)
	}
	gone := exec.Command(rpctapBinary(t), append([]string{"inject", "--tap", h.name, "--capture", "--wait", "30s"}, slow...)...)
	if err := gone.Start(); err != nil {
		t.Fatal(err)
	}
	injected := func(n int) []string {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if ids := injectedIDs(t, h.record); len(ids) >= n {
				return ids
			}
			if time.Now().After(deadline) {
				t.Fatalf("the session file never recorded %d injected requests", n)
			}
		}
	}
	injected(3)
	gone.Process.Kill()
	gone.Wait()
	if out, code := h.inject(t, "--forward", "--method", "ping"); code != 0 {
		t.Errorf("inject --forward: exit %d: %s", code, out)
	}
	ids := injected(4)
	h.waitLine(t, `"id":`+ids[3]) // the forwarded answer
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(h.record); bytes.Count(b, []byte(`"captured":true`)) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session never recorded the three answers as captured")
		}
	}
	h.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	h.waitLine(t, `"id":2`)
	h.close(t)
	for _, l := range h.lines() {
		for _, id := range ids[:3] {
			if strings.Contains(l, `"id":`+id) {
				t.Errorf("the host read the answer to %s: %s", id, l)
			}
		}
	}
	rec, _ := os.ReadFile(h.record)
	for _, id := range ids[:3] {
		if !bytes.Contains(rec, []byte(`"captured":true,"kind":"response","id":`+id)) {
			t.Errorf("the answer to %s is not recorded as captured:\n%s", id, rec)
		}
	}
}

// A frame written as pretty-printed JSON (--file, or stdin) is sent as one
// line: server-everything reads it and answers it. With --raw the file's
// bytes go as they are: each of its lines is a frame.
func TestInjectSendsPrettyPrintedJSONAsOneFrameAndRawAsWritten(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	h := startLiveHost(t, fmt.Sprintf("e2e-pretty-%d", time.Now().UnixNano()), server, "stdio")
	h.handshake(t)
	file := filepath.Join(t.TempDir(), "call.json")
	pretty := "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": \"rpctap-pretty\",\n  \"method\": \"tools/call\",\n  \"params\": {\n    \"name\": \"echo\",\n    \"arguments\": {\"message\": \"pretty\"}\n  }\n}\n"
	if err := os.WriteFile(file, []byte(pretty), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := h.inject(t, "--capture", "--file", file); code != 0 || !strings.Contains(string(out), "Echo: pretty") {
		t.Errorf("inject --file of pretty JSON: exit %d: %s", code, out)
	}
	cmd := exec.Command(rpctapBinary(t), "inject", "--tap", h.name, "--capture", "--file", "-")
	cmd.Stdin = strings.NewReader(strings.Replace(pretty, "rpctap-pretty", "rpctap-pretty-2", 1))
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Echo: pretty") {
		t.Errorf("inject --file - of pretty JSON: %v: %s", err, out)
	}
	rawFile := filepath.Join(t.TempDir(), "raw.json")
	if err := os.WriteFile(rawFile, []byte("{\"jsonrpc\": \"2.0\",\n \"id\": \"rpctap-raw-lines\", \"method\": \"ping\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := h.inject(t, "--raw", "--file", rawFile); code != 0 {
		t.Errorf("inject --raw --file of JSON over two lines: exit %d: %s", code, out)
	}
	h.waitRecorded(t, `rpctap-raw-lines`)
	h.close(t)
	rec, _ := os.ReadFile(h.record)
	if !bytes.Contains(rec, []byte(`"src":"inject","kind":"request","id":"rpctap-pretty","method":"tools/call","frame":"{\"jsonrpc\":\"2.0\",\"id\":\"rpctap-pretty\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"message\":\"pretty\"}}}"`)) {
		t.Errorf("the session file lacks the call as one compact line:\n%s", rec)
	}
	for _, want := range []string{`"src":"inject","kind":"not-json","frame":"{\"jsonrpc\": \"2.0\","}`,
		`"src":"inject","kind":"not-json","frame":" \"id\": \"rpctap-raw-lines\", \"method\": \"ping\"}"}`} {
		if !bytes.Contains(rec, []byte(want)) {
			t.Errorf("inject --raw did not send the file's lines as they are: the session file lacks %s:\n%s", want, rec)
		}
	}
}

// A catalog entry that a server sends (error-no-id) goes to the host when
// --dir is not given, and inject says so; --dir h2s sends it to the
// server, as asked, and inject says that it is a server's frame.
func TestInjectSendsACatalogEntryTheWayItGoes(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	h := startLiveHost(t, fmt.Sprintf("e2e-catdir-%d", time.Now().UnixNano()), server, "stdio")
	h.handshake(t)
	out, code := h.inject(t, "--catalog", "error-no-id")
	if code != 0 || !strings.Contains(string(out), "rpctap: error-no-id is a frame the server sends: sending it to the host (--dir h2s sends it to the server)") {
		t.Errorf("inject --catalog error-no-id: exit %d: %s", code, out)
	}
	h.waitLine(t, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"}}`)
	out, code = h.inject(t, "--dir", "h2s", "--catalog", "error-no-id")
	if code != 0 || !strings.Contains(string(out), "rpctap: error-no-id is a frame the server sends: sending it to the server, as --dir h2s asks") {
		t.Errorf("inject --dir h2s --catalog error-no-id: exit %d: %s", code, out)
	}
	h.waitRecorded(t, `"dir":"h2s","src":"inject","kind":"response"`)
	if out, code := h.inject(t, "--catalog", "null-id-request"); code != 0 || len(out) != 0 {
		t.Errorf("inject --catalog null-id-request (either way; to the server): exit %d: %s", code, out)
	}
	h.close(t)
}

// bigAnswersServer answers initialize, then "rpctap-big" with an answer of
// 20 MiB (its id first) and "rpctap-late" with one of 3 MiB (its id after
// its result), and every other request with an empty result.
const bigAnswersServer = `while read -r l; do id=$(printf '%s' "$l" | sed 's/.*"id":"\([^"]*\)".*/\1/'); case $l in
*'"initialize"'*) printf '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"}}}\n';;
*'"rpctap-big"'*) printf '{"jsonrpc":"2.0","id":"rpctap-big","result":{"content":[{"type":"text","text":"'; head -c 20971520 /dev/zero | tr '\0' A; printf '"}]}}\n';;
*'"rpctap-late"'*) printf '{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"'; head -c 3145728 /dev/zero | tr '\0' B; printf '"}]},"id":"rpctap-late"}\n';;
*'"id"'*) printf '{"jsonrpc":"2.0","id":"%s","result":{}}\n' "$id";;
esac; done`

// The answer to a request injected with --capture that is larger than the
// tap holds never reaches the host: rpctap inject says it came, how large
// it is and how to print it from the session file, and exits 1 (with
// --json: too_large and its size); the session file records it whole as
// text, captured, with its kind and id, and the command it names prints
// it.
func TestInjectCaptureOfAnAnswerLargerThanTheTapHoldsKeepsItFromTheHost(t *testing.T) {
	if testing.Short() {
		t.Skip("moves tens of MiB")
	}
	h := startLiveHost(t, fmt.Sprintf("e2e-bigcap-%d", time.Now().UnixNano()), "/bin/sh", "-c", bigAnswersServer)
	h.handshake(t)
	out, code := h.inject(t, "--capture", "--wait", "60s", `{"jsonrpc":"2.0","id":"rpctap-big","method":"tools/call","params":{"name":"x"}}`)
	hint := "rpctap tail --json --filter fate:captured " + h.record
	if code != 1 || !strings.Contains(string(out), "20.0 MiB: too large to print") || !strings.Contains(string(out), hint) || len(out) > 1<<10 {
		t.Errorf("inject --capture of a 20 MiB answer: exit %d, printed %q; want exit 1 and a sentence naming its size and %s", code, clip(out, 400), hint)
	}
	out, code = h.inject(t, "--capture", "--json", "--wait", "60s", `{"jsonrpc":"2.0","id":"rpctap-late","method":"tools/call","params":{"name":"x"}}`)
	var doc map[string]any
	if err := json.Unmarshal(bytes.SplitN(out, []byte("\n"), 2)[0], &doc); err != nil || code != 1 || doc["too_large"] != true || doc["answered"] != true || doc["size"] != float64(3145728+len(`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":""}]},"id":"rpctap-late"}`)) {
		t.Errorf("inject --capture --json of a 3 MiB answer whose id comes last: exit %d, %v: %s", code, err, clip(out, 400))
	}
	h.send(t, `{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	h.waitLine(t, `"after"`)
	h.close(t)
	for _, l := range h.lines() {
		if strings.Contains(l, "rpctap-") || len(l) > 1<<10 {
			t.Errorf("the host read an answer to an injected request: %q", clip([]byte(l), 200))
		}
	}
	rec, err := os.ReadFile(h.record)
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, line := range bytes.Split(rec, []byte("\n")) {
		if len(line) < 1<<20 {
			continue
		}
		head := string(line[:200])
		for _, want := range []string{`"dir":"s2h"`, `"captured":true`, `"kind":"response"`, `"id":"rpctap-`, `"frame":"{\"jsonrpc\"`} {
			if !strings.Contains(head, want) {
				t.Errorf("the record of a large answer begins %q, without %s", head, want)
			}
		}
		kept++
	}
	if kept != 2 {
		t.Errorf("the session file holds %d records of large answers, want the 2 captured", kept)
	}
	tail := exec.Command(rpctapBinary(t), "tail", "--json", "--filter", "fate:captured", h.record)
	printed, err := tail.Output()
	if err != nil || bytes.Count(printed, []byte("\n")) != 2 || !bytes.Contains(printed, []byte(`"id":"rpctap-big"`)) || !bytes.Contains(printed, []byte(`"id":"rpctap-late"`)) || len(printed) < 23<<20 {
		t.Errorf("%s: %v, printed %d bytes in %d lines", hint, err, len(printed), bytes.Count(printed, []byte("\n")))
	}
}

func clip(b []byte, n int) []byte {
	if len(b) > n {
		return append(b[:n:n], "…"...)
	}
	return b
}
