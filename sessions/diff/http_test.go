package diff

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// httpRun writes an HTTP session of a host's run: the handshake, a
// notification answered 202, a GET answered getStatus, and an echo call
// answered callStatus. Its exchanges are numbered from first, its
// Mcp-Session-Id is sid and its frames are step µs apart, as two runs of
// the same host differ.
func httpRun(t *testing.T, first int64, sid string, step int64, getStatus, callStatus int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("run-%d.jsonl", first))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := sessions.NewWriter(f, sessions.Header{ID: sid, Started: time.Now(), Argv: []string{"http://127.0.0.1:3001/mcp"}, Transport: sessions.TransportHTTP})
	if err != nil {
		t.Fatal(err)
	}
	hs := []sessions.HTTPHeader{{Name: "Mcp-Session-Id", Value: sid}}
	x := func(n int64, method string, status int, ct string) *sessions.HTTPInfo {
		return &sessions.HTTPInfo{Exchange: first + n, Method: method, Path: "/mcp", Status: status, ContentType: ct, Headers: hs, EventID: fmt.Sprintf("%s-%d", sid, n)}
	}
	callBody := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`
	if callStatus != 200 {
		callBody = ""
	}
	for i, r := range []sessions.FrameRecord{
		{Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), HTTP: x(0, "POST", 0, "application/json")},
		{Dir: classify.S2H, Frame: []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`), HTTP: x(0, "POST", 200, "text/event-stream")},
		{Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), HTTP: x(1, "POST", 0, "application/json")},
		{Dir: classify.S2H, Frame: []byte{}, HTTP: x(1, "POST", 202, "")},
		{Dir: classify.H2S, Frame: []byte{}, HTTP: x(2, "GET", 0, "")},
		{Dir: classify.S2H, Frame: []byte{}, HTTP: x(2, "GET", getStatus, "text/event-stream")},
		{Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`), HTTP: x(3, "POST", 0, "application/json")},
		{Dir: classify.S2H, Frame: []byte(callBody), HTTP: x(3, "POST", callStatus, "application/json")},
	} {
		r.T = int64(i+1) * step
		if err := w.WriteFrame(r); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// Two runs of the same host over HTTP differ in their exchange numbers,
// session ids, event ids and timing: no difference. A changed status is
// one, a regression when B's is an error.
func TestDiffOfHTTPSessionsComparesStatusesAndNothingThatDiffersRunToRun(t *testing.T) {
	a := httpRun(t, 1, "sess-a", 1000, 200, 200)
	for _, c := range []struct {
		name       string
		b          string
		want       string // the one difference's name, "" for none
		regression bool
	}{
		{"the same run again", httpRun(t, 40, "sess-b", 3700, 200, 200), "", false},
		{"the GET refused", httpRun(t, 40, "sess-b", 3700, 405, 200), "GET", true},
		{"the call answered 500", httpRun(t, 40, "sess-b", 3700, 200, 500), "POST tools/call echo", true},
	} {
		rep, err := Files(a, c.b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ds := dropFinding(rep.Differences, "")
		var http []Difference
		for _, d := range ds {
			if d.Kind == DiffHTTPStatus {
				http = append(http, d)
			}
		}
		switch {
		case c.want == "" && len(ds) != 0:
			t.Errorf("%s: %d differences, want none:%s", c.name, len(ds), describe(ds))
		case c.want != "" && (len(http) != 1 || http[0].Name != c.want || http[0].Regression != c.regression || http[0].LineB == 0):
			t.Errorf("%s: want one http status difference %q (regression %v), got:%s", c.name, c.want, c.regression, describe(ds))
		}
	}
	rep, _ := Files(a, httpRun(t, 40, "sess-b", 3700, 200, 500), Options{})
	for _, d := range rep.Differences {
		if d.Kind == DiffHTTPStatus && d.Detail != "answered 200 in A, 500 in B" {
			t.Errorf("the difference says %q", d.Detail)
		}
	}
}
