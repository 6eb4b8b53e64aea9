package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/sessions"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

var update = flag.Bool("update", false, "rewrite the export goldens in testdata/export from what the code does now")

// goldenSession is a recorded conversation with something of everything:
// a handshake, a notification, stderr with an escape, a payload carrying
// </script><script>, markup, a fence, bidi and terminal escapes and a
// secret, a long string, an error answer, a long array, a request that
// times out, a line that is not JSON, and the exit.
const goldenSession = "../../testdata/export/session.jsonl"

// goldenSecret is in the golden session's argv and a payload; the tests
// export with API_TOKEN set to it.
const goldenSecret = "tok-SECRET-1234"

func exportString(t *testing.T, path string, opts Options) (string, Result) {
	t.Helper()
	if opts.Redactor == nil {
		red, err := sessions.NewRedactor([]string{"API_TOKEN=" + goldenSecret}, nil)
		if err != nil {
			t.Fatal(err)
		}
		opts.Redactor = red
	}
	if opts.Source == "" {
		opts.Source = "session.jsonl"
	}
	var b bytes.Buffer
	res, err := Write(&b, path, opts)
	if err != nil {
		t.Fatalf("export %s: %v", opts.Format, err)
	}
	return b.String(), res
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("../../testdata/export", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./sessions/export -run %s -update)", err, t.Name())
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden (go test ./sessions/export -run %s -update rewrites it):\n%s", name, t.Name(), got)
	}
}

func TestMarkdownExportMatchesItsGolden(t *testing.T) {
	got, _ := exportString(t, goldenSession, Options{Format: FormatMarkdown})
	golden(t, "session.md", got)
}

func TestMermaidExportMatchesItsGolden(t *testing.T) {
	got, _ := exportString(t, goldenSession, Options{Format: FormatMermaid})
	golden(t, "session.mmd", got)
}

func allFormats() []Format {
	return []Format{FormatMarkdown, FormatMermaid, FormatHTML, FormatJSON, FormatHAR, FormatOTLP}
}

