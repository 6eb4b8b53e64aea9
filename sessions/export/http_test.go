package export

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// httpSession writes a session as rpctap http records one: an
// initialize answered in an event stream (a priming event, then the
// answer with a retry), a notification answered 202 (its path with a
// query), a GET refused 405, and a tools/call answered with a JSON body
// (its path with a query too).
// The host's Origin carries a right-to-left override, and its
// Authorization is masked as the tap records it.
func httpSession(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "http.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := sessions.NewWriter(f, sessions.Header{ID: "h1", Started: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Argv: []string{"http://127.0.0.1:3001/mcp"},
		Name: "127.0.0.1:3001", Transport: sessions.TransportHTTP})
	if err != nil {
		t.Fatal(err)
	}
	post := func(x int64, path string, status int, ct string, hs ...sessions.HTTPHeader) *sessions.HTTPInfo {
		return &sessions.HTTPInfo{Exchange: x, Method: "POST", Path: path, Status: status, ContentType: ct, Headers: hs}
	}
	origin := []sessions.HTTPHeader{{Name: "Origin", Value: "http://evil\u202e.example"}, {Name: "Authorization", Value: "Bearer ***AUTHORIZATION***"}}
	sid := sessions.HTTPHeader{Name: "Mcp-Session-Id", Value: "s1"}
	priming := post(1, "/mcp", 200, "text/event-stream", sid)
	priming.EventID = "e0"
	answer := post(1, "/mcp", 200, "text/event-stream", sid)
	answer.EventID, answer.Retry = "e1", 500
	for i, r := range []sessions.FrameRecord{
		{Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`),
			HTTP: post(1, "/mcp", 0, "application/json", origin...)},
		{Dir: classify.S2H, Frame: []byte{}, HTTP: priming},
		{Dir: classify.S2H, Frame: []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`), HTTP: answer},
		{Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), HTTP: post(2, "/mcp?x=1&y=a%20b", 0, "application/json", sid)},
		{Dir: classify.S2H, Frame: []byte{}, HTTP: post(2, "/mcp?x=1&y=a%20b", 202, "")},
		{Dir: classify.H2S, Frame: []byte{}, HTTP: &sessions.HTTPInfo{Exchange: 3, Method: "GET", Path: "/mcp", Headers: []sessions.HTTPHeader{sid}}},
		{Dir: classify.S2H, Frame: []byte{}, HTTP: &sessions.HTTPInfo{Exchange: 3, Method: "GET", Path: "/mcp", Status: 405, ContentType: "text/plain"}},
		{Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`), HTTP: post(4, "/mcp?tenant=a", 0, "application/json", sid)},
		{Dir: classify.S2H, Frame: []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`), HTTP: post(4, "/mcp?tenant=a", 200, "application/json", sid)},
	} {
		r.T = int64(1000 * (i + 1))
		if err := w.WriteFrame(r); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

type harHeader struct{ Name, Value string }

type harDoc struct {
	Log struct {
		Entries []struct {
			StartedDateTime string
			Time            float64
			Request         struct {
				Method, URL string
				Headers     []harHeader
				QueryString []harHeader
				PostData    *struct{ MimeType, Text string }
				BodySize    int
			}
			Response struct {
				Status     int
				StatusText string
				Headers    []harHeader
				Content    struct {
					Size     int
					MimeType string
					Text     string
				}
			}
			Timings struct{ Send, Wait, Receive float64 }
			Rpctap  struct {
				Exchange int64
				Lines    []int64
				Methods  []string
				Events   int
			} `json:"_rpctap"`
		}
	}
}

// The HAR of an HTTP session has an entry per HTTP exchange, with the
// real request and response: method, URL, status, the headers recorded,
// both bodies, an event stream's events; it validates against HAR 1.2,
// and a peer's bidi character is written escaped.
func TestTheHAROfAnHTTPSessionHasAnEntryPerExchange(t *testing.T) {
	got, res := exportString(t, httpSession(t), Options{Format: FormatHAR})
	sch, err := jsonschema.NewCompiler().Compile("../../testdata/export/har-1.2.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(got))
	if err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	if err := sch.Validate(doc); err != nil {
		t.Errorf("the HAR does not validate: %v\n%s", err, got)
	}
	if strings.ContainsRune(got, '\u202e') {
		t.Errorf("a peer's right-to-left override is written raw in the HAR")
	}
	var har harDoc
	if err := json.Unmarshal([]byte(got), &har); err != nil {
		t.Fatal(err)
	}
	e := har.Log.Entries
	if len(e) != 4 || res.Pairs != 4 {
		t.Fatalf("%d entries (%d said), want one per exchange, 4:\n%s", len(e), res.Pairs, got)
	}
	init := e[0]
	if init.Request.Method != "POST" || init.Request.URL != "http://127.0.0.1:3001/mcp" || init.Response.Status != 200 || init.Response.StatusText != "OK" ||
		init.StartedDateTime != "2026-12-01T10:00:00.001000Z" || init.Time != 2 || init.Timings.Wait != 1 || init.Timings.Receive != 1 {
		t.Errorf("the initialize exchange: %+v", init)
	}
	if want := []harHeader{{"Content-Type", "application/json"}, {"Origin", "http://evil\u202e.example"}, {Name: "Authorization", Value: "Bearer ***AUTHORIZATION***"}}; !equalHeaders(init.Request.Headers, want) {
		t.Errorf("the request's headers are %v, want the recorded ones %v", init.Request.Headers, want)
	}
	if init.Request.PostData == nil || !strings.Contains(init.Request.PostData.Text, `"method":"initialize"`) || init.Request.PostData.MimeType != "application/json" {
		t.Errorf("the request's body: %+v", init.Request.PostData)
	}
	if c := init.Response.Content; c.MimeType != "text/event-stream" || !strings.HasPrefix(c.Text, "id: e0\ndata: \n\nid: e1\nretry: 500\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"result\"") ||
		!strings.HasSuffix(c.Text, "}\n\n") || init.Rpctap.Events != 2 || c.Size != len(c.Text) {
		t.Errorf("the event stream's content: %+v", c)
	}
	if want := []harHeader{{"Content-Type", "text/event-stream"}, {"Mcp-Session-Id", "s1"}}; !equalHeaders(init.Response.Headers, want) {
		t.Errorf("the response's headers are %v, want %v", init.Response.Headers, want)
	}
	if n := e[1]; n.Response.Status != 202 || n.Response.Content.Size != 0 || n.Request.URL != "http://127.0.0.1:3001/mcp?x=1&y=a%20b" ||
		!equalHeaders(n.Request.QueryString, []harHeader{{"x", "1"}, {"y", "a b"}}) || len(n.Rpctap.Methods) != 1 || n.Rpctap.Methods[0] != "notifications/initialized" {
		t.Errorf("the notification's exchange: %+v", n)
	}
	if g := e[2]; g.Request.Method != "GET" || g.Request.PostData != nil || g.Response.Status != 405 || g.Response.StatusText != "Method Not Allowed" || g.Request.BodySize != 0 {
		t.Errorf("the GET exchange: %+v", g)
	}
	if c := e[3]; c.Response.Content.Text != `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}` || c.Response.Content.MimeType != "application/json" ||
		c.Rpctap.Exchange != 4 || len(c.Rpctap.Lines) != 2 || c.Rpctap.Methods[0] != "tools/call" {
		t.Errorf("the tools/call exchange: %+v", c)
	}
}

func equalHeaders(a, b []harHeader) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The Markdown (and HTML) transcript of an HTTP session says on each
// frame's line what HTTP did, and a frame of kind http by its label.
func TestTheMarkdownOfAnHTTPSessionShowsTheHTTPLines(t *testing.T) {
	got, _ := exportString(t, httpSession(t), Options{Format: FormatMarkdown})
	for _, want := range []string{
		"host → server · request `initialize` · id `0` · answered on line 4 after 2 ms · HTTP `POST /mcp application/json`",
		"server → host · http `SSE priming event` · HTTP `POST /mcp 200 text/event-stream id=e0`",
		"server → host · http `HTTP 202` · HTTP `POST /mcp?x=1&y=a%20b 202`",
		"host → server · http `GET stream opened` · HTTP `GET /mcp`",
		"server → host · http `HTTP 405 Method Not Allowed` · HTTP `GET /mcp 405 text/plain`",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the transcript has no line %q:\n%s", want, got)
		}
	}
	html, _ := exportString(t, httpSession(t), Options{Format: FormatHTML})
	if !strings.Contains(html, "HTTP GET /mcp 405 text/plain") {
		t.Errorf("the HTML page does not say what HTTP did")
	}
}

// Each span of the OTLP export of an HTTP session carries what HTTP did
// in the exchange that carried its answer, after the semantic
// conventions: http.request.method, url.path, url.query and
// http.response.status_code.
func TestTheOTLPOfAnHTTPSessionCarriesTheHTTPAttributes(t *testing.T) {
	got, _ := exportString(t, httpSession(t), Options{Format: FormatOTLP})
	var doc struct {
		ResourceSpans []struct {
			ScopeSpans []struct {
				Spans []struct {
					Name       string
					Attributes []struct {
						Key   string
						Value map[string]any
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatal(err)
	}
	attrs := map[string]map[string]any{}
	for _, sp := range doc.ResourceSpans[0].ScopeSpans[0].Spans {
		a := map[string]any{}
		for _, kv := range sp.Attributes {
			for _, v := range kv.Value {
				a[kv.Key] = v
			}
		}
		attrs[sp.Name] = a
	}
	for name, want := range map[string]map[string]any{
		"initialize": {"http.request.method": "POST", "url.path": "/mcp", "http.response.status_code": "200"},
		"tools/call": {"http.request.method": "POST", "url.path": "/mcp", "url.query": "tenant=a", "http.response.status_code": "200"},
	} {
		for k, v := range want {
			if attrs[name][k] != v {
				t.Errorf("span %s: %s is %v, want %v (attributes %v)", name, k, attrs[name][k], v, attrs[name])
			}
		}
	}
	if _, ok := attrs["initialize"]["url.query"]; ok {
		t.Errorf("a path with no query gives url.query")
	}
	stdio, _ := exportString(t, goldenSession, Options{Format: FormatOTLP})
	if strings.Contains(stdio, "http.request.method") {
		t.Errorf("a stdio session's spans say something of HTTP")
	}
}
