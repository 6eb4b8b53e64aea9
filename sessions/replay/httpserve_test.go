package replay

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// httpRec is a frame record of an HTTP session: exchange x, the HTTP
// method, the status (0 on a request), the content type and headers as
// name, value pairs.
func httpRec(t int64, dir classify.Direction, frame string, x int64, method string, status int, ct string, headers ...string) sessions.FrameRecord {
	h := &sessions.HTTPInfo{Exchange: x, Method: method, Path: "/mcp", Status: status, ContentType: ct}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Headers = append(h.Headers, sessions.HTTPHeader{Name: headers[i], Value: headers[i+1]})
	}
	return sessions.FrameRecord{T: t, Dir: dir, Frame: []byte(frame), HTTP: h}
}

// writeHTTPRecords writes a session file of an HTTP session.
func writeHTTPRecords(t *testing.T, recs []sessions.FrameRecord) string {
	t.Helper()
	return writeHeaderRecords(t, sessions.Header{Transport: sessions.TransportHTTP}, recs)
}

const (
	sse    = "text/event-stream"
	ctJSON = "application/json"
)

// httpSession is a recorded HTTP session: a handshake answered on an
// event stream with session id rec-1, a notification answered 202, a GET
// stream that carried a list_changed notification, a tools/call whose
// event stream carried a progress notification before its answer, a
// tools/list answered with JSON, and a DELETE answered 204.
func httpSession() []sessions.FrameRecord {
	sid := []string{"Mcp-Session-Id", "rec-1"}
	return []sessions.FrameRecord{
		httpRec(10, classify.H2S, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, 1, "POST", 0, ctJSON),
		httpRec(20, classify.S2H, ``, 1, "POST", 200, sse, sid...),
		httpRec(21, classify.S2H, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"}}`, 1, "POST", 200, sse, sid...),
		httpRec(30, classify.H2S, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 2, "POST", 0, ctJSON, sid...),
		httpRec(31, classify.S2H, ``, 2, "POST", 202, ""),
		httpRec(40, classify.H2S, ``, 3, "GET", 0, "", sid...),
		httpRec(41, classify.S2H, ``, 3, "GET", 200, sse, sid...),
		httpRec(50, classify.H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, 4, "POST", 0, ctJSON, sid...),
		httpRec(51, classify.S2H, ``, 4, "POST", 200, sse, sid...),
		httpRec(52, classify.S2H, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`, 4, "POST", 200, sse, sid...),
		httpRec(53, classify.S2H, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, 3, "GET", 200, sse, sid...),
		httpRec(54, classify.S2H, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`, 4, "POST", 200, sse, sid...),
		httpRec(60, classify.H2S, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 5, "POST", 0, ctJSON, sid...),
		httpRec(61, classify.S2H, `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`, 5, "POST", 200, ctJSON, sid...),
		httpRec(70, classify.H2S, ``, 6, "DELETE", 0, "", sid...),
		httpRec(71, classify.S2H, ``, 6, "DELETE", 204, "", sid...),
	}
}

// startHTTPReplay serves recs over HTTP with no delays.
func startHTTPReplay(t *testing.T, recs []sessions.FrameRecord) (*httptest.Server, *HTTPServer) {
	t.Helper()
	hs, err := NewHTTPServer(writeHTTPRecords(t, recs), ServeOptions{NoDelay: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(hs)
	t.Cleanup(func() {
		ts.Close()
		hs.Close(context.Background())
	})
	return ts, hs
}

func do(t *testing.T, method, url, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHTTPReplayAnswersEachPostOnTheRecordedResponseWithItsStatusContentTypeAndSessionId(t *testing.T) {
	ts, _ := startHTTPReplay(t, httpSession())
	url := ts.URL + "/mcp"

	resp := do(t, "POST", url, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	body := readAll(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != sse || resp.Header.Get("Mcp-Session-Id") != "rec-1" {
		t.Errorf("initialize: %s %q session %q, want the recorded 200 text/event-stream with session rec-1", resp.Status, resp.Header.Get("Content-Type"), resp.Header.Get("Mcp-Session-Id"))
	}
	if want := "event: message\ndata: " + `{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":"2025-11-25"}}` + "\n\n"; body != want {
		t.Errorf("initialize's stream is %q, want %q", body, want)
	}

	resp = do(t, "POST", url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", "rec-1")
	if body := readAll(t, resp); resp.StatusCode != http.StatusAccepted || body != "" {
		t.Errorf("the notification is answered %s %q, want the recorded 202 with no body", resp.Status, body)
	}

	resp = do(t, "POST", url, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, "Mcp-Session-Id", "rec-1")
	body = readAll(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ctJSON || body != `{"jsonrpc":"2.0","id":8,"result":{"tools":[]}}` {
		t.Errorf("tools/list: %s %q %q, want the recorded JSON answer with the host's id", resp.Status, resp.Header.Get("Content-Type"), body)
	}

	resp = do(t, "DELETE", url, "", "Mcp-Session-Id", "rec-1")
	readAll(t, resp)
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE: %s, want the recorded 204", resp.Status)
	}
}

func TestHTTPReplaySendsEachServerFrameOnTheLiveResponseOfTheExchangeItWasRecordedIn(t *testing.T) {
	ts, _ := startHTTPReplay(t, httpSession())
	url := ts.URL + "/mcp"
	readAll(t, do(t, "POST", url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`))
	readAll(t, do(t, "POST", url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	get := do(t, "GET", url, "", "Accept", sse)
	if get.StatusCode != 200 || get.Header.Get("Content-Type") != sse {
		t.Fatalf("GET: %s %q, want the recorded event stream", get.Status, get.Header.Get("Content-Type"))
	}
	defer get.Body.Close()
	onGet := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(get.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				onGet <- sc.Text()
				return
			}
		}
	}()
	// The call's own stream carries its progress, then its answer; the
	// list_changed of the GET stream goes there.
	body := readAll(t, do(t, "POST", url, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`))
	progress := strings.Index(body, "notifications/progress")
	answer := strings.Index(body, `"id":5,"result"`)
	if progress < 0 || answer < progress || strings.Contains(body, "list_changed") {
		t.Errorf("the call's stream is %q; want its progress, then its answer, and not the GET stream's notification", body)
	}
	select {
	case got := <-onGet:
		if !strings.Contains(got, "notifications/tools/list_changed") {
			t.Errorf("the GET stream got %q, want the list_changed recorded on it", got)
		}
	case <-time.After(10 * time.Second):
		t.Error("the GET stream got nothing, want the list_changed recorded on it")
	}
}

func TestHTTPReplayAnswersAGetOrDeleteTheRecordingHasNone405(t *testing.T) {
	recs := httpSession()[:5] // the handshake only
	ts, _ := startHTTPReplay(t, recs)
	for _, method := range []string{"GET", "DELETE"} {
		resp := do(t, method, ts.URL+"/mcp", "")
		readAll(t, resp)
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: %s, want 405 (the recording has none)", method, resp.Status)
		}
	}
}

func TestHTTPReplayRecordsItsOwnSessionWithEachFramesHTTPObject(t *testing.T) {
	own := filepath.Join(t.TempDir(), "own.jsonl")
	hs, err := NewHTTPServer(writeHTTPRecords(t, httpSession()), ServeOptions{NoDelay: true, Record: true, RecordPath: own})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(hs)
	readAll(t, do(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`))
	readAll(t, do(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", "rec-1"))
	ts.Close()
	if _, err := hs.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	text := mustRead(t, own)
	for _, want := range []string{`"transport":"http"`, `"http":{"exchange":1,"method":"POST","path":"/mcp","content_type":"application/json"}`,
		`"http":{"exchange":1,"method":"POST","path":"/mcp","status":200,"content_type":"text/event-stream","headers":{"Mcp-Session-Id":"rec-1"}}`,
		`"http":{"exchange":2,"method":"POST","path":"/mcp","status":202}`} {
		if !strings.Contains(text, want) {
			t.Errorf("the replay's session lacks %s:\n%s", want, text)
		}
	}
}

func TestStdioReplayOfAnHTTPRecordingWritesNoFrameForWhatHTTPDid(t *testing.T) {
	path := writeHTTPRecords(t, httpSession())
	in := make(chanSource)
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		_, err := Serve(context.Background(), path, in, out, ServeOptions{NoDelay: true})
		done <- err
	}()
	in <- []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	in <- []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	in <- []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
	// The server's frames are played too, on the one stream stdio has.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if o := out.String(); strings.Contains(o, "list_changed") && strings.Contains(o, `"id":1,"result"`) {
			break
		}
	}
	close(in)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.SplitAfter(out.String(), "\n") {
		if line == "\n" {
			t.Errorf("replay wrote an empty line for a frame of kind http:\n%s", out.String())
		}
	}
	if o := out.String(); !strings.Contains(o, `"id":1,"result"`) || !strings.Contains(o, "list_changed") {
		t.Errorf("replay wrote %q, want the call's answer and the server's notifications", o)
	}
}

// liveHTTPServer is a Streamable HTTP server for PlayHTTP: it gives
// session live-1 at initialize, answers each request with its method
// (as JSON), notifications with 202, and notes what it was sent.
type liveHTTPServer struct {
	mu   sync.Mutex
	seen []string // "METHOD session body"
}

func (l *liveHTTPServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	l.mu.Lock()
	l.seen = append(l.seen, r.Method+" "+r.Header.Get("Mcp-Session-Id")+" "+string(b))
	l.mu.Unlock()
	switch r.Method {
	case "GET":
		w.Header().Set("Content-Type", sse)
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	case "DELETE":
		w.WriteHeader(204)
		return
	}
	m := classify.Classify(b, classify.H2S, classify.MCP)
	if m.Kind != classify.KindRequest {
		w.WriteHeader(202)
		return
	}
	if m.Method() == "initialize" {
		w.Header().Set("Mcp-Session-Id", "live-1")
	}
	w.Header().Set("Content-Type", ctJSON)
	switch m.Method() {
	case "initialize":
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID().Raw)+`,"result":{"protocolVersion":"2025-11-25"}}`)
	case "tools/call":
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID().Raw)+`,"result":{"content":[{"type":"text","text":"hi"}]}}`)
	default:
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID().Raw)+`,"result":{"tools":[]}}`)
	}
}

func TestPlayHTTPSendsTheRecordedHostsRequestsWithTheLiveServersSessionId(t *testing.T) {
	live := &liveHTTPServer{}
	ts := httptest.NewServer(live)
	defer ts.Close()
	target, _ := url.Parse(ts.URL + "/mcp")
	rep, err := PlayHTTP(context.Background(), writeHTTPRecords(t, httpSession()), target, nil, HostOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Same != 3 || rep.Differs() {
		t.Errorf("the report: %d same, %+v; want the 3 requests answered the same", rep.Same, rep.Calls)
	}
	live.mu.Lock()
	defer live.mu.Unlock()
	var methods []string
	for i, s := range live.seen {
		method, rest, _ := strings.Cut(s, " ")
		sid, _, _ := strings.Cut(rest, " ")
		methods = append(methods, method)
		if want := "live-1"; i > 0 && sid != want {
			t.Errorf("request %d (%s) carried session %q, want the live server's %q in place of the recorded rec-1", i, s, sid, want)
		}
	}
	if got := strings.Join(methods, " "); !strings.Contains(got, "GET") || !strings.HasSuffix(got, "DELETE") || strings.Count(got, "POST") != 4 {
		t.Errorf("the live server was sent %s; want the four POSTs, the GET and the DELETE as recorded", got)
	}
}

func TestStdioHostReplayOfAnHTTPRecordingSendsNoFrameForWhatHTTPDid(t *testing.T) {
	_, fs := playRecords(t, writeHTTPRecords(t, httpSession()), HostOptions{Timeout: 2 * time.Second}, echoServer)
	got := fs.frames()
	for _, f := range got {
		if f == "" {
			t.Errorf("the server was sent an empty line for a GET or DELETE of the recording: %q", got)
			break
		}
	}
	if len(got) != 4 {
		t.Errorf("the server was sent %d frames, want the 4 messages: %q", len(got), got)
	}
}

func TestPlayHTTPSendsWhatFollowsACallWhoseResponseHasNotBegun(t *testing.T) {
	// A server that answers a call only once it is done, and is done when
	// the host cancels it: the recorded cancel must reach it while the
	// call's response has not begun.
	cancelled := make(chan struct{})
	var once sync.Once
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		m := classify.Classify(b, classify.H2S, classify.MCP)
		switch {
		case m.Kind == classify.KindNotification && m.Method() == "notifications/cancelled":
			once.Do(func() { close(cancelled) })
			w.WriteHeader(202)
		case m.Kind == classify.KindRequest && m.Method() == "tools/call":
			select {
			case <-cancelled:
			case <-r.Context().Done():
				return
			}
			w.Header().Set("Content-Type", ctJSON)
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(m.ID().Raw)+`,"error":{"code":-32800,"message":"cancelled"}}`)
		default:
			w.WriteHeader(202)
		}
	}))
	defer ts.Close()
	sid := []string{"Mcp-Session-Id", "rec-1"}
	path := writeHTTPRecords(t, []sessions.FrameRecord{
		httpRec(50, classify.H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"duration":"1m"}}}`, 1, "POST", 0, ctJSON, sid...),
		httpRec(60, classify.H2S, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, 2, "POST", 0, ctJSON, sid...),
		httpRec(61, classify.S2H, ``, 2, "POST", 202, ""),
		httpRec(70, classify.S2H, `{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"cancelled"}}`, 1, "POST", 200, ctJSON, sid...),
	})
	target, _ := url.Parse(ts.URL + "/mcp")
	rep, err := PlayHTTP(context.Background(), path, target, nil, HostOptions{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Same != 1 || rep.Differs() {
		t.Errorf("the report: %+v; want the cancelled call answered the same", rep.Calls)
	}
}

// Over HTTP too, a call's answer waits for the host's answer to the
// server request asked on the call's stream: what the server sent after
// that answer comes first, as it was recorded.
func TestHTTPReplayAnswersACallOnlyOnceTheHostHasAnsweredTheRequestAskedOnItsStream(t *testing.T) {
	sid := []string{"Mcp-Session-Id", "rec-1"}
	ts, _ := startHTTPReplay(t, []sessions.FrameRecord{
		httpRec(10, classify.H2S, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"confirm","arguments":{"action":"deploy"}}}`, 1, "POST", 0, ctJSON, sid...),
		httpRec(11, classify.S2H, `{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"Confirm deploy?"}}`, 1, "POST", 200, sse, sid...),
		httpRec(20, classify.H2S, `{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"confirmed":true}}}`, 2, "POST", 0, ctJSON, sid...),
		httpRec(21, classify.S2H, ``, 2, "POST", 202, ""),
		httpRec(22, classify.S2H, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`, 1, "POST", 200, sse, sid...),
		httpRec(23, classify.S2H, `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"confirmed deploy"}]}}`, 1, "POST", 200, sse, sid...),
	})
	url := ts.URL + "/mcp"
	call := do(t, "POST", url, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"confirm","arguments":{"action":"deploy"}}}`, sid...)
	defer call.Body.Close()
	sc := bufio.NewScanner(call.Body)
	var events []string
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		events = append(events, line)
		if strings.Contains(line, "elicitation/create") {
			if resp := do(t, "POST", url, `{"jsonrpc":"2.0","id":"rpctap-replay-1","result":{"action":"accept","content":{"confirmed":true}}}`, sid...); resp.StatusCode != http.StatusAccepted {
				t.Errorf("the host's answer: %s, want the recorded 202", resp.Status)
			}
		}
	}
	if len(events) != 3 || !strings.Contains(events[0], "elicitation/create") || !strings.Contains(events[1], "notifications/progress") || !strings.Contains(events[2], `"id":4,"result"`) {
		t.Errorf("the call's stream carried:\n%s\nwant the elicitation, then (after the host's answer) the progress, then the call's answer", strings.Join(events, "\n"))
	}
}
