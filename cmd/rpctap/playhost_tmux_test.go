package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tmuxScreen runs a command in a tmux of its own, at w×h, and returns a
// function that waits for the screen to show every text given.
func tmuxScreen(t *testing.T, w, h int, env []string, argv ...string) (waitfor func(...string), keys func(...string), screen func() string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is missing: .ci/run should have installed it")
		}
		t.Skip("tmux is not installed")
	}
	sock := fmt.Sprintf("rpctap-test-%d", time.Now().UnixNano())
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
	screen = func() string {
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
	return waitfor, keys, screen
}

// pickTemplate picks the composer's template called name (the composer is
// open): ctrl+t lists the templates in the order the session showed their
// methods, which depends on what the server sent, so it tries each place.
func pickTemplate(t *testing.T, waitfor func(...string), keys func(...string), screen func() string, name string) {
	t.Helper()
	for i := 0; i < 60; i++ {
		keys("C-t")
		waitfor("↑/k up • ↓/j down • enter open • esc close") // the list's keys
		for j := 0; j < i; j++ {
			keys("Down")
		}
		keys("Enter")
		waitfor(": edit the placeholders, then ctrl+s")
		if strings.Contains(screen(), "template "+name+": edit") {
			return
		}
	}
	t.Fatalf("the composer's templates have no %s:\n%s", name, screen())
}

// rpctap watch -- server-everything (no host) does the handshake, lists
// what the server offers, and answers the server's roots/list at once
// with the working directory (nothing is held, nothing pending). A
// roots/list that the user's own filter holds waits in the held pane and
// counts as pending; a answers it from the skeleton that fits the method;
// a tools/call from the composer's template gets its answer.
func TestWatchWithNoHostPlaysTheHostOfServerEverything(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	dir := t.TempDir()
	env := watchEnv(t, dir)
	waitfor, keys, screen := tmuxScreen(t, 100, 30, env[len(env)-3:], rpctapBinary(t), "watch", "--", server, "stdio")
	waitfor("tools/list", "resources/list", "prompts/list", "roots/list")
	waitSession(t, dir, `"dir":"h2s","kind":"response","id":0,"frame":"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"roots\":[{\"uri\":\"file:///`)
	waitSession(t, dir, `Roots updated: 1 root(s) received from client`)
	waitfor("0 pending")
	// The user holds the next roots/list, and makes the server ask again.
	keys(":")
	keys("-l", "intercept dir:s2h method:roots/list")
	keys("Enter")
	waitfor("intercept → dir:s2h method:roots/list", "nothing held")
	keys("Escape")
	waitfor("↑/k up")
	keys("i")
	waitfor("ctrl+s send")
	keys("-l", `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	keys("C-s")
	waitfor("sent the frame to the server")
	keys("Escape")
	waitfor("↑/k up")
	keys("H")
	waitfor("Held (1)", "roots/list id 1", "1 pending")
	keys("a")
	waitfor("answering held #1", `{"jsonrpc":"2.0","id":1,"result":{"roots":[]}}`)
	keys("C-s")
	waitfor("#1 answered in place", "0 pending")
	keys("Escape")
	waitfor("↑/k up")
	keys("i")
	// A tools/call per tool, with its argument skeleton from the
	// tools/list result.
	pickTemplate(t, waitfor, keys, screen, "tools/call echo")
	waitfor(`"name":"echo","arguments":{"messa`)
	keys("C-s")
	waitfor(`"<string>" still at params.arguments.message`) // sent as it is on a second ctrl+s
	keys("C-s")
	waitfor("CAPTURED")
	keys("Escape")
	keys("q")
	waitfor("session recorded in")
	// The answer is server-everything's echo of the form's placeholder.
	b := watchSession(t, dir)
	if !strings.Contains(b, `"captured":true`) || !strings.Contains(b, `Echo: <string>`) {
		t.Errorf("the session has no captured echo of the form's message:\n%s", b)
	}
	if strings.Contains(b, `"held":"timeout"`) || strings.Count(b, `"held":"answered"`) != 1 {
		t.Errorf("a frame held for its whole hold time, or no roots/list answered in place:\n%s", b)
	}
	noRuleAboveTheEnvelopeBroken(t, rpctapBinary(t), watchSessionPath(t, dir))
}

// waitSession waits until the one session file a watch under dir records
// holds text.
func waitSession(t *testing.T, dir, text string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		files, _ := filepath.Glob(filepath.Join(dir, "state", "rpctap", "sessions", "*.jsonl"))
		if len(files) == 1 {
			if b, _ := os.ReadFile(files[0]); strings.Contains(string(b), text) {
				return
			}
		}
		if time.Now().After(deadline) {
			b := ""
			if len(files) == 1 {
				r, _ := os.ReadFile(files[0])
				b = string(r)
			}
			t.Fatalf("the session never held %s:\n%s", text, b)
		}
	}
}

// watchSessionPath is the path of the one session file a watch under dir
// recorded.
func watchSessionPath(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "state", "rpctap", "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions: %v", files)
	}
	return files[0]
}