// Every export masks the secrets its redactor knows, in frames, argv and
// all that is derived from them, and writes no terminal control, bidi or
// format character raw.
func TestEveryExportMasksSecretsAndEscapesPeerText(t *testing.T) {
	for _, f := range allFormats() {
		got, _ := exportString(t, goldenSession, Options{Format: f, MaxFrames: -1 * boolInt(f.Folds())})
		if strings.Contains(got, goldenSecret) {
			t.Errorf("%s: the secret is in the export", f)
		}
		mask := "***API_TOKEN***"
		if f == FormatMermaid {
			mask = mmdText(mask, 0)
		}
		if !strings.Contains(got, mask) {
			t.Errorf("%s: no mask in the export", f)
		}
		for _, raw := range []string{"\x1b", "\u202e", "\x07"} {
			if strings.Contains(got, raw) {
				t.Errorf("%s: %q is in the export raw", f, raw)
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Mermaid and HTML cannot stream: a long session is folded to its first
// and last records, with a note saying how many frames were left out.
func TestFoldingFormatsSayHowManyFramesTheyLeftOut(t *testing.T) {
	for _, f := range []Format{FormatMarkdown, FormatMermaid, FormatHTML} {
		got, res := exportString(t, goldenSession, Options{Format: f, MaxFrames: 4})
		if res.Records != 13 || res.Shown != 4 || !res.Folded() {
			t.Errorf("%s: %+v, want 4 of 13 records shown", f, res)
		}
		if !strings.Contains(got, "9 frames left out") {
			t.Errorf("%s: no note of the 9 frames left out:\n%s", f, got)
		}
		if strings.Contains(got, "resources/read id 3") || strings.Contains(got, "line 7 ") {
			t.Errorf("%s: a record in the fold is shown", f)
		}
	}
	if _, res := exportString(t, goldenSession, Options{Format: FormatJSON, MaxFrames: 4}); res.Folded() {
		t.Errorf("json folded: %+v", res)
	}
}

func TestHTMLExportEscapesEverythingFromAPeer(t *testing.T) {
	got, _ := exportString(t, goldenSession, Options{Format: FormatHTML})
	if n := strings.Count(got, "<script"); n != 1 {
		t.Errorf("%d <script elements, want only the page's own", n)
	}
	if strings.Contains(got, "<img") || !strings.Contains(got, "&lt;/script&gt;&lt;script&gt;") {
		t.Errorf("the payload's markup is not escaped")
	}
	if strings.Contains(got, "http://") || strings.Contains(got, "https://") {
		t.Errorf("the page refers to something outside itself")
	}
}

// The JSON export holds every request with its answer and latency, and
// per-method percentiles.
func TestJSONExportHasPairsWithLatencyAndPercentiles(t *testing.T) {
	got, res := exportString(t, goldenSession, Options{Format: FormatJSON})
	var doc struct {
		Methods []struct {
			Method   string
			Requests int
			Errors   int
			P50      *float64 `json:"p50_ms"`
			P99      *float64 `json:"p99_ms"`
		}
		Pairs []struct {
			Request   struct{ Line int }
			Response  *struct{ Line int }
			LatencyMS float64 `json:"latency_ms"`
			Status    string
			ErrorCode *int `json:"error_code"`
		}
		Findings []struct{ Line int }
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if len(doc.Pairs) != 5 || res.Pairs != 5 {
		t.Fatalf("%d pairs, want the 5 requests", len(doc.Pairs))
	}
	p := doc.Pairs[1] // tools/call id 1
	if p.Request.Line != 6 || p.Response == nil || p.Response.Line != 7 || p.LatencyMS != 12 || p.Status != "ok" {
		t.Errorf("pair 1: %+v", p)
	}
	if e := doc.Pairs[2]; e.Status != "error" || e.ErrorCode == nil || *e.ErrorCode != -32602 {
		t.Errorf("the error pair: %+v", e)
	}
	if u := doc.Pairs[4]; u.Response != nil || u.Status != "timed out" {
		t.Errorf("the unanswered pair: %+v", u)
	}
	for _, m := range doc.Methods {
		if m.Method == "tools/call" && (m.Requests != 2 || m.Errors != 1 || m.P50 == nil || *m.P50 != 1 || *m.P99 != 12) {
			t.Errorf("tools/call stats: %+v", m)
		}
	}
	if len(doc.Findings) != 3 {
		t.Errorf("%d findings, want 3", len(doc.Findings))
	}
}

// The HAR export validates against the HAR 1.2 schema kept in testdata.
func TestHARExportValidatesAgainstTheHAR12Schema(t *testing.T) {
	got, _ := exportString(t, goldenSession, Options{Format: FormatHAR})
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("../../testdata/export/har-1.2.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(got))
	if err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Errorf("the HAR does not validate: %v", err)
	}
	var har struct {
		Log struct {
			Entries []struct {
				Request struct {
					URL string
				}
				Response struct {
					Status int
				}
				Time float64
			}
		}
	}
	json.Unmarshal([]byte(got), &har)
	if e := har.Log.Entries; len(e) != 5 || e[1].Request.URL != "jsonrpc://server/tools/call" || e[1].Response.Status != 200 || e[1].Time != 12 ||
		e[2].Response.Status != 500 || e[4].Response.Status != 0 {
		t.Errorf("entries: %+v", e)
	}
	// The schema is strict enough to fail: an entry without its request.
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"entries":[{"startedDateTime":"2026-11-29T18:00:00Z","time":1,"response":{},"cache":{},"timings":{"send":0,"wait":0,"receive":0}}]}}`))
	if sch.Validate(bad) == nil {
		t.Error("the schema took an entry with no request")
	}
}

// The OTLP export is a span per request, trace context from
// params._meta.traceparent, attributes after the RPC conventions.
func TestOTLPExportHasASpanPerPairWithTraceContext(t *testing.T) {
	got, _ := exportString(t, goldenSession, Options{Format: FormatOTLP})
	type attr struct {
		Key   string
		Value map[string]any
	}
	var spans []struct {
		TraceID, SpanID, ParentSpanID, Name string
		Kind                                int
		Attributes                          []attr
		Status                              *struct{ Code int }
	}
	sc := bufio.NewScanner(strings.NewReader(got))
	for sc.Scan() {
		var req struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans json.RawMessage
				}
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			t.Fatalf("a line is not JSON: %v", err)
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				var part []struct {
					TraceID, SpanID, ParentSpanID, Name string
					Kind                                int
					Attributes                          []attr
					Status                              *struct{ Code int }
				}
				json.Unmarshal(ss.Spans, &part)
				for _, p := range part {
					spans = append(spans, struct {
						TraceID, SpanID, ParentSpanID, Name string
						Kind                                int
						Attributes                          []attr
						Status                              *struct{ Code int }
					}(p))
				}
			}
		}
	}
	if len(spans) != 5 {
		t.Fatalf("%d spans, want 5", len(spans))
	}
	traced := spans[1]
	if traced.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || traced.ParentSpanID != "00f067aa0ba902b7" || traced.Name != "tools/call" {
		t.Errorf("the span with a traceparent: %+v", traced)
	}
	if spans[0].TraceID == traced.TraceID || spans[0].ParentSpanID != "" || spans[0].TraceID != spans[2].TraceID {
		t.Errorf("spans without trace context share the session's trace and have no parent: %+v", spans[0])
	}
	want := map[string]string{"rpc.system": "jsonrpc", "rpc.method": "tools/call", "rpc.jsonrpc.request_id": "2", "rpc.jsonrpc.error_code": "-32602"}
	for _, a := range spans[2].Attributes {
		for _, v := range a.Value {
			if w, ok := want[a.Key]; ok && fmt.Sprint(v) == w {
				delete(want, a.Key)
			}
		}
	}
	if len(want) != 0 || spans[2].Status == nil || spans[2].Status.Code != 2 {
		t.Errorf("the error span lacks %v (status %+v)", want, spans[2].Status)
	}
}

// An export never writes over its input, by whatever name it is given,
// and writes its output whole or not at all.
func TestExportFileNeverOverwritesItsInputAndLeavesNoTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "s.jsonl")
	data, _ := os.ReadFile(goldenSession)
	os.WriteFile(in, data, 0o644)
	os.Link(in, filepath.Join(dir, "hard.jsonl"))
	os.Symlink(in, filepath.Join(dir, "soft.jsonl"))
	for _, out := range []string{in, filepath.Join(dir, "hard.jsonl"), filepath.Join(dir, "soft.jsonl"), filepath.Join(dir, ".", "s.jsonl")} {
		if _, err := File(in, out, nil, Options{Format: FormatJSON}); err != ErrSameFile {
			t.Errorf("export over %s: %v, want ErrSameFile", out, err)
		}
	}
	if now, _ := os.ReadFile(in); !bytes.Equal(now, data) {
		t.Fatal("the session file changed")
	}
	out := filepath.Join(dir, "out.har")
	os.WriteFile(out, []byte("old"), 0o644)
	if _, err := File(in, out, nil, Options{Format: FormatHAR}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); !json.Valid(b) {
		t.Errorf("the output is not the HAR: %.40q", b)
	}
	if _, err := File(filepath.Join(dir, "missing.jsonl"), out, nil, Options{Format: FormatHAR}); err == nil {
		t.Error("exporting a missing file succeeded")
	}
	if b, _ := os.ReadFile(out); !json.Valid(b) {
		t.Error("a failed export touched the previous output")
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("a temporary file was left: %s", e.Name())
		}
	}
}

// Each request of a batch is a pair of its own, with the answer that
// carries its id, wherever that is in the batch of answers.
func TestBatchMembersArePairedByTheirIDs(t *testing.T) {
	got, res := exportString(t, "../../testdata/export/batch.jsonl", Options{Format: FormatJSON})
	var doc struct {
		Pairs []struct {
			Request  struct{ Method string }
			Response struct{ Frame json.RawMessage }
			Status   string
		}
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatal(err)
	}
	if res.Pairs != 2 || len(doc.Pairs) != 2 {
		t.Fatalf("%d pairs, want the batch's 2 requests", len(doc.Pairs))
	}
	a, b := doc.Pairs[0], doc.Pairs[1]
	if a.Request.Method != "a" || a.Status != "error" || !strings.Contains(string(a.Response.Frame), `"id":1`) ||
		b.Request.Method != "b" || b.Status != "ok" || !strings.Contains(string(b.Response.Frame), `"id":2`) {
		t.Errorf("pairs: %+v", doc.Pairs)
	}
}
