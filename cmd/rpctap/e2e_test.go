package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The end-to-end tests run the built binary between real peers, installed
// (pinned) by .ci/peers under testdata/peers. Without them the tests skip,
// except in CI, where a missing peer is a failure.

var peers = func() string { p, _ := filepath.Abs("../../testdata/peers"); return p }()

func needPeer(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(peers, rel)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: .ci/peers should have installed it", p)
		}
		t.Skipf("%s is not installed; run .ci/peers", p)
	}
	return p
}

// rpctapBinary builds the binary once per test run, also when tests
// running at once ask for it together.
var (
	buildMu     sync.Mutex
	builtBinary string
)

func rpctapBinary(t *testing.T) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if builtBinary != "" {
		return builtBinary
	}
	dir, err := os.MkdirTemp("", "rpctap-e2e")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "rpctap")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("building rpctap: %v\n%s", err, out)
	}
	builtBinary = bin
	return bin
}

// timed runs a command and returns its stdout and how long it took.
func timed(t *testing.T, dir string, name string, args ...string) ([]byte, time.Duration) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, errb.Bytes())
	}
	return out.Bytes(), time.Since(start)
}

func checkSessionHasNoErrors(t *testing.T, path string) checkDoc {
	t.Helper()
	return checkSessionErrors(t, path, func(checkFinding) bool { return false })
}

// checkSessionErrors is checkSessionHasNoErrors, with the error findings
// that allowed says a real peer makes.
func checkSessionErrors(t *testing.T, path string, allowed func(checkFinding) bool) checkDoc {
	t.Helper()
	doc, err := checkJSONOf(t, path, checkOptions{failOn: 3, timeout: 30e9})
	for _, f := range doc.Findings {
		if f.Severity == "error" && !allowed(f) {
			t.Errorf("%s line %d: %s %s", filepath.Base(path), f.Line, f.Code, f.Message)
		}
	}
	// Exit status 1 says findings reached --fail-on: allowed ones may.
	if e, ok := err.(exitError); err != nil && (!ok || e.code != 1) {
		t.Errorf("rpctap check %s: %v", path, err)
	}
	return doc
}

func TestInspectorThroughTapMatchesDirectAndDoesNotHang(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	calls := map[string][]string{
		"tools-list":     {"--method", "tools/list"},
		"tools-call":     {"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"},
		"resources-list": {"--method", "resources/list"},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			record := filepath.Join(dir, "s.jsonl")
			direct, dDirect := timed(t, dir, inspector, append(append([]string{"--cli"}, call...), "--", server, "stdio")...)
			tapped, dTapped := timed(t, dir, inspector, append(append([]string{"--cli"}, call...), "--", bin, "run", "--record", record, "--", server, "stdio")...)
			if !bytes.Equal(direct, tapped) {
				t.Errorf("the host's output differs through the tap:\n direct %.300s\n tapped %.300s", direct, tapped)
			}
			// A wrapper that mishandles stdin EOF or SIGTERM makes the host
			// wait for the server's own 60 s timeout; allow the noise of
			// a loaded machine, well short of that.
			if dTapped > dDirect+30*time.Second {
				t.Errorf("through the tap the call took %v, directly %v", dTapped, dDirect)
			}
			doc := checkSessionHasNoErrors(t, record)
			if doc.Frames < 8 {
				t.Errorf("the session holds %d frames; the handshake alone is more", doc.Frames)
			}
		})
	}
}

func TestGoSDKPairThroughTap(t *testing.T) {
	client := needPeer(t, "bin/client")
	server := needPeer(t, "bin/server")
	bin := rpctapBinary(t)
	dir := t.TempDir()
	record := filepath.Join(dir, "s.jsonl")
	direct, _ := timed(t, dir, client, "--", server)
	tapped, _ := timed(t, dir, client, "--", bin, "run", "--record", record, "--", server)
	if !bytes.Equal(direct, tapped) {
		t.Errorf("client output differs through the tap:\n direct %s\n tapped %s", direct, tapped)
	}
	checkSessionHasNoErrors(t, record)
}

