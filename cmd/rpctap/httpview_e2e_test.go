package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/tap/otlp/otlptest"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// inspectorCalls are the inspector CLI's runs the HTTP tests make: a
// listing, a tool call and a resource read, each with its handshake.
var inspectorCalls = [][]string{
	{"--method", "tools/list"},
	{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi"},
	{"--method", "resources/read", "--uri", "demo://resource/static/document/architecture.md"},
}

// End to end, the inspector CLI through rpctap http --otlp-endpoint with
// server-everything (streamableHttp): each span the collector gets
// carries what HTTP did (http.request.method, url.path,
// http.response.status_code) beside the JSON-RPC attributes, and so does
// each span of export --format otlp of the recording. Its HAR has an
// entry per HTTP exchange with the real request and response, and
// validates against HAR 1.2; its Markdown says what HTTP did on each
// frame.
func TestAnHTTPTapsSpansAndExportsCarryTheHTTPExchanges(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(dir, "http.jsonl")
	col := otlptest.NewCollector(t)
	recordInspectorOverHTTP(t, startEverythingHTTP(t), record, []string{"--otlp-endpoint", col.URL}, nil, inspectorCalls...)
	bin := rpctapBinary(t)

	spans, _ := col.Spans()
	if len(spans) < 3*len(inspectorCalls) {
		t.Fatalf("the collector got %d spans; %d runs make at least %d", len(spans), len(inspectorCalls), 3*len(inspectorCalls))
	}
	for _, s := range spans {
		// A host's call is answered in the response to its POST; the
		// host's answer to a server's request (roots/list) goes in a
		// POST of its own, and has no status.
		a := otlptest.Attrs(s.Attributes)
		status := "int:200"
		if a["rpctap.direction"] == "s2h" {
			status = ""
		}
		if a["rpc.system"] != "jsonrpc" || a["http.request.method"] != "POST" || a["url.path"] != "/mcp" || a["http.response.status_code"] != status {
			t.Errorf("span %s: attributes %v, want the HTTP exchange's (POST /mcp, status %q) beside the JSON-RPC ones", s.Name, a, status)
		}
	}

	out, err := exec.Command(bin, "export", "--format", "otlp", record).Output()
	if err != nil {
		t.Fatalf("export --format otlp: %v", err)
	}
	n := 0
	for _, m := range regexp.MustCompile(`"name":"[^"]*","kind":3.*?"attributes":\[(.*?)\]`).FindAllSubmatch(out, -1) {
		n++
		want := []string{`{"key":"http.request.method","value":{"stringValue":"POST"}}`, `{"key":"url.path","value":{"stringValue":"/mcp"}}`,
			`{"key":"http.response.status_code","value":{"intValue":"200"}}`}
		if bytes.Contains(m[1], []byte(`"rpctap.direction","value":{"stringValue":"s2h"}`)) {
			// A server's request: POST when the host's answer is in
			// the file, else the GET stream it came in.
			want = []string{`{"key":"http.request.method","value":{"stringValue":"`, want[1]}
		}
		for _, w := range want {
			if !bytes.Contains(m[1], []byte(w)) {
				t.Errorf("an exported span's attributes lack %s: %s", w, m[1])
			}
		}
	}
	if n < len(spans) {
		t.Errorf("the OTLP export has %d spans, the collector got %d", n, len(spans))
	}

	out, err = exec.Command(bin, "export", "--format", "har", record).Output()
	if err != nil {
		t.Fatalf("export --format har: %v", err)
	}
	sch, err := jsonschema.NewCompiler().Compile("../../testdata/export/har-1.2.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(out)); err != nil {
		t.Fatalf("the HAR is not JSON: %v", err)
	} else if err := sch.Validate(doc); err != nil {
		t.Errorf("the HAR does not validate against HAR 1.2: %v", err)
	}
	var har struct {
		Log struct {
			Entries []struct {
				Request struct {
					Method, URL string
					PostData    *struct{ Text string }
				}
				Response struct {
					Status  int
					Content struct{ MimeType, Text string }
				}
				Rpctap struct {
					Exchange int64
					Methods  []string
				} `json:"_rpctap"`
			}
		}
	}
	if err := json.Unmarshal(out, &har); err != nil {
		t.Fatal(err)
	}
	exchanges := map[int64]bool{}
	var calls, accepted int
	for _, e := range har.Log.Entries {
		if exchanges[e.Rpctap.Exchange] {
			t.Errorf("exchange %d has two entries", e.Rpctap.Exchange)
		}
		exchanges[e.Rpctap.Exchange] = true
		if !strings.HasPrefix(e.Request.URL, "http://127.0.0.1:") || !strings.HasSuffix(e.Request.URL, "/mcp") {
			t.Errorf("exchange %d's URL is %q, want the target's", e.Rpctap.Exchange, e.Request.URL)
		}
		switch {
		case len(e.Rpctap.Methods) == 1 && e.Rpctap.Methods[0] == "tools/call":
			calls++
			if e.Request.PostData == nil || !strings.Contains(e.Request.PostData.Text, `"message":"hi"`) || e.Response.Status != 200 ||
				e.Response.Content.MimeType != "text/event-stream" || !strings.Contains(e.Response.Content.Text, "\ndata: {") || !strings.Contains(e.Response.Content.Text, "Echo: hi") {
				t.Errorf("the tools/call exchange: %+v", e)
			}
		case len(e.Rpctap.Methods) == 1 && e.Rpctap.Methods[0] == "notifications/initialized":
			accepted++
			if e.Response.Status != 202 {
				t.Errorf("notifications/initialized was answered %d, want 202", e.Response.Status)
			}
		}
	}
	if calls != 1 || accepted != len(inspectorCalls) {
		t.Errorf("the HAR holds %d tools/call exchanges and %d initialized notifications, want 1 and %d", calls, accepted, len(inspectorCalls))
	}

	// tail says what HTTP did once on a frame of kind http, in its http=
	// words; tail --json gives such a frame no method.
	out, err = exec.Command(bin, "tail", record).Output()
	if !regexp.MustCompile(`← http +http=POST /mcp 202  \n`).Match(out) || bytes.Contains(out, []byte("HTTP 202")) {
		t.Errorf("rpctap tail of a 202 (%v):\n%s", err, out)
	}
	out, _ = exec.Command(bin, "tail", "--json", record).Output()
	for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var rec struct{ Kind, Method string }
		if json.Unmarshal(l, &rec) == nil && rec.Kind == "http" && rec.Method != "" {
			t.Errorf("rpctap tail --json gives a frame of kind http the method %q: %s", rec.Method, l)
			break
		}
	}

	out, err = exec.Command(bin, "export", "--format", "markdown", record).Output()
	if err != nil || !bytes.Contains(out, []byte("· http `HTTP 202` · HTTP `POST /mcp 202`")) || !bytes.Contains(out, []byte("· HTTP `POST /mcp 200 text/event-stream id=")) {
		t.Errorf("export --format markdown does not show the HTTP lines: %v\n%.2000s", err, out)
	}
}

