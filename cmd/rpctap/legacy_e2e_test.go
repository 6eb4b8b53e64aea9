package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

// The legacy HTTP+SSE transport (MCP 2024-11-05) between real peers:
// server-everything's sse mode and the inspector CLI with --transport sse.
func TestInspectorOverLegacySSEThroughTheHTTPTapMatchesDirectAndEveryMessageIsRecorded(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	port := freePort(t)
	srv := exec.Command(server, "sse")
	srv.Env = append(os.Environ(), "PORT="+port)
	startLine(t, srv, "running on port")
	target := "http://127.0.0.1:" + port + "/sse"

	dir := t.TempDir()
	record := filepath.Join(dir, "s.jsonl")
	tp := exec.Command(bin, "http", "--target", target, "--record", record, "--no-listen")
	given := startLine(t, tp, "http://")
	if !strings.HasSuffix(given, "/sse") {
		t.Fatalf("rpctap http printed %q, want the loopback URL with the target's path", given)
	}
	calls := [][]string{
		{"--method", "tools/list"},
		{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"},
		{"--method", "resources/read", "--uri", "demo://resource/static/document/architecture.md"},
		{"--method", "prompts/get", "--prompt-name", "simple-prompt"},
	}
	for _, call := range calls {
		args := func(url string) []string {
			return append([]string{"--cli", "--transport", "sse", "--server-url", url}, call...)
		}
		direct, _ := timed(t, dir, inspector, args(target)...)
		tapped, _ := timed(t, dir, inspector, args(given)...)
		if !bytes.Equal(direct, tapped) || len(direct) == 0 || bytes.Contains(direct, []byte(`"isError": true`)) {
			t.Errorf("%v: the host's output differs through the tap:\n direct %.300s\n tapped %.300s", call, direct, tapped)
		}
	}
	tp.Process.Signal(syscall.SIGINT)
	if err := tp.Wait(); err != nil {
		t.Fatalf("rpctap http ended with %v on SIGINT, want status 0", err)
	}

	h, evs := readFrames(t, record)
	// Each host's GET stream began with its endpoint, recorded; each
	// request it POSTed there is answered on the stream.
	var endpoints int
	requests, answered := map[string]bool{}, map[string]bool{}
	streams := map[int64]string{} // a GET's exchange: its endpoint, the POSTs' path
	for _, ev := range evs {
		var x struct {
			httpObject
			Event    string `json:"event"`
			Endpoint string `json:"endpoint"`
		}
		if err := json.Unmarshal(ev.HTTP, &x); err != nil {
			t.Fatalf("line %d: http object %q: %v", ev.Line, ev.HTTP, err)
		}
		if x.Event == "endpoint" {
			endpoints++
			streams[x.Exchange] = x.Endpoint
		}
		m := h.Classify(ev.Frame, ev.Dir, classify.MCP)
		switch {
		case m.Kind == classify.KindRequest && ev.Dir == classify.H2S:
			if x.Method != "POST" || !strings.HasPrefix(x.Path, "/message?sessionId=") {
				t.Errorf("line %d: a request came in %s %s, want a POST to the endpoint", ev.Line, x.Method, x.Path)
			}
			requests[x.Path+" "+m.ID().String()] = true
		case m.Kind == classify.KindResponse && ev.Dir == classify.S2H:
			if x.Method != "GET" || streams[x.Exchange] == "" {
				t.Errorf("line %d: an answer came in %s %s, want the GET stream", ev.Line, x.Method, x.Path)
			}
			answered[streams[x.Exchange]+" "+m.ID().String()] = true
		}
	}
	if endpoints != len(calls) || len(requests) < 3*len(calls) {
		t.Errorf("the session holds %d endpoint events and %d requests; %d calls through the tap make %[3]d and at least %d", endpoints, len(requests), len(calls), 3*len(calls))
	}
	for k := range requests {
		if !answered[k] {
			t.Errorf("request %s is in the session without its answer on its stream", k)
		}
	}
	checkSessionHasNoErrors(t, record)
	if out, err := exec.Command(bin, "tail", record).CombinedOutput(); err != nil || !bytes.Contains(out, []byte("endpoint=/message?sessionId=")) {
		t.Errorf("rpctap tail of the session: %v\n%.1000s", err, out)
	}
}

// absoluteEndpoint relays a response body, writing the legacy endpoint
// event's path as an absolute URL at base, as some servers send it.
type absoluteEndpoint struct {
	io.ReadCloser
	base string
}

func (a *absoluteEndpoint) Read(p []byte) (int, error) {
	b := make([]byte, len(p)/2)
	n, err := a.ReadCloser.Read(b)
	out := bytes.Replace(b[:n], []byte("data: /message?"), []byte("data: "+a.base+"/message?"), 1)
	return copy(p, out), err
}

// A legacy server whose endpoint event is an absolute URL (here
// server-everything's sse mode behind a front that writes it so): the
// inspector given rpctap's URL gets an endpoint at rpctap, so its POSTs
// cross the tap (they would go straight to the server otherwise), its
// output is the same as directly, and the record says what the endpoint
// was and what it became.
func TestAnAbsoluteLegacyEndpointIsRewrittenSoTheInspectorsPOSTsCrossTheTap(t *testing.T) {
	inspector := needPeer(t, "node_modules/.bin/inspector")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	port := freePort(t)
	srv := exec.Command(server, "sse")
	srv.Env = append(os.Environ(), "PORT="+port)
	startLine(t, srv, "running on port")
	back, _ := url.Parse("http://127.0.0.1:" + port)
	front := httptest.NewUnstartedServer(nil)
	rp := httputil.NewSingleHostReverseProxy(back)
	rp.FlushInterval = -1
	rp.ModifyResponse = func(r *http.Response) error {
		if r.Request.Method == http.MethodGet {
			r.Body = &absoluteEndpoint{r.Body, "http://" + front.Listener.Addr().String()}
		}
		return nil
	}
	front.Config.Handler = rp
	front.Start()
	defer front.Close()
	target := front.URL + "/sse"

	dir := t.TempDir()
	record := filepath.Join(dir, "s.jsonl")
	tp := exec.Command(bin, "http", "--target", target, "--record", record, "--no-listen")
	given := startLine(t, tp, "http://")
	call := func(u string) []byte {
		out, _ := timed(t, dir, inspector, "--cli", "--transport", "sse", "--server-url", u, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi")
		return out
	}
	direct, tapped := call(target), call(given)
	if !bytes.Equal(direct, tapped) || !bytes.Contains(direct, []byte("Echo: hi")) {
		t.Errorf("the host's output differs through the tap:\n direct %.300s\n tapped %.300s", direct, tapped)
	}
	tp.Process.Signal(syscall.SIGINT)
	tp.Wait()
	h, evs := readFrames(t, record)
	var rewrites, calls int
	for _, ev := range evs {
		var x struct {
			Endpoint string `json:"endpoint"`
			From     string `json:"rewritten_from"`
		}
		json.Unmarshal(ev.HTTP, &x)
		if x.From != "" {
			rewrites++
			given, _ := url.Parse(given)
			if !strings.HasPrefix(x.From, front.URL+"/message?sessionId=") || x.Endpoint != "http://"+given.Host+strings.TrimPrefix(x.From, front.URL) {
				t.Errorf("the endpoint %s was recorded rewritten to %s, want the same at rpctap (%s)", x.From, x.Endpoint, given.Host)
			}
		}
		if m := h.Classify(ev.Frame, ev.Dir, classify.MCP); m.Kind == classify.KindRequest && m.Method() == "tools/call" {
			calls++
		}
	}
	if rewrites != 1 || calls != 1 {
		t.Errorf("the session holds %d endpoint rewrites and %d tools/call requests, want 1 and 1", rewrites, calls)
	}
	checkSessionHasNoErrors(t, record)
}
