package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// rpctap watch --http URL in tmux, at 80×24 and 200×50: the view opens
// with the URL to give the host on its status line; the inspector CLI
// given that URL gets its answer through the proxy, and its calls show
// in the view as they cross; q ends the proxy and says where the session
// is.
func TestWatchHTTPShowsAHostsCallsThroughTheProxyOnThisTerminal(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	port := freePort(t)
	srv := exec.Command(server, "streamableHttp")
	srv.Env = append(os.Environ(), "PORT="+port)
	startLine(t, srv, "listening on port")
	target := "http://127.0.0.1:" + port + "/mcp"
	for _, size := range []struct{ w, h int }{{80, 24}, {200, 50}} {
		dir := t.TempDir()
		env := watchEnv(t, dir)
		listen := "127.0.0.1:" + freePort(t)
		given := "http://" + listen + "/mcp"
		waitfor, keys, screen := tmuxScreen(t, size.w, size.h, env[len(env)-3:], rpctapBinary(t), "watch", "--http", target, "--listen", listen)
		waitfor("give the host "+given, "no frames yet", "127.0.0.1:"+port+"  live")
		out, err := exec.Command(inspector, "--cli", "--transport", "http", "--server-url", given, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi").CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("Echo: hi")) {
			t.Fatalf("%dx%d: the inspector through rpctap watch --http: %v\n%s", size.w, size.h, err, out)
		}
		waitfor("→ request", "tools/call", "← http", "← response")
		if !strings.Contains(screen(), " 0 err ") {
			t.Errorf("%dx%d: the view counts errors in a clean session:\n%s", size.w, size.h, screen())
		}
		keys("q")
		waitfor("session recorded in")
		waitSession(t, dir, `"transport":"http"`)
		waitSession(t, dir, `Echo: hi`)
	}
}

// rpctap watch --http refuses, before it listens or records anything, a
// server command beside the URL, --host, and a process with no terminal,
// each saying what to type instead.
func TestWatchHTTPRefusesWhatItCannotDoSayingWhatToTypeInstead(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"watch", "--http", "http://127.0.0.1:1/mcp", "--", "my-server"}, `takes no arguments, but was given "my-server"; as in: rpctap watch --http http://127.0.0.1:3001/mcp`},
		{[]string{"watch", "--http", "http://127.0.0.1:1/mcp", "--host", "h"}, "start the host yourself, with the URL the view shows"},
		{[]string{"watch", "--http", "http://127.0.0.1:1/mcp"}, "needs a terminal, and this process has none (/dev/tty cannot be opened), so it started nothing; to tap the server with no terminal, use: rpctap http --target http://127.0.0.1:1/mcp"},
	} {
		cmd := exec.Command(rpctapBinary(t), c.args...)
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal
		out, err := cmd.CombinedOutput()
		if ee, _ := err.(*exec.ExitError); ee == nil || ee.ExitCode() != 2 || !bytes.Contains(out, []byte(c.want)) {
			t.Errorf("rpctap %s: %v, said %q; want exit 2 and %q", strings.Join(c.args, " "), err, out, c.want)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "rpctap", "sessions", "*")); len(files) > 0 {
		t.Errorf("a refused watch --http recorded %v", files)
	}
}
