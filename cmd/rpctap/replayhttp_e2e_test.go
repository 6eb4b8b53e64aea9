package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpctap/rpctap/sessions"
)

// startEverythingHTTP starts server-everything in streamableHttp mode
// on a free port, and returns its URL.
func startEverythingHTTP(t *testing.T) string {
	t.Helper()
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	port := freePort(t)
	srv := exec.Command(server, "streamableHttp")
	srv.Env = append(os.Environ(), "PORT="+port)
	startLine(t, srv, "listening on port")
	return "http://127.0.0.1:" + port + "/mcp"
}

// recordThroughHTTPTap starts rpctap http in front of target, recording
// to record, and returns the URL to give the host; stop ends it.
func recordThroughHTTPTap(t *testing.T, bin, target, record string) (given string, stop func()) {
	t.Helper()
	tp := exec.Command(bin, "http", "--target", target, "--record", record, "--no-listen")
	given = startLine(t, tp, "http://")
	return given, func() {
		tp.Process.Signal(syscall.SIGINT)
		if err := tp.Wait(); err != nil {
			t.Fatalf("rpctap http ended with %v on SIGINT, want status 0", err)
		}
	}
}

// serveOverHTTP starts rpctap replay --as-server record --http on a free
// loopback port, recording the replay to own, and returns the URL it
// printed; stop ends it with SIGINT and wants status 0.
func serveOverHTTP(t *testing.T, bin, record, own string) (url string, stop func()) {
	t.Helper()
	rp := exec.Command(bin, "replay", "--as-server", record, "--http", "127.0.0.1:0", "--record", own)
	url = startLine(t, rp, "http://")
	return url, func() {
		rp.Process.Signal(syscall.SIGINT)
		if err := rp.Wait(); err != nil {
			t.Fatalf("rpctap replay --http ended with %v on SIGINT, want status 0", err)
		}
	}
}

// replayedHTTP reads the replay's own session file: it must say it is
// an HTTP session, give every frame its http object, and break no rule.
// It returns how many frames each HTTP method and status have.
func replayedHTTP(t *testing.T, own string) map[string]int {
	t.Helper()
	h, evs := readFrames(t, own)
	if h.Transport != sessions.TransportHTTP {
		t.Errorf("the replay's session says transport %q, want http", h.Transport)
	}
	seen := map[string]int{}
	for _, ev := range evs {
		var x httpObject
		if err := json.Unmarshal(ev.HTTP, &x); err != nil {
			t.Fatalf("line %d of the replay's session: http object %q: %v", ev.Line, ev.HTTP, err)
		}
		seen[x.Method]++
		if x.Status != 0 {
			seen[x.Method+" "+strconv.Itoa(x.Status)]++
		}
	}
	checkSessionHasNoErrors(t, own)
	return seen
}

