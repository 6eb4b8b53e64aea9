package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// selectTool moves the tools pane's selection down until the tool name
// is selected (its heading shows under the list).
func selectTool(t *testing.T, keys func(...string), screen func() string, name string) {
	t.Helper()
	for i := 0; i < 40; i++ {
		if strings.Contains(screen(), "── "+name+" ") {
			return
		}
		before := screen()
		keys("j")
		for deadline := time.Now().Add(10 * time.Second); screen() == before && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		}
	}
	t.Fatalf("the tools pane never selected %s:\n%s", name, screen())
}

// In tmux at 80×24, rpctap watch -- server-everything (no host, so the
// watch lists the tools): T lists the server's tools with none called;
// i on get-sum opens the composer on its tools/call, the arguments its
// inputSchema's skeleton; ctrl+s sends it, the session records it, and
// the pane counts the call answered, with its latency; a call of a tool
// the list does not name shows as unlisted, failed (isError).
func TestWatchToolsPaneCountsACallSentFromIt(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	dir := t.TempDir()
	env := watchEnv(t, dir)
	waitfor, keys, screen := tmuxScreen(t, 80, 24, env[len(env)-3:], rpctapBinary(t), "watch", "--", server, "stdio")
	waitfor("tools/list", "prompts/list", "0 pending")
	keys("T")
	waitfor("listed (tools/list result #", "── echo ", "Echoes back the input string", "T/esc close")
	if !regexp.MustCompile(`echo +0 +0 +0`).MatchString(screen()) {
		t.Errorf("the pane does not list echo uncalled:\n%s", screen())
	}
	selectTool(t, keys, screen, "get-sum")
	waitfor("Returns the sum of two numbers")
	keys("i")
	waitfor(`"name":"get-s`, `"arguments":{"a":0,"b":0}}}`, "template tools/call get-sum")
	keys("C-s")
	waitfor("its answer is captured")
	waitSession(t, dir, `"src":"inject","kind":"request","id":"rpctap-1","method":"tools/call"`)
	waitSession(t, dir, `The sum of 0 and 0 is 0.`)
	// A call of a tool no list names, typed in the composer.
	keys("Escape")
	waitfor("enter open")
	keys("i")
	waitfor("preview: write a frame")
	keys("-l", `{"jsonrpc":"2.0","id":"u1","method":"tools/call","params":{"name":"no-such-tool","arguments":{}}}`)
	keys("C-s")
	waitfor("its answer is captured")
	keys("Escape")
	waitfor("enter open")
	keys("T")
	waitfor("1 called but not listed")
	if !regexp.MustCompile(`get-sum +1 +0 +0 +[0-9.]+ms +[0-9.]+ms`).MatchString(screen()) {
		t.Errorf("the pane does not count get-sum's call with its latency:\n%s", screen())
	}
	keys("G")
	waitfor("── no-such-tool", "the latest tools/list does not list it")
	// server-everything answers it with a result that says isError, not
	// with a protocol error: the pane tells the two apart.
	if !regexp.MustCompile(`no-such-tool +1 +0 +1 .*unlisted`).MatchString(screen()) {
		t.Errorf("the unlisted tool's call is not counted as a tool's failure:\n%s", screen())
	}
	keys("T")
	waitfor("enter open")
	keys("q")
	waitfor("session recorded in")
}

// In tmux at 200×50 the pane lists every tool of server-everything with
// the selected one's schema and annotations under the list; enter goes to
// the tools/list result that listed it.
func TestWatchToolsPaneShowsEachToolsSchemaAtALargeSize(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	dir := t.TempDir()
	env := watchEnv(t, dir)
	waitfor, keys, screen := tmuxScreen(t, 200, 50, env[len(env)-3:], rpctapBinary(t), "watch", "--", server, "stdio")
	waitfor("tools/list", "prompts/list", "0 pending")
	keys("T")
	waitfor("── echo ", "get-sum", "trigger-long-running-operation", `"required": [`, "annotations", `"readOnlyHint": true`,
		"i call it • enter go to the frame")
	at := regexp.MustCompile(`tools/list result #(\d+)\)`).FindStringSubmatch(screen())
	if at == nil {
		t.Fatalf("the pane names no list:\n%s", screen())
	}
	keys("Enter")
	waitfor("#" + at[1] + "  server → host  response")
	keys("q")
	waitfor("session recorded in")
}
