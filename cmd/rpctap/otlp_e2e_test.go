package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/tap/otlp/otlptest"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// End to end: rpctap run --otlp-endpoint between a host (this test) and the
// real server-everything sends a span per answered request to an OTLP/HTTP
// collector, each a child of the span its request's _meta.traceparent
// names, with the answer's error code.
func TestRunSendsASpanPerAnsweredRequestToTheCollector(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	bin := rpctapBinary(t)
	col := otlptest.NewCollector(t)
	tp := func(span string) string { return "00-0af7651916cd43dd8448eb211c80319c-" + span + "-01" }
	cmd := exec.Command(bin, "run", "--no-listen", "--record", filepath.Join(t.TempDir(), "s.jsonl"), "--verbose",
		"--otlp-endpoint", col.URL, "--otlp-header", "x-tenant=rpctap", "--", server, "stdio")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// ask sends a request and waits for its answer.
	ask := func(id int, body string) {
		t.Helper()
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,%s}`+"\n", id, body)
		want := fmt.Sprintf(`"id":%d`, id)
		deadline := time.After(60 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the server's output ended before the answer to %d:\n%s", id, stderr.Bytes())
				}
				if strings.Contains(l, want) && !strings.Contains(l, `"method"`) {
					return
				}
			case <-deadline:
				t.Fatalf("no answer to request %d", id)
			}
		}
	}
	ask(1, `"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"otlp-test","version":"1"},"_meta":{"traceparent":"`+tp("1111111111111111")+`"}}`)
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	ask(2, `"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"traceparent":"`+tp("2222222222222222")+`","progressToken":"p"}}`)
	ask(3, `"method":"no/such/method","params":{}`)
	ask(4, `"method":"ping"`)
	stdin.Close()
	go func() {
		for range lines {
		}
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("rpctap run: %v\n%s", err, stderr.Bytes())
	}
	spans, res := col.Spans()
	byName := map[string]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	for _, name := range []string{"initialize", "tools/call", "no/such/method", "ping"} {
		s := byName[name]
		if s == nil {
			t.Fatalf("no span for %s; got %d spans; rpctap said:\n%s", name, len(spans), stderr.Bytes())
		}
		a := otlptest.Attrs(s.Attributes)
		if a["rpc.system"] != "jsonrpc" || a["rpc.method"] != name || a["rpctap.direction"] != "h2s" || a["rpc.jsonrpc.request_id"] == "" {
			t.Errorf("%s: attributes %v", name, a)
		}
	}
	for name, parent := range map[string]string{"initialize": "1111111111111111", "tools/call": "2222222222222222"} {
		s := byName[name]
		if hex.EncodeToString(s.TraceId) != "0af7651916cd43dd8448eb211c80319c" || hex.EncodeToString(s.ParentSpanId) != parent {
			t.Errorf("%s: trace %x parent %x, want the child of %s in the host's trace", name, s.TraceId, s.ParentSpanId, parent)
		}
	}
	if len(byName["ping"].ParentSpanId) != 0 {
		t.Errorf("ping carried no traceparent, but its span has a parent")
	}
	if a := otlptest.Attrs(byName["no/such/method"].Attributes); a["rpc.jsonrpc.error_code"] != "int:-32601" {
		t.Errorf("an unknown method's span: %v, want error code -32601", a)
	}
	if res["service.name"] != "mcp-server-everything" {
		t.Errorf("service.name %q", res["service.name"])
	}
	if h := col.Headers(); len(h) == 0 || h[0].Get("x-tenant") != "rpctap" {
		t.Errorf("the --otlp-header did not reach the collector")
	}
	if !strings.Contains(stderr.String(), "OTLP: 4 spans sent, 0 dropped") && !strings.Contains(stderr.String(), "spans sent, 0 dropped") {
		t.Errorf("--verbose does not say how the export went:\n%s", stderr.Bytes())
	}
}