// The same inspector CLI runs, twice through rpctap http in front of
// server-everything: rpctap diff of the two sessions finds no
// difference in HTTP (their exchange numbers, session ids, event ids and
// times all differ) and no regression. A status changed in B (the
// tools/call's exchange answered 500) is a difference, and a regression.
func TestDiffOfTheSameInspectorRunsThroughTheHTTPTapTellsOnlyAChangedStatus(t *testing.T) {
	dir := t.TempDir()
	target := startEverythingHTTP(t)
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	recordInspectorOverHTTP(t, target, a, nil, nil, inspectorCalls...)
	recordInspectorOverHTTP(t, target, b, nil, nil, inspectorCalls...)
	bin := rpctapBinary(t)
	type report struct {
		Regressions int
		Differences []struct {
			Kind, Name, Detail string
			Regression         bool
		}
	}
	diff := func(b string) report {
		t.Helper()
		out, err := exec.Command(bin, "diff", "--json", a, b).Output()
		var r report
		if jerr := json.Unmarshal(out, &r); err != nil || jerr != nil {
			t.Fatalf("rpctap diff --json: %v %v\n%s", err, jerr, out)
		}
		return r
	}
	r := diff(b)
	for _, d := range r.Differences {
		// server-everything sends log messages and asks for roots on its
		// own time: a method one run saw and not the other is its doing.
		if d.Kind != "method added" && d.Kind != "method removed" {
			t.Errorf("the same runs differ: %s %s: %s", d.Kind, d.Name, d.Detail)
		}
	}
	if r.Regressions != 0 {
		t.Errorf("%d regressions between the same runs", r.Regressions)
	}

	// B's tools/call exchange answered 500.
	data, err := os.ReadFile(b)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(data, []byte("\n"))
	exchange := regexp.MustCompile(`"http":\{"exchange":(\d+),`)
	var callExchange []byte
	for _, l := range lines {
		if bytes.Contains(l, []byte(`"method":"tools/call"`)) && bytes.Contains(l, []byte(`"dir":"h2s"`)) {
			callExchange = exchange.FindSubmatch(l)[1]
		}
	}
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"http":{"exchange":`+string(callExchange)+`,`)) {
			lines[i] = bytes.Replace(l, []byte(`"status":200`), []byte(`"status":500`), 1)
		}
	}
	b500 := filepath.Join(dir, "b500.jsonl")
	if err := os.WriteFile(b500, bytes.Join(lines, []byte("\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	r = diff(b500)
	found := false
	for _, d := range r.Differences {
		if d.Kind == "http status changed" {
			found = d.Name == "POST tools/call echo" && d.Regression && d.Detail == "answered 200 in A, 500 in B"
			if !found {
				t.Errorf("the changed status is told as %+v", d)
			}
		}
	}
	if !found {
		t.Errorf("a tools/call answered 500 in B is no difference: %+v", r.Differences)
	}
}
