package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tmuxScreen runs a command in a tmux of its own, at w×h, and returns a
// function that waits for the screen to show every text given.
func tmuxScreen(t *testing.T, w, h int, env []string, argv ...string) (waitfor func(...string), keys func(...string)) {
	t.Helper()
	_, waitfor, keys = tmuxSession(t, w, h, env, argv...)
	return waitfor, keys
}

// tmuxSession is tmuxScreen that also returns the tmux server's socket
// name (tmux -L), for a test that ends the terminal itself.
func tmuxSession(t *testing.T, w, h int, env []string, argv ...string) (sock string, waitfor func(...string), keys func(...string)) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is missing: .ci/run should have installed it")
		}
		t.Skip("tmux is not installed")
	}
	sock = fmt.Sprintf("rpctap-test-%d", time.Now().UnixNano())
	var line []string
	for _, e := range env {
		line = append(line, shellQuote(e))
	}
	for _, a := range argv {
		line = append(line, shellQuote(a))
	}
	cmd := exec.Command("tmux", "-L", sock, "new-session", "-d", "-s", "t", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "env "+strings.Join(line, " ")+"; sleep 60") // the screen stays after an exit, to be seen
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("tmux", "-L", sock, "kill-server").Run() })
	screen := func() string {
		out, _ := exec.Command("tmux", "-L", sock, "capture-pane", "-p", "-t", "t").Output()
		return string(out)
	}
	waitfor = func(what ...string) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			s := screen()
			ok := true
			for _, w := range what {
				ok = ok && strings.Contains(s, w)
			}
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the screen never showed %q:\n%s", what, s)
			}
		}
	}
	keys = func(k ...string) {
		exec.Command("tmux", append([]string{"-L", sock, "send-keys", "-t", "t"}, k...)...).Run()
	}
	return sock, waitfor, keys
}

// issue 12, done means: rpctap watch -- server-everything (no host) does
// the handshake and lists what the server offers; the server's
// roots/list is held for the user, who answers it in the host's place;
// a tools/call from the composer's template gets its answer.
func TestWatchWithNoHostPlaysTheHostOfServerEverything(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	env := watchEnv(t, t.TempDir())
	waitfor, keys := tmuxScreen(t, 100, 30, env[len(env)-3:], rpctapBinary(t), "watch", "--", server, "stdio")
	waitfor("tools/list", "resources/list", "prompts/list")
	keys("H")
	waitfor("Held (1)", "roots/list id 0")
	keys("a")
	waitfor("answering held #1", `{"jsonrpc":"2.0","id":0,"result":{}}`)
	keys("C-s")
	waitfor("#1 answered in place")
	keys("Escape")
	keys("i")
	keys("C-t")
	waitfor("tools/call echo")
	// The templates: from the top, server/discover (answered -32601),
	// initialize, notifications/initialized,
	// tools/list, notifications/tools/list_changed, resources/list,
	// prompts/list, roots/list, then a tools/call per tool, echo first,
	// with its argument skeleton from the tools/list result.
	for i := 0; i < 8; i++ {
		keys("j")
	}
	keys("Enter")
	waitfor(`"name":"echo","arguments":{"messa`)
	keys("C-s")
	waitfor("CAPTURED")
	keys("Escape")
	keys("q")
}

// issue 12, done means: rpctap watch -- the Go SDK's server (no host)
// discovers it (revision 2026-07-28: server/discover, no initialize) and
// lists its tools.
func TestWatchWithNoHostPlaysTheHostOfTheGoSDKServer(t *testing.T) {
	server := needPeer(t, "bin/server")
	env := watchEnv(t, t.TempDir())
	waitfor, keys := tmuxScreen(t, 100, 30, env[len(env)-3:], rpctapBinary(t), "watch", "--", server)
	waitfor("server/discover", "tools/list")
	keys("q")
}

// issue 12, done means: rpctap watch --open FILE -- gopls (no host) does
// the LSP handshake and opens FILE; gopls's requests a host must answer
// are held for the user; quitting while one is held still ends gopls's
// session at once: the held request goes on and gets its default answer,
// shutdown is answered, exit follows, and gopls exits 0.
func TestWatchWithNoHostPlaysTheHostOfGopls(t *testing.T) {
	gopls := needPeer(t, "bin/gopls")
	dir := t.TempDir()
	env := watchEnv(t, dir)
	mod, _ := filepath.Abs("../../testdata/lsp/hello")
	line := "cd " + shellQuote(mod) + " && exec " + shellQuote(rpctapBinary(t)) + " watch --open main.go -- " + shellQuote(gopls) + " serve"
	waitfor, keys := tmuxScreen(t, 80, 24, append(env[len(env)-3:], "GO_TELEMETRY_CHILD=2"), "sh", "-c", line)
	waitfor("initialize", "initialized", "textDocument/")
	keys("H")
	waitfor("Held (1)", "window/workDoneProgress/create")
	keys("Escape")
	keys("q")
	waitfor("session recorded in")
	files, _ := filepath.Glob(filepath.Join(dir, "state", "rpctap", "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	for _, want := range []string{`"held":"detached"`, `\"result\":null`, `"method":"shutdown"`, `"method":"exit"`, `"event":"exit","code":0}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the session has no %s:\n%s", want, b)
		}
	}
	if i, j := strings.Index(string(b), `"method":"shutdown"`), strings.Index(string(b), `"method":"exit"`); j < i {
		t.Errorf("exit came before shutdown:\n%s", b)
	}
}

// A view whose terminal hangs up (its window closed, ssh dropped) ends,
// and watch with it, stopping its server: the tap in watch catches SIGHUP
// to pass it to the server, which must not leave the view running for
// ever on a terminal that is gone.
func TestWatchEndsWhenItsTerminalHangsUp(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
	marker := fmt.Sprintf("RPCTAP_TEST_HANGUP=%d", time.Now().UnixNano())
	env := append(watchEnv(t, t.TempDir())[len(os.Environ()):], marker)
	t.Cleanup(func() { // whatever the test found, it leaves nothing running
		for _, pid := range processesWith(marker) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	sock, waitfor, _ := tmuxSession(t, 80, 24, env, rpctapBinary(t), "watch", "--", "cat")
	waitfor("live")
	if len(processesWith(marker)) < 2 {
		t.Fatalf("rpctap watch and its server are not both running: %v", processesWith(marker))
	}
	// The terminal goes away: tmux closes the pane's pty.
	exec.Command("tmux", "-L", sock, "kill-server").Run()
	for deadline := time.Now().Add(20 * time.Second); len(processesWith(marker)) > 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("20 s after its terminal hung up, these still run: %v", processesWith(marker))
		}
	}
}
