package main

import (
	"os/exec"
	"testing"
)

// In tmux at 80×24, rpctap ui attached to rpctap http in front of
// server-everything (streamableHttp), after the inspector's session: the
// composer's tools/call goes to the server as the tap's own POST, the
// view says its answer is captured, and the session file holds the
// injected call and the server's answer, captured.
func TestTheViewInjectsAToolCallIntoAnHTTPSession(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	dir := t.TempDir()
	env := watchEnv(t, dir)
	bin := rpctapBinary(t)
	port := freePort(t)
	srv := exec.Command(server, "streamableHttp")
	srv.Env = append(env, "PORT="+port)
	startLine(t, srv, "listening on port")
	tp := exec.Command(bin, "http", "--target", "http://127.0.0.1:"+port+"/mcp", "--name", "hact-view")
	tp.Env = env
	given := startLine(t, tp, "http://")
	if out, code := inspect(t, given, "--method", "tools/list"); code != 0 {
		t.Fatalf("the inspector (exit %d): %s", code, out)
	}
	waitfor, keys, screen := tmuxScreen(t, 80, 24, env[len(env)-3:], bin, "ui", "hact-view")
	waitfor("tools/list")
	keys("i")
	waitfor("preview: write a frame")
	keys("-l", `{"jsonrpc":"2.0","id":"v1","method":"tools/call","params":{"name":"echo","arguments":{"message":"from the view"}}}`)
	keys("C-s")
	waitfor("its answer is captured")
	waitSession(t, dir, `"src":"inject","kind":"request","id":"v1","method":"tools/call"`)
	waitSession(t, dir, `"dir":"s2h","captured":true,"kind":"response","id":"v1"`)
	waitSession(t, dir, `Echo: from the view`)
	keys("Escape")
	waitfor("enter open")
	t.Log(screen())
	keys("q")
}