// watchSession reads the one session file a watch under dir recorded.
func watchSession(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(watchSessionPath(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// In tmux, rpctap watch -- the Go SDK's server (no host) discovers it
// (revision 2026-07-28: server/discover, no initialize), lists its tools,
// and a tools/call from the composer's form (ctrl+t, the echo tool's
// template) gets its answer. On that revision every request carries the
// protocol version in _meta: the template's does, and the server answers it
// as a 2026-07-28 request (its serverInfo in the result's _meta, which it
// leaves out for a request with none).
// A tools/call typed in the composer whose arguments break the tool's
// inputSchema, as server-everything listed it, says so before it is
// sent, and goes only on a second ctrl+s.
func TestTheComposerShowsArgumentsThatBreakTheToolsSchemaBeforeSending(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	dir := t.TempDir()
	env := watchEnv(t, dir)
	waitfor, keys, _ := tmuxScreen(t, 100, 30, env[len(env)-3:], rpctapBinary(t), "watch", "--", server, "stdio")
	waitfor("tools/list", "0 pending")
	keys("i")
	waitfor("ctrl+s send")
	keys("-l", `{"jsonrpc":"2.0","id":"sum-1","method":"tools/call","params":{"name":"get-sum","arguments":{"a":"one","b":2}}}`)
	waitfor(`the arguments of tools/call "get-sum" do not validate`)
	keys("C-s")
	waitfor("ctrl+s again sends it anyway")
	keys("C-s")
	waitfor(`sent "sum-1" to the server`)
	keys("Escape")
	keys("q")
	waitfor("session recorded in")
	if b := watchSession(t, dir); !strings.Contains(b, `\"id\":\"sum-1\"`) {
		t.Errorf("the session has no injected call sum-1 of get-sum:\n%s", b)
	}
}

func TestWatchWithNoHostPlaysTheHostOfTheGoSDKServer(t *testing.T) {
	server := needPeer(t, "bin/server")
	dir := t.TempDir()
	env := watchEnv(t, dir)
	waitfor, keys, screen := tmuxScreen(t, 80, 24, env[len(env)-3:], rpctapBinary(t), "watch", "--", server)
	waitfor("server/discov", "tools/list", "Pending (0)", "server → host  response")
	keys("i")
	pickTemplate(t, waitfor, keys, screen, "tools/call echo")
	waitfor(`"<string>"},"_meta":{"io.modelcontext`) // wrapped at 80
	keys("C-s")
	waitfor(`"<string>" still at params.arguments.message`) // sent as it is on a second ctrl+s
	keys("C-s")
	waitfor("CAPTURED")
	keys("Escape")
	waitfor("↑/k up")
	keys("q")
	waitfor("session recorded in")
	b := watchSession(t, dir)
	var call, answer string
	for _, line := range strings.Split(b, "\n") {
		switch {
		case strings.Contains(line, `"src":"inject"`) && strings.Contains(line, `"method":"tools/call"`):
			call = line
		case strings.Contains(line, `"captured":true`):
			answer = line
		}
	}
	if !strings.Contains(call, `\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{`) {
		t.Errorf("the composer's tools/call carries no 2026-07-28 _meta: %s", call)
	}
	if !strings.Contains(answer, `\"text\":\"\\u003cstring\\u003e\"`) || !strings.Contains(answer, `io.modelcontextprotocol/serverInfo`) {
		t.Errorf("the tools/call's answer is not the echo of a 2026-07-28 request: %s", answer)
	}
	noRuleAboveTheEnvelopeBroken(t, rpctapBinary(t), watchSessionPath(t, dir))
}

// watchGopls runs rpctap watch --open main.go -- gopls serve in
// testdata/lsp/hello, in tmux at 80×24, with its state under dir.
func watchGopls(t *testing.T, dir string) (waitfor func(...string), keys func(...string), screen func() string) {
	t.Helper()
	gopls := needPeer(t, "bin/gopls")
	env := watchEnv(t, dir)
	mod, _ := filepath.Abs("../../testdata/lsp/hello")
	line := "cd " + shellQuote(mod) + " && exec " + shellQuote(rpctapBinary(t)) + " watch --open main.go -- " + shellQuote(gopls) + " serve"
	return tmuxScreen(t, 80, 24, append(env[len(env)-3:], "GO_TELEMETRY_CHILD=2"), "sh", "-c", line)
}

// rpctap watch --open FILE -- gopls (no host) does the LSP handshake and
// opens FILE, answering gopls's requests at once (nothing held). A
// workspace/configuration the user's filter holds is answered with a from
// the skeleton that fits it, one null per item, which gopls takes; quitting
// while another is held still ends gopls's session at once: the held
// request goes on and gets rpctap's answer, shutdown is answered, exit
// follows, and gopls exits 0.
func TestWatchWithNoHostPlaysTheHostOfGopls(t *testing.T) {
	dir := t.TempDir()
	waitfor, keys, _ := watchGopls(t, dir)
	waitfor("gopls  live")
	waitSession(t, dir, `"method":"textDocument/didOpen"`)
	waitSession(t, dir, `"method":"workspace/configuration"`)
	waitSession(t, dir, `\"result\":[null`) // answered at once
	// gopls asks for its settings again on didChangeConfiguration.
	keys(":")
	keys("-l", "intercept dir:s2h method:workspace/configuration")
	keys("Enter")
	waitfor("intercept → dir:s2h method:workspace/configuration", "nothing held")
	keys("Escape")
	waitfor("↑/k up")
	changed := `{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"settings":{}}}`
	keys("i")
	waitfor("ctrl+s send")
	keys("-l", changed)
	keys("C-s")
	waitfor("sent the frame to the server")
	keys("Escape")
	waitfor("↑/k up")
	keys("H")
	waitfor("#1    ← ", "workspace/configuration id", "1 pending") // gopls's next frames wait behind it
	keys("a")
	waitfor("answering held #1", `"result":[null]}`)
	keys("C-s")
	waitfor("#1 answered in place")
	keys("Escape")
	waitfor("↑/k up")
	keys("i")
	waitfor("ctrl+s send")
	keys("-l", changed)
	keys("C-s")
	waitfor("sent the frame to the server")
	keys("Escape")
	waitfor("↑/k up")
	keys("H")
	waitfor("workspace/configuration id", "1 pending")
	keys("Escape")
	keys("q")
	waitfor("session recorded in")
	b := watchSession(t, dir)
	for _, want := range []string{`"held":"answered"`, `"held":"detached"`, `\"result\":[null]`, `"method":"shutdown"`, `"method":"exit"`, `"event":"exit","code":0}`} {
		if !strings.Contains(b, want) {
			t.Errorf("the session has no %s:\n%s", want, b)
		}
	}
	if strings.Contains(b, `"held":"timeout"`) || strings.Contains(b, "cannot unmarshal") {
		t.Errorf("a frame held for its whole hold time, or gopls could not read an answer:\n%s", b)
	}
	if i, j := strings.Index(b, `"method":"shutdown"`), strings.Index(b, `"method":"exit"`); j < i {
		t.Errorf("exit came before shutdown:\n%s", b)
	}
	noRuleAboveTheEnvelopeBroken(t, rpctapBinary(t), watchSessionPath(t, dir))
}

// rpctap watch --open main.go -- gopls (no host) opens the file, and a
// hover from the composer works at once: gopls's own requests (progress,
// configuration) are answered as they come, so nothing of gopls's waits
// behind them. The hover template (ctrl+t) moved to Greet's call on line
// 10, sent, and the answer is gopls's hover of Greet, shown in the view.
// At 80×24.
func TestWatchOpenGoplsHoverFromTheComposer(t *testing.T) {
	dir := t.TempDir()
	waitfor, keys, screen := watchGopls(t, dir)
	waitfor("gopls  live")
	waitSession(t, dir, `"method":"textDocument/didOpen"`)
	keys("i")
	pickTemplate(t, waitfor, keys, screen, "textDocument/hover")
	waitWrapped(t, screen, `{"line":0,"character":0}}}`)
	for i := 0; i < len(`0,"character":0}}}`); i++ {
		keys("BSpace")
	}
	keys("-l", `9,"character":26}}}`)
	waitWrapped(t, screen, `{"line":9,"character":26}}}`)
	keys("C-s")
	waitfor("CAPTURED")
	keys("Escape")
	waitfor("↑/k up") // the list's keys: the composer closed (a key right after Escape would read as alt+key)
	keys("/")
	keys("-l", "method:textDocument/hover kind:response")
	keys("Enter")
	waitfor("(1 of ")
	keys("r")
	waitfor("Raw bytes")
	waitWrapped(t, screen, "func Greet(name")
	keys("q")
	waitfor("session recorded in")
	b := watchSession(t, dir)
	if !strings.Contains(b, `Greet says hello to name.`) {
		t.Errorf("the session has no hover of Greet:\n%s", b)
	}
	if strings.Contains(b, `"held":`) {
		t.Errorf("the tap held frames with no filter set:\n%s", b)
	}
}

// waitWrapped waits for the screen to show text, which the view may have
// wrapped anywhere (where depends on the length of the checkout's path):
// box borders and white space are left out of both.
func waitWrapped(t *testing.T, screen func() string, text string) {
	t.Helper()
	squeeze := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '│' || r == ' ' || r == '\n' {
				return -1
			}
			return r
		}, s)
	}
	want := squeeze(text)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		s := screen()
		if strings.Contains(squeeze(s), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %q, however wrapped:\n%s", text, s)
		}
	}
}

