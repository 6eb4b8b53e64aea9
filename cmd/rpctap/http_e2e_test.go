package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// freePort is a loopback port no one listens on (as far as one can tell).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// startLine starts cmd and returns the first line of its output (stdout
// and stderr) that has want, with cmd still running (it is stopped at the
// test's end).
func startLine(t *testing.T, cmd *exec.Cmd, want string) string {
	t.Helper()
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), want) {
				lines <- sc.Text()
				break
			}
			errb.WriteString(sc.Text() + "\n")
		}
		close(lines)
		io.Copy(io.Discard, out)
	}()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatalf("%s ended before it said %q:\n%s", cmd.Path, want, errb.Bytes())
		}
		return l
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not say %q within 30 s:\n%s", cmd.Path, want, errb.Bytes())
	}
	return ""
}

// readFrames reads a session file's header and frame records, copied.
func readFrames(t *testing.T, path string) (sessions.Header, []sessions.Event) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := sessions.NewReader(f)
	var evs []sessions.Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.IsFrame() {
			e := *ev
			e.Frame, e.Original, e.HTTP = bytes.Clone(ev.Frame), bytes.Clone(ev.Original), bytes.Clone(ev.HTTP)
			evs = append(evs, e)
		}
	}
	h, _ := r.Header()
	return h, evs
}