func TestGoplsThroughTapWithAutoFraming(t *testing.T) {
	drive := needPeer(t, "bin/lspdrive")
	gopls := needPeer(t, "bin/gopls")
	bin := rpctapBinary(t)
	dir := t.TempDir()
	record := filepath.Join(dir, "s.jsonl")
	out, _ := timed(t, dir, drive, "-dir", filepath.Join(dir, "mod"), "--", bin, "run", "--framing", "auto", "--record", record, "--", "env", "GO_TELEMETRY_CHILD=2", gopls, "serve")
	if !bytes.Contains(out, []byte("Greet")) {
		t.Errorf("the LSP client did not get its hover through the tap:\n%s", out)
	}
	// gopls answers the exit notification by exiting, and now and then
	// does so between a message's header and its body (seen with tee, no
	// tap): the stream then ends inside that last frame, which is an
	// error the tap rightly records.
	file, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	last := bytes.Count(file, []byte("\n")) - 1 // the line before the exit record
	doc := checkSessionErrors(t, record, func(f checkFinding) bool {
		return f.Code == "bad-header" && f.Line == last && strings.Contains(f.Message, "The stream ended inside a body")
	})
	if doc.Frames < 10 {
		t.Errorf("the session holds %d frames", doc.Frames)
	}
}