// hostReplayAllSame runs replay --as-host record --target target and
// wants every recorded request answered the same.
func hostReplayAllSame(t *testing.T, bin, record, target string) {
	t.Helper()
	cmd := exec.Command(bin, "replay", "--as-host", record, "--target", target, "--json", "--exit-code", "--no-record")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("replay --as-host --target: %v\n%s\n%s", err, out, errb.Bytes())
	}
	var doc struct {
		Counts map[string]int `json:"counts"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("replay --as-host --json: %v\n%s", err, out)
	}
	if doc.Counts["same"] == 0 || doc.Counts["changed"]+doc.Counts["missing"]+doc.Counts["new_error"] > 0 {
		t.Errorf("replay --as-host against the live server: %v, want all same\n%s", doc.Counts, out)
	}
}

func TestReplayOverHTTPGivesTheInspectorTheRecordedOutputAndPlaysItsHostAgainstTheLiveServer(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	target := startEverythingHTTP(t)
	bin := rpctapBinary(t)

	dir := t.TempDir()
	record := filepath.Join(dir, "s.jsonl")
	given, stopTap := recordThroughHTTPTap(t, bin, target, record)
	calls := [][]string{
		{"--method", "tools/list"},
		{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"},
		{"--method", "resources/read", "--uri", "demo://resource/static/document/architecture.md"},
		{"--method", "prompts/get", "--prompt-name", "simple-prompt"},
	}
	args := func(url string, call []string) []string {
		return append([]string{"--cli", "--transport", "http", "--server-url", url}, call...)
	}
	var recorded [][]byte
	for _, call := range calls {
		out, _ := timed(t, dir, inspector, args(given, call)...)
		recorded = append(recorded, out)
	}
	stopTap()

	own := filepath.Join(dir, "replay.jsonl")
	url, stopReplay := serveOverHTTP(t, bin, record, own)
	if !strings.HasSuffix(url, "/mcp") {
		t.Errorf("replay printed %q, want a URL with the recorded path /mcp", url)
	}
	for i, call := range calls {
		out, _ := timed(t, dir, inspector, args(url, call)...)
		if !bytes.Equal(out, recorded[i]) || len(out) == 0 {
			t.Errorf("%v: the inspector's output from the replay differs from the recorded run's:\n recorded %.300s\n replayed %.300s", call, recorded[i], out)
		}
	}
	stopReplay()
	// Each inspector run is a session of its own: a handshake answered
	// with the recorded event stream, a 202 for its notification, and its
	// GET stream.
	seen := replayedHTTP(t, own)
	if seen["POST 200"] < 3*len(calls) || seen["POST 202"] < len(calls) || seen["GET 200"] < len(calls) {
		t.Errorf("the replay's session holds %v; want each run's handshake, 202 and GET stream", seen)
	}

	hostReplayAllSame(t, bin, record, target)
}

func TestReplayOverHTTPGivesTheGoSDKClientTheRecordedOutputAndPlaysItsHostAgainstTheLiveServer(t *testing.T) {
	server := needPeer(t, "bin/server")
	client := needPeer(t, "bin/client")
	bin := rpctapBinary(t)
	srv := exec.Command(server, "-http", "127.0.0.1:0", "-mrtr")
	line := startLine(t, srv, "listening on ")
	target := line[strings.Index(line, "http://"):]

	// Two sessions: the default calls, and a call whose server asks the
	// host for input (over HTTP the SDK asks with elicitation/create on
	// the call's event stream, which the host answers in a POST of its
	// own).
	runs := [][]string{nil, {"-accept-elicitation", "-call", `confirm={"action":"deploy"}`}}
	dir := t.TempDir()
	record := filepath.Join(dir, "s.jsonl")
	given, stopTap := recordThroughHTTPTap(t, bin, target, record)
	var recorded [][]byte
	for _, run := range runs {
		out, _ := timed(t, dir, client, append([]string{"-http", given}, run...)...)
		recorded = append(recorded, out)
	}
	stopTap()

	own := filepath.Join(dir, "replay.jsonl")
	url, stopReplay := serveOverHTTP(t, bin, record, own)
	for i, run := range runs {
		replayed, _ := timed(t, dir, client, append([]string{"-http", url}, run...)...)
		if !bytes.Equal(replayed, recorded[i]) || !bytes.Contains(recorded[i], []byte(`"tools/call"`)) {
			t.Errorf("%v: the Go client's output from the replay differs from the recorded run's:\n recorded %.400s\n replayed %.400s", run, recorded[i], replayed)
		}
	}
	if !bytes.Contains(recorded[1], []byte(`"elicitation"`)) || !bytes.Contains(recorded[1], []byte("confirmed deploy")) {
		t.Errorf("the confirm call's output %q lacks the elicitation and its confirmed answer", recorded[1])
	}
	stopReplay()
	// The client's GET stream and its DELETE are answered as recorded.
	if seen := replayedHTTP(t, own); seen["GET 200"] == 0 || seen["DELETE 204"] == 0 {
		t.Errorf("the replay's session holds %v; want the GET stream and the DELETE's recorded 204", seen)
	}

	hostReplayAllSame(t, bin, record, target)
}

func TestReplayOverHTTPServesAStdioRecordingAsTheStdioReplayDoes(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	bin := rpctapBinary(t)
	dir := t.TempDir()
	record, _ := filepath.Abs("../../testdata/sessions/real/inspector-everything-tools-call.jsonl")
	call := []string{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"}
	stdio, _ := timed(t, dir, inspector, append([]string{"--cli", bin, "replay", "--as-server", record, "--no-record", "--"}, call...)...)
	url, stop := serveOverHTTP(t, bin, record, filepath.Join(dir, "replay.jsonl"))
	overHTTP, _ := timed(t, dir, inspector, append([]string{"--cli", "--transport", "http", "--server-url", url}, call...)...)
	stop()
	if !bytes.Equal(stdio, overHTTP) || !bytes.Contains(stdio, []byte("Echo: hi")) {
		t.Errorf("the inspector's output differs over HTTP:\n stdio %.300s\n http  %.300s", stdio, overHTTP)
	}
}

func TestReplayOverHTTPRefusesAnLSPRecordingAndAnAddressInUseWithASentence(t *testing.T) {
	bin := rpctapBinary(t)
	gopls, _ := filepath.Abs("../../testdata/sessions/real/gopls.jsonl")
	mcp, _ := filepath.Abs("../../testdata/sessions/real/inspector-everything-tools-list.jsonl")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--as-server", gopls, "--http", "127.0.0.1:0"}, 2, "the recording is of an LSP session, which has no HTTP transport: replay it on stdio"},
		{[]string{"--as-host", gopls, "--target", "http://127.0.0.1:1/mcp"}, 2, "the recording is of an LSP session, which has no HTTP transport"},
		{[]string{"--as-server", mcp, "--http", ln.Addr().String()}, 1, "cannot listen on " + ln.Addr().String() + ": another program listens there already"},
		{[]string{"--as-server", mcp, "--http", "8080"}, 2, `--http "8080" is not HOST:PORT`},
		{[]string{"--as-host", mcp, "--http", "127.0.0.1:0"}, 2, "--http serves a recording: give it with --as-server FILE"},
		{[]string{"--as-server", mcp, "--target", "http://127.0.0.1:1/mcp"}, 2, "--target names the server a recorded host is played against"},
		{[]string{"--as-host", mcp, "--target", "ftp://x"}, 2, "is not an http or https URL"},
	} {
		// A replay that took the input would serve until stopped.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, bin, append([]string{"replay"}, c.args...)...)
		out, err := cmd.CombinedOutput()
		cancel()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != c.code || !strings.Contains(string(out), c.want) {
			t.Errorf("replay %v: status %d, %q; want status %d saying %q", c.args, code, out, c.code, c.want)
		}
	}
}