func TestInspectorOverHTTPThroughTheHTTPTapMatchesDirectAndEveryMessageIsRecorded(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	target := startEverythingHTTP(t)
	bin := rpctapBinary(t)

	dir := t.TempDir()
	record := filepath.Join(dir, "s.jsonl")
	tp := exec.Command(bin, "http", "--target", target, "--record", record, "--no-listen")
	given := startLine(t, tp, "http://")
	if !strings.HasPrefix(given, "http://127.0.0.1:") || !strings.HasSuffix(given, "/mcp") {
		t.Fatalf("rpctap http printed %q, want the loopback URL with the target's path", given)
	}
	calls := [][]string{
		{"--method", "tools/list"},
		{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"},
		{"--method", "resources/list"},
		{"--method", "prompts/list"},
	}
	for _, call := range calls {
		args := func(url string) []string {
			return append([]string{"--cli", "--transport", "http", "--server-url", url}, call...)
		}
		direct, _ := timed(t, dir, inspector, args(target)...)
		tapped, _ := timed(t, dir, inspector, args(given)...)
		if !bytes.Equal(direct, tapped) || len(direct) == 0 {
			t.Errorf("%v: the host's output differs through the tap:\n direct %.300s\n tapped %.300s", call, direct, tapped)
		}
	}
	tp.Process.Signal(syscall.SIGINT)
	if err := tp.Wait(); err != nil {
		t.Fatalf("rpctap http ended with %v on SIGINT, want status 0", err)
	}

	h, evs := readFrames(t, record)
	if h.Transport != sessions.TransportHTTP {
		t.Errorf("the header says transport %q, want http", h.Transport)
	}
	// Every request the host sent is in the session with its answer,
	// each of the four calls a handshake and the call.
	requests, answered := map[string]bool{}, map[string]bool{}
	exchanges := map[string]bool{}
	for _, ev := range evs {
		if ev.HTTP == nil {
			t.Errorf("line %d has no http object", ev.Line)
		}
		m := h.Classify(ev.Frame, ev.Dir, classify.MCP)
		x := string(ev.HTTP[:bytes.IndexByte(ev.HTTP, ',')+1])
		switch {
		case m.Kind == classify.KindRequest && ev.Dir == classify.H2S:
			requests[x+m.ID().String()] = true
			exchanges[x] = true
		case m.Kind == classify.KindResponse && ev.Dir == classify.S2H:
			answered[x+m.ID().String()] = true
		}
	}
	if len(requests) < 3*len(calls) {
		t.Errorf("the session holds %d requests; %d calls make at least %d", len(requests), len(calls), 3*len(calls))
	}
	for k := range requests {
		if !answered[k] {
			t.Errorf("request %s is in the session without its answer", k)
		}
	}
	doc := checkSessionHasNoErrors(t, record)
	if doc.Frames != len(evs) {
		t.Errorf("rpctap check judged %d frames; the file holds %d", doc.Frames, len(evs))
	}
	if out, err := exec.Command(bin, "tail", record).CombinedOutput(); err != nil || !bytes.Contains(out, []byte("tools/call")) || !bytes.Contains(out, []byte("Echo: hi")) || !bytes.Contains(out, []byte("http=POST /mcp 202")) {
		t.Errorf("rpctap tail of the session: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "tail", "--json", record).CombinedOutput(); err != nil || !bytes.Contains(out, []byte(`"http":{"content_type":"application/json","exchange":1,`)) {
		t.Errorf("rpctap tail --json of the session: %v\n%.500s", err, out)
	}
	if out, err := exec.Command(bin, "export", "--format", "json", record).CombinedOutput(); err != nil || !bytes.Contains(out, []byte(`"tools/call"`)) {
		t.Errorf("rpctap export of the session: %v\n%.500s", err, out)
	}
	t.Logf("%d frames, %d requests in %d exchanges", len(evs), len(requests), len(exchanges))
}

func TestGoSDKPairOverHTTPThroughTheHTTPTapMatchesDirectAndEveryMessageIsRecorded(t *testing.T) {
	bin := rpctapBinary(t)
	// The SDK's test programs, with their -http mode, built from source
	// (.ci/peers builds the same into testdata/peers/bin).
	gb := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-o", gb+"/", "./server", "./client")
	build.Dir, build.Env = filepath.Join(peers, "gosdk"), append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("cannot build the Go SDK's test programs: %v\n%s", err, out)
	}
	srv := exec.Command(filepath.Join(gb, "server"), "-http", "127.0.0.1:0")
	line := startLine(t, srv, "listening on ")
	target := line[strings.Index(line, "http://"):]

	dir := t.TempDir()
	record := filepath.Join(dir, "s.jsonl")
	tp := exec.Command(bin, "http", "--target", target, "--record", record, "--no-listen")
	given := startLine(t, tp, "http://")
	client := filepath.Join(gb, "client")
	direct, _ := timed(t, dir, client, "-http", target)
	tapped, _ := timed(t, dir, client, "-http", given)
	if !bytes.Equal(direct, tapped) || !bytes.Contains(direct, []byte(`"tools/call"`)) {
		t.Errorf("the Go client's output differs through the tap:\n direct %.400s\n tapped %.400s", direct, tapped)
	}
	tp.Process.Signal(syscall.SIGINT)
	if err := tp.Wait(); err != nil {
		t.Fatalf("rpctap http ended with %v on SIGINT, want status 0", err)
	}
	h, evs := readFrames(t, record)
	methods := map[string]int{}
	var requests, answers int
	for _, ev := range evs {
		m := h.Classify(ev.Frame, ev.Dir, classify.MCP)
		switch {
		case m.Kind == classify.KindRequest:
			requests++
		case m.Kind == classify.KindResponse:
			answers++
		}
		var x httpObject
		if err := json.Unmarshal(ev.HTTP, &x); err != nil {
			t.Fatalf("line %d: http object %q: %v", ev.Line, ev.HTTP, err)
		}
		methods[x.Method]++
	}
	// The client's requests (tools/list, two calls, a handshake), each
	// answered, and its session's GET stream and DELETE.
	if requests < 4 || answers != requests || methods["GET"] == 0 || methods["DELETE"] == 0 {
		t.Errorf("the session holds %d requests, %d answers, HTTP methods %v", requests, answers, methods)
	}
	checkSessionHasNoErrors(t, record)
}

// httpObject is a record's http object, as docs/session-format.md says.
type httpObject struct {
	Exchange int64             `json:"exchange"`
	Method   string            `json:"method"`
	Path     string            `json:"path"`
	Status   int               `json:"status"`
	Headers  map[string]string `json:"headers"`
}
