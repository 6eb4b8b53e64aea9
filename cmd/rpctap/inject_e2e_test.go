package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
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

// issue 11, done means: with a long-lived host → rpctap run →
// server-everything, rpctap inject --method tools/call --tool echo
// --capture gets the answer and prints it with its latency, and the
// host's output is what it is without the injection; a notification
// injected toward the host reaches it.
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

// issue 11, done means: with the inspector CLI as host, its output and
// exit status are the same with and without an injection during its call.
func TestInspectorIsTheSameWithAnInjectionDuringItsCall(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	run := func(injectToo bool) (string, int, string) {
		name := fmt.Sprintf("e2e-inspector-%d", time.Now().UnixNano())
		// A call that takes 2 s, so that the injection lands during it.
		cmd := exec.Command(inspector, "--cli", "--method", "tools/call", "--tool-name", "trigger-long-running-operation", "--tool-arg", "duration=2", "--tool-arg", "steps=2",
			"--", bin, "run", "--name", name, "--", server, "stdio")
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		captured := ""
		if injectToo {
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
			b, err := exec.Command(bin, "inject", "--tap", name, "--capture", "--method", "tools/call", "--tool", "echo", "--arg", "message=injected").CombinedOutput()
			if err != nil {
				t.Errorf("inject during the inspector's call: %v: %s", err, b)
			}
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
		return out.String(), code, captured
	}
	plainOut, plainCode, _ := run(false)
	out, code, captured := run(true)
	if !strings.Contains(captured, "Echo: injected") {
		t.Errorf("the injected call's answer: %s", captured)
	}
	if out != plainOut || code != plainCode {
		t.Errorf("the inspector's output or status changed with an injection:\nwithout (exit %d): %s\nwith (exit %d):    %s", plainCode, plainOut, code, out)
	}
	if !strings.Contains(plainOut, "Long running operation completed") {
		t.Errorf("the inspector printed %s", plainOut)
	}
}