// In tmux at 120×40, rpctap watch -- the Go SDK's server -mrtr (no
// host): a tools/call of confirm from the composer's template is answered
// input_required, asking for an elicitation; rpctap's host answers it as
// it answers the server's own elicitation/create (declined) and retries
// the call with that answer and the requestState, and the view shows the
// final result as the end of the call the composer sent. The session
// breaks no rule above the envelope.
func TestWatchWithNoHostCompletesACallThatAsksForInput(t *testing.T) {
	server := needPeer(t, "bin/server")
	dir := t.TempDir()
	env := watchEnv(t, dir)
	bin := rpctapBinary(t)
	waitfor, keys, screen := tmuxScreen(t, 120, 40, env[len(env)-3:], bin, "watch", "--", server, "-mrtr")
	waitfor("server/discov", "tools/list", "Pending (0)")
	keys("i")
	pickTemplate(t, waitfor, keys, screen, "tools/call confirm")
	keys("C-s")
	waitfor(`"<string>" still at params.arguments.action`) // sent as it is on a second ctrl+s
	keys("C-s")
	waitfor("CAPTURED", `"rpctap-host-3" tools/call`)
	first := ""
	for _, line := range strings.Split(screen(), "\n") {
		if f := strings.Fields(strings.Trim(line, "│ ")); len(f) > 0 && strings.Contains(line, `+request     "rpctap-1"`) {
			first = f[0]
		}
	}
	if first == "" {
		t.Fatalf("no row of the composer's call:\n%s", screen())
	}
	keys("Escape")
	waitfor("↑/k up")
	keys("/")
	keys("-l", `id:"rpctap-host-3" kind:response`)
	keys("Enter")
	waitfor("(1 of ", "ends the call first sent as #"+first+", after ") // one call, from the composer's request
	keys("r")
	waitfor("Raw bytes")
	waitWrapped(t, screen, `ing\\u003e not confirmed (decline)"}],"resultType":"complete"}}`)
	keys("q")
	waitfor("session recorded in")
	b := watchSession(t, dir)
	if !strings.Contains(b, `\"inputResponses\":{\"confirm\":{\"action\":\"decline\"}}`) || !strings.Contains(b, `\"requestState\":\"confirm:\\u003cstring\\u003e\"`) {
		t.Errorf("no retry with the declined elicitation and the requestState:\n%s", b)
	}
	noRuleAboveTheEnvelopeBroken(t, bin, watchSessionPath(t, dir))
}
