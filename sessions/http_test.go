package sessions_test

import (
	"bytes"
	"encoding/json"
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

// The legacy endpoint event's record says the URL the host got and the
// one the server sent, and tail's summary says both.
func TestAnEndpointRewriteIsWrittenAndSummedUpWithWhatItWasAndWhatItBecame(t *testing.T) {
	var buf bytes.Buffer
	w, err := sessions.NewWriter(&buf, sessions.Header{ID: "x", Started: time.Unix(0, 0), Transport: sessions.TransportHTTP})
	if err != nil {
		t.Fatal(err)
	}
	info := &sessions.HTTPInfo{Exchange: 1, Method: "GET", Path: "/sse", Status: 200, Event: "endpoint", Endpoint: "http://127.0.0.1:9/m?s=1", EndpointFrom: "http://127.0.0.1:3001/m?s=1"}
	if err := w.WriteFrame(sessions.FrameRecord{T: 1, Dir: classify.S2H, Frame: []byte{}, HTTP: info}); err != nil {
		t.Fatal(err)
	}
	ev, err := sessions.NewReader(&buf).Next()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(ev.HTTP, []byte(`"event":"endpoint","endpoint":"http://127.0.0.1:9/m?s=1","rewritten_from":"http://127.0.0.1:3001/m?s=1"`)) {
		t.Errorf("the endpoint record is %s", ev.HTTP)
	}
	if got, want := sessions.HTTPSummary(ev.HTTP), "GET /sse 200 endpoint=http://127.0.0.1:9/m?s=1 (rewritten from http://127.0.0.1:3001/m?s=1)"; got != want {
		t.Errorf("the endpoint record is summed up as %q, want %q", got, want)
	}
}
