package sessions_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

func TestAnHTTPSessionReadsBackItsTransportAndEachFramesHTTPObject(t *testing.T) {
	var buf bytes.Buffer
	w, err := sessions.NewWriter(&buf, sessions.Header{ID: "x", Started: time.Unix(0, 0), Transport: sessions.TransportHTTP})
	if err != nil {
		t.Fatal(err)
	}
	info := &sessions.HTTPInfo{Exchange: 3, Method: "POST", Path: "/mcp?a=\"b\"", Status: 202, EventID: "e1", Retry: 500,
		Headers: []sessions.HTTPHeader{{"Mcp-Session-Id", "s\u202e1"}}, Error: "why"}
	if err := w.WriteFrame(sessions.FrameRecord{T: 1, Dir: classify.S2H, Frame: []byte{}, HTTP: info}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFrame(sessions.FrameRecord{T: 2, Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","method":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	r := sessions.NewReader(&buf)
	ev, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	h, _ := r.Header()
	if h.Transport != sessions.TransportHTTP {
		t.Errorf("the header reads back transport %q, want http:\n%s", h.Transport, buf.String())
	}
	var got map[string]any
	if err := json.Unmarshal(ev.HTTP, &got); err != nil {
		t.Fatalf("the http object reads back as %q: %v", ev.HTTP, err)
	}
	want := map[string]any{"exchange": 3.0, "method": "POST", "path": "/mcp?a=\"b\"", "status": 202.0, "event_id": "e1", "retry_ms": 500.0,
		"headers": map[string]any{"Mcp-Session-Id": "s\u202e1"}, "error": "why"}
	if g, _ := json.Marshal(got); string(g) != string(must(json.Marshal(want))) {
		t.Errorf("the http object reads back as %s, want %s", g, must(json.Marshal(want)))
	}
	if bytes.Contains(ev.HTTP, []byte("\u202e")) {
		t.Errorf("a peer's bidi character is written raw in the http object: %q", ev.HTTP)
	}
	if m := h.Classify(ev.Frame, ev.Dir, classify.Auto); m.Kind != classify.KindHTTP || len(m.Findings) != 0 {
		t.Errorf("an empty frame of an HTTP session is judged %s %v, want kind http with no finding", m.Kind, m.Findings)
	}
	if m := (sessions.Header{}).Classify(ev.Frame, ev.Dir, classify.Auto); m.Kind != classify.KindBlank {
		t.Errorf("an empty frame of a stdio session is judged %s, want blank", m.Kind)
	}
	if got := sessions.HTTPSummary(ev.HTTP); got != "POST /mcp?a=\"b\" 202 id=e1: why" {
		t.Errorf("the http object is summed up as %q", got)
	}
	ev, err = r.Next()
	if err != nil || ev.HTTP != nil {
		t.Errorf("a frame with no http object reads back with %q (%v)", ev.HTTP, err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestParseHTTPReadsEveryFieldInOnePassInAnyOrder(t *testing.T) {
	info := sessions.HTTPInfo{Exchange: 7, Method: "POST", Path: "/mcp?q=\"x\"\\y", Status: 404, ContentType: "application/json", EventID: "e\u202e1", Retry: 250,
		Headers: []sessions.HTTPHeader{{Name: "Mcp-Session-Id", Value: "s1"}, {Name: "Authorization", Value: "Bearer ***AUTHORIZATION***"}}, Error: "why"}
	b := recordHTTP(t, &info)
	got, ok := sessions.ParseHTTP(b)
	if !ok {
		t.Fatalf("ParseHTTP refuses %s", b)
	}
	if g, w := must(json.Marshal(got)), must(json.Marshal(info)); !bytes.Equal(g, w) {
		t.Errorf("ParseHTTP of %s:\n got %s\nwant %s", b, g, w)
	}
	// Another writer's order, spaces, and a member it does not know.
	other := []byte(` { "error" : "e", "x": [1, {"a": "}"}], "status":202 , "headers": {"Origin": "o"}, "method":"GET", "exchange": 2 } `)
	got, ok = sessions.ParseHTTP(other)
	if !ok || got.Exchange != 2 || got.Method != "GET" || got.Status != 202 || got.Error != "e" || len(got.Headers) != 1 || got.Headers[0] != (sessions.HTTPHeader{Name: "Origin", Value: "o"}) {
		t.Errorf("ParseHTTP of %s: %+v %v", other, got, ok)
	}
	for _, bad := range []string{"", "[]", `{"method":}`, `{"method":"x"`, `{"method" "x"}`, `"x"`} {
		if _, ok := sessions.ParseHTTP([]byte(bad)); ok {
			t.Errorf("ParseHTTP takes %q as an http object", bad)
		}
	}
}

// recordHTTP is the http object a session file holds for info.
func recordHTTP(t *testing.T, info *sessions.HTTPInfo) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := sessions.NewWriter(&buf, sessions.Header{ID: "x", Started: time.Unix(0, 0), Transport: sessions.TransportHTTP})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFrame(sessions.FrameRecord{T: 1, Dir: classify.S2H, Frame: []byte{}, HTTP: info}); err != nil {
		t.Fatal(err)
	}
	r := sessions.NewReader(&buf)
	ev, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(ev.HTTP)
}

func TestAFrameOfKindHTTPIsLabelledByWhatHTTPDid(t *testing.T) {
	for _, c := range []struct {
		info sessions.HTTPInfo
		want string
	}{
		{sessions.HTTPInfo{Method: "POST", Status: 202}, "HTTP 202"},
		{sessions.HTTPInfo{Method: "POST", Status: 404, ContentType: "text/plain"}, "HTTP 404 Not Found"},
		{sessions.HTTPInfo{Method: "POST", Status: 502, Error: "rpctap could not reach the target"}, "HTTP 502 Bad Gateway"},
		{sessions.HTTPInfo{Method: "POST", Status: 200, Error: "the body is encoded (gzip)"}, "HTTP 200 body not recorded"},
		{sessions.HTTPInfo{Method: "GET", Path: "/mcp"}, "GET stream opened"},
		{sessions.HTTPInfo{Method: "GET", Status: 200, ContentType: "text/event-stream"}, "GET stream ended"},
		{sessions.HTTPInfo{Method: "GET", Status: 200, ContentType: "text/event-stream", Error: "was not relayed whole: the host stopped reading"}, "GET stream ended early"},
		{sessions.HTTPInfo{Method: "POST", Status: 200, ContentType: "text/event-stream", Error: "broke off after 10 bytes"}, "SSE stream ended early"},
		{sessions.HTTPInfo{Method: "POST", Status: 200, ContentType: "text/event-stream", EventID: "e9", Error: "too large"}, "SSE event not recorded"},
		{sessions.HTTPInfo{Method: "GET", Status: 405}, "HTTP 405 Method Not Allowed"},
		{sessions.HTTPInfo{Method: "POST", Status: 200, ContentType: "text/event-stream; charset=utf-8", EventID: "e1"}, "SSE priming event"},
		{sessions.HTTPInfo{Method: "DELETE", Headers: []sessions.HTTPHeader{{Name: "Mcp-Session-Id", Value: "s"}}}, "DELETE session"},
		{sessions.HTTPInfo{Method: "POST", Error: "too large"}, "POST body not recorded"},
		{sessions.HTTPInfo{Method: "X\u202eY", Path: "/a\u202eb"}, "HTTP with no body"},
		{sessions.HTTPInfo{Method: "GET", Status: 200, ContentType: "text/event-stream", Event: "endpoint", Endpoint: "/message?sessionId=1"}, "SSE endpoint event"},
	} {
		if got := sessions.HTTPLabel(recordHTTP(t, &c.info)); got != c.want {
			t.Errorf("%+v is labelled %q, want %q", c.info, got, c.want)
		}
	}
	if got := sessions.HTTPLabel([]byte("not json")); got != "" {
		t.Errorf("no http object is labelled %q", got)
	}
}

func TestTheIndexGivesAFrameOfKindHTTPItsLabelInPlaceOfAMethod(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sessions.NewWriter(f, sessions.Header{ID: "x", Started: time.Unix(0, 0), Transport: sessions.TransportHTTP})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range []sessions.FrameRecord{
		{Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), HTTP: &sessions.HTTPInfo{Exchange: 1, Method: "POST", Path: "/mcp"}},
		{Dir: classify.S2H, Frame: []byte{}, HTTP: &sessions.HTTPInfo{Exchange: 1, Method: "POST", Path: "/mcp", Status: 202}},
		{Dir: classify.H2S, Frame: []byte{}, HTTP: &sessions.HTTPInfo{Exchange: 2, Method: "GET", Path: "/mcp"}},
		{Dir: classify.S2H, Frame: []byte{}, HTTP: &sessions.HTTPInfo{Exchange: 2, Method: "GET", Path: "/mcp", Status: 405}},
		// A request HTTP ended with no answer pairs with the frame that
		// ended it, which keeps its label: it says why no answer came.
		{Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), HTTP: &sessions.HTTPInfo{Exchange: 3, Method: "POST", Path: "/mcp"}},
		{Dir: classify.S2H, Frame: []byte{}, HTTP: &sessions.HTTPInfo{Exchange: 3, Method: "POST", Path: "/mcp", Status: 500}},
	} {
		r.T = int64(i)
		if err := w.WriteFrame(r); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	x, err := sessions.IndexFile(path, sessions.IndexOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := range x.Len() {
		e := x.At(i)
		got = append(got, e.Kind.String()+" "+e.Method)
	}
	want := []string{"notification notifications/initialized", "http HTTP 202", "http GET stream opened", "http HTTP 405 Method Not Allowed",
		"request tools/list", "http HTTP 500 Internal Server Error"}
	if e := x.At(5); e.Pair == 0 {
		t.Errorf("the 500 is not paired with the request it ended: %+v", e)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the index holds %q, want %q", got, want)
	}
}

// The legacy endpoint event's record says the URL the host got and the
// one the server sent, and tail's summary says both.
func TestAnEndpointRewriteIsWrittenAndSummedUpWithWhatItWasAndWhatItBecame(t *testing.T) {
	info := &sessions.HTTPInfo{Exchange: 1, Method: "GET", Path: "/sse", Status: 200, Event: "endpoint", Endpoint: "http://127.0.0.1:9/m?s=1", EndpointFrom: "http://127.0.0.1:3001/m?s=1"}
	raw := recordHTTP(t, info)
	if !bytes.Contains(raw, []byte(`"event":"endpoint","endpoint":"http://127.0.0.1:9/m?s=1","rewritten_from":"http://127.0.0.1:3001/m?s=1"`)) {
		t.Errorf("the endpoint record is %s", raw)
	}
	if got, want := sessions.HTTPSummary(raw), "GET /sse 200 endpoint=http://127.0.0.1:9/m?s=1 (rewritten from http://127.0.0.1:3001/m?s=1)"; got != want {
		t.Errorf("the endpoint record is summed up as %q, want %q", got, want)
	}
	if got, ok := sessions.ParseHTTP(raw); !ok || got.Event != info.Event || got.Endpoint != info.Endpoint || got.EndpointFrom != info.EndpointFrom {
		t.Errorf("ParseHTTP of the endpoint record: %+v", got)
	}
}