func TestInjectWithCaptureKeepsTheAnswerFromTheHost(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	dir := t.TempDir()
	record := filepath.Join(dir, "s.jsonl")
	name := "e2e-inject-" + filepath.Base(dir)
	cmd := exec.Command(bin, "run", "--name", name, "--record", record, "--", server, "stdio")
	stdin, _ := cmd.StdinPipe()
	stdoutPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	host := make(chan []byte)
	go func() {
		var all bytes.Buffer
		all.ReadFrom(stdoutPipe)
		host <- all.Bytes()
	}()
	stdin.Write([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}` + "\n"))
	// Wait until ls shows the tap with the initialize answer recorded.
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, _ := exec.Command(bin, "ls", "--json").Output()
		if framesOf(out, name) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tap never showed up in rpctap ls with two frames:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	// The injected request must follow the host's initialized
	// notification on the wire: wait until the tap has relayed it.
	for {
		out, _ := exec.Command(bin, "ls", "--json").Output()
		if framesOf(out, name) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tap never relayed notifications/initialized:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	reply, err := exec.Command(bin, "inject", "--tap", name, "--capture", `{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/list"}`).Output()
	if err != nil || !bytes.Contains(reply, []byte(`"echo"`)) {
		t.Fatalf("inject --capture: %v\n%s", err, reply)
	}
	// Capturing a frame that gets no answer says why, and what to send
	// instead.
	var refusal bytes.Buffer
	refused := exec.Command(bin, "inject", "--tap", name, "--capture", `{"jsonrpc":"2.0","method":"notifications/x"}`)
	refused.Stderr = &refusal
	if err := refused.Run(); err == nil || !strings.Contains(refusal.String(), "this is a notification, which gets no answer") ||
		!strings.Contains(refusal.String(), `as in: {"jsonrpc":"2.0","id":"rpctap-1","method":"ping"}`) {
		t.Errorf("inject --capture of a notification: %v, said %q", err, refusal.String())
	}
	stdin.Write([]byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n"))
	time.Sleep(300 * time.Millisecond)
	stdin.Close()
	seen := <-host
	cmd.Wait()
	if bytes.Contains(seen, []byte("rpctap-1")) {
		t.Errorf("the host saw the answer to the injected request:\n%s", seen)
	}
	if !bytes.Contains(seen, []byte(`"id":7`)) {
		t.Errorf("the host's own ping went unanswered:\n%s", seen)
	}
	rec, _ := os.ReadFile(record)
	for _, want := range []string{`"src":"inject"`, `"captured":true`} {
		if !bytes.Contains(rec, []byte(want)) {
			t.Errorf("the session file lacks %s", want)
		}
	}
	checkSessionHasNoErrors(t, record)
}

// framesOf reads the frame count of the live tap named name from rpctap
// ls --json output, or -1.
func framesOf(lsJSON []byte, name string) int64 {
	var doc struct {
		Live []struct {
			Name   string `json:"name"`
			Frames int64  `json:"frames"`
		} `json:"live"`
	}
	if json.Unmarshal(lsJSON, &doc) != nil {
		return -1
	}
	for _, l := range doc.Live {
		if l.Name == name {
			return l.Frames
		}
	}
	return -1
}

// lsSessionPaths runs rpctap ls --json --recent 0 with env and returns the
// session paths it lists.
func lsSessionPaths(t *testing.T, env []string) []string {
	t.Helper()
	cmd := exec.Command(rpctapBinary(t), "ls", "--json", "--recent", "0")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("rpctap ls --json: %v", err)
	}
	var doc struct {
		Sessions []struct{ Path string } `json:"sessions"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("rpctap ls --json printed %q: %v", out, err)
	}
	var paths []string
	for _, s := range doc.Sessions {
		paths = append(paths, s.Path)
	}
	return paths
}

// The inspector starts the server with a stripped environment (no
// XDG_STATE_HOME), so the tap records under another directory than the
// user's shell, with XDG_STATE_HOME set, looks in; a host that starts it as
// env -i does leaves it no HOME, so it records under its TMPDIR, or /tmp.
// The user's rpctap ls (and so the view's list, which reads the same
// sessions.RecentSessions) still lists each session, whatever
// XDG_STATE_HOME, HOME and TMPDIR either side has.
func TestSessionsRecordedBehindARealHostAreListedWhateverTheEnvironment(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	dir := t.TempDir()
	tapHome, userHome, userState := filepath.Join(dir, "tap-home"), filepath.Join(dir, "user-home"), filepath.Join(dir, "user-state")
	for _, d := range []string{tapHome, userHome, userState} {
		os.Mkdir(d, 0o700)
	}
	name := fmt.Sprintf("envtest-%d", time.Now().UnixNano())
	host := exec.Command(inspector, "--cli", "--method", "tools/list", "--", bin, "run", "--name", name, "--", server, "stdio")
	host.Env = append(os.Environ(), "HOME="+tapHome, "XDG_STATE_HOME="+userState)
	if out, err := host.CombinedOutput(); err != nil {
		t.Fatalf("inspector through the tap: %v\n%s", err, out)
	}
	recorded, _ := filepath.Glob(filepath.Join(tapHome, ".local", "state", "rpctap", "sessions", "*-"+name+".jsonl"))
	if len(recorded) != 1 {
		t.Fatalf("the tap behind the inspector recorded %q under its HOME; the inspector now passes XDG_STATE_HOME on, so this test no longer shows the stripped environment", recorded)
	}
	// A tap a host starts as env -i does (no HOME, no XDG_STATE_HOME), with
	// a TMPDIR of its own, records under that TMPDIR; with none, under /tmp.
	tapTmp := filepath.Join(dir, "tap-tmp")
	os.Mkdir(tapTmp, 0o700)
	for _, env := range [][]string{{"TMPDIR=" + tapTmp}, {}} {
		tap := exec.Command(bin, "run", "--name", name+"-bare", "--", "/bin/cat")
		tap.Env, tap.Stdin = env, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
		if out, err := tap.CombinedOutput(); err != nil {
			t.Fatalf("env -i %v rpctap run: %v\n%s", env, err, out)
		}
	}
	bare, _ := filepath.Glob(filepath.Join(tapTmp, fmt.Sprintf("rpctap-%d", os.Getuid()), "sessions", "*-"+name+"-bare.jsonl"))
	bareTmp, _ := filepath.Glob(filepath.Join("/tmp", fmt.Sprintf("rpctap-%d", os.Getuid()), "sessions", "*-"+name+"-bare.jsonl"))
	if len(bare) != 1 || len(bareTmp) != 1 {
		t.Fatalf("the taps with an empty environment recorded %q under their TMPDIR and %q under /tmp", bare, bareTmp)
	}
	t.Cleanup(func() { os.Remove(bareTmp[0]) })
	want := []string{recorded[0], bare[0], bareTmp[0]}
	for what, env := range map[string][]string{
		"the user's shell":                  append(os.Environ(), "XDG_STATE_HOME="+userState, "HOME="+userHome),
		"the user's shell with a TMPDIR":    append(os.Environ(), "XDG_STATE_HOME="+userState, "HOME="+userHome, "TMPDIR="+t.TempDir()),
		"an empty environment":              {},
		"another XDG_STATE_HOME":            {"XDG_STATE_HOME=" + t.TempDir()},
		"the tap's own HOME only":           {"HOME=" + tapHome},
		"the bare tap's TMPDIR and no HOME": {"TMPDIR=" + tapTmp},
	} {
		paths := lsSessionPaths(t, env)
		for _, w := range want {
			if !slices.Contains(paths, w) {
				t.Errorf("rpctap ls from %s does not list %s; it lists %q", what, w, paths)
			}
		}
	}
	// A session file that is gone is no longer listed.
	os.Remove(recorded[0])
	if paths := lsSessionPaths(t, nil); slices.Contains(paths, recorded[0]) {
		t.Errorf("rpctap ls still lists %s after it was removed", recorded[0])
	}
}
