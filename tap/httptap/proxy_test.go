package httptap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
)

// proxied is a proxy to target recording into a session file, served on
// a test server.
type proxied struct {
	url  string
	path string
	feed *tap.Feed
	srv  *httptest.Server
}

func proxyTo(t testing.TB, target string, redact ...string) *proxied {
	t.Helper()
	return proxyOver(t, target, nil, redact...)
}

// proxyOver is proxyTo with the proxy sending through rt (nil: its own
// default transport).
func proxyOver(t testing.TB, target string, rt http.RoundTripper, redact ...string) *proxied {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tp, err := tap.New(tap.Options{Argv: []string{target}, Record: true, Path: path, Transport: sessions.TransportHTTP, Env: []string{},
		Warn: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	feed := tp.Feed()
	p := &proxied{path: path, feed: feed}
	p.srv = httptest.NewServer(New(Options{Target: u, Feed: feed, Redactor: tp.Redactor(), Redact: redact, Transport: rt}))
	p.url = p.srv.URL + u.Path
	return p
}

// frames ends the session and reads back its frames.
func (p *proxied) frames(t *testing.T) (sessions.Header, []sessions.Event) {
	t.Helper()
	p.srv.Close()
	p.feed.Close()
	f, err := os.Open(p.path)
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
		if ev.Kind == "" {
			e := *ev
			e.Frame, e.HTTP = bytes.Clone(ev.Frame), bytes.Clone(ev.HTTP)
			evs = append(evs, e)
		}
	}
	h, _ := r.Header()
	return h, evs
}

type httpObject struct {
	Exchange    int64             `json:"exchange"`
	Method      string            `json:"method"`
	Path        string            `json:"path"`
	Status      int               `json:"status"`
	ContentType string            `json:"content_type"`
	EventID     string            `json:"event_id"`
	Retry       int64             `json:"retry_ms"`
	Headers     map[string]string `json:"headers"`
	Error       string            `json:"error"`
}

func httpOf(t *testing.T, ev sessions.Event) httpObject {
	t.Helper()
	var h httpObject
	if err := json.Unmarshal(ev.HTTP, &h); err != nil {
		t.Fatalf("frame at line %d has no readable http object (%q): %v", ev.Line, ev.HTTP, err)
	}
	return h
}

func TestEachSSEEventReachesTheHostBeforeTheServerWritesTheNext(t *testing.T) {
	const n = 5
	got := make(chan struct{}, n)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for i := range n {
			time.Sleep(10 * time.Millisecond)
			io.WriteString(w, "id: e"+string(rune('0'+i))+"\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"n\":"+string(rune('0'+i))+"}}\n\n")
			w.(http.Flusher).Flush()
			// The next event is written only once the host has this
			// one: a proxy that held events back would never get it.
			select {
			case <-got:
			case <-time.After(10 * time.Second):
				t.Errorf("event %d did not reach the host before the server would write the next", i)
				return
			}
		}
	}))
	defer target.Close()
	p := proxyTo(t, target.URL+"/mcp")
	resp, err := http.Post(p.url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	events := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			break
		}
		if line == "\n" {
			events++
			got <- struct{}{}
		}
	}
	resp.Body.Close()
	if events != n {
		t.Fatalf("the host got %d events, want %d", events, n)
	}
	_, evs := p.frames(t)
	if len(evs) != 1+n+1 {
		t.Fatalf("the session has %d frames, want the request, %d events and the stream's end", len(evs), n)
	}
	if end := evs[len(evs)-1]; len(end.Frame) != 0 || !bytes.Contains(end.HTTP, []byte(`"stream_end":true`)) {
		t.Errorf("the stream's end recorded as %s %q", end.HTTP, end.Frame)
	}
	for i, ev := range evs[1 : 1+n] {
		h := httpOf(t, ev)
		if ev.Dir != classify.S2H || h.EventID != "e"+string(rune('0'+i)) || h.Status != 200 || !bytes.Contains(ev.Frame, []byte(`"n":`+string(rune('0'+i)))) {
			t.Errorf("event %d recorded as %s %s %q", i, ev.Dir, ev.HTTP, ev.Frame)
		}
	}
}

func TestRequestsReachTheTargetWithTheHostsHeadersAndBodyUnchanged(t *testing.T) {
	type seen struct {
		method, uri, host string
		header            http.Header
		body              []byte
	}
	seenc := make(chan seen, 2)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seenc <- seen{r.Method, r.RequestURI, r.Host, r.Header.Clone(), b}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "s-1")
		io.WriteString(w, `{"jsonrpc":"2.0","id":7,"result":{}}`)
	}))
	defer target.Close()
	p := proxyTo(t, target.URL+"/mcp")
	send := func(base string) seen {
		body := `{"jsonrpc":"2.0","id":7,"method":"ping"}` + "\n"
		req, _ := http.NewRequest("POST", base+"?q=1", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Method", "ping")
		req.Header.Set("X-Forwarded-For", "10.1.2.3")
		req.Header.Set("User-Agent", "host/1")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return <-seenc
	}
	direct, via := send(target.URL+"/mcp"), send(p.url)
	if direct.method != via.method || direct.uri != via.uri || direct.host != via.host || !bytes.Equal(direct.body, via.body) {
		t.Errorf("through the proxy the target saw %s %s (Host %s) %q; directly %s %s (Host %s) %q", via.method, via.uri, via.host, via.body, direct.method, direct.uri, direct.host, direct.body)
	}
	for _, h := range []http.Header{direct.header, via.header} {
		h.Del("Content-Length") // the same body; sent the same way or chunked
	}
	if !equalHeaders(direct.header, via.header) {
		t.Errorf("through the proxy the target saw headers\n%v\ndirectly\n%v", via.header, direct.header)
	}
	_, evs := p.frames(t)
	if len(evs) != 2 {
		t.Fatalf("the session has %d frames, want the request and its answer", len(evs))
	}
	req, ans := httpOf(t, evs[0]), httpOf(t, evs[1])
	if req.Method != "POST" || req.Path != "/mcp?q=1" || req.Headers["Mcp-Method"] != "ping" || !bytes.Contains(evs[0].Frame, []byte(`"method":"ping"`)) {
		t.Errorf("the request was recorded as %s %q", evs[0].HTTP, evs[0].Frame)
	}
	if ans.Status != 200 || ans.Headers["Mcp-Session-Id"] != "s-1" || ans.Exchange != req.Exchange || string(evs[1].Frame) != `{"jsonrpc":"2.0","id":7,"result":{}}` {
		t.Errorf("the answer was recorded as %s %q", evs[1].HTTP, evs[1].Frame)
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if strings.Join(v, "\x00") != strings.Join(b[k], "\x00") {
			return false
		}
	}
	return true
}

func TestAnUnreachableTargetIsAnswered502WithAJSONReasonAndRecorded(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	addr := gone.URL
	gone.Close()
	p := proxyTo(t, addr+"/mcp")
	resp, err := http.Post(p.url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Error string }
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || err != nil || !strings.Contains(body.Error, "could not reach the target") || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("an unreachable target was answered %d %q (%v)", resp.StatusCode, body.Error, err)
	}
	h, evs := p.frames(t)
	if len(evs) != 2 {
		t.Fatalf("the session has %d frames, want the request and the 502", len(evs))
	}
	got := httpOf(t, evs[1])
	if got.Status != 502 || !strings.Contains(got.Error, "could not reach") || len(evs[1].Frame) != 0 {
		t.Errorf("the 502 was recorded as %s %q", evs[1].HTTP, evs[1].Frame)
	}
	if m := h.Classify(evs[1].Frame, evs[1].Dir, classify.Auto); m.Kind != classify.KindHTTP || len(m.Findings) != 0 {
		t.Errorf("the 502's frame reads back as %s with findings %v, want kind http and none", m.Kind, m.Findings)
	}
}

func TestSecretHeadersAreMaskedInTheRecordAndSentUnchanged(t *testing.T) {
	var sent http.Header
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent = r.Header.Clone()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer target.Close()
	p := proxyTo(t, target.URL+"/mcp", "X-Api-Key")
	req, _ := http.NewRequest("POST", p.url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req.Header.Set("Authorization", "Bearer tok-1234567")
	req.Header.Set("Cookie", "sid=c00kie99")
	req.Header.Set("X-Api-Key", "k3y-secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if sent.Get("Authorization") != "Bearer tok-1234567" || sent.Get("Cookie") != "sid=c00kie99" || sent.Get("X-Api-Key") != "k3y-secret" {
		t.Errorf("the target got %v: secrets must go on unchanged", sent)
	}
	_, evs := p.frames(t)
	raw, _ := os.ReadFile(p.path)
	for _, s := range []string{"tok-1234567", "c00kie99", "k3y-secret"} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the session file holds the secret %q:\n%s", s, raw)
		}
	}
	h := httpOf(t, evs[0])
	if h.Headers["Authorization"] != "Bearer ***AUTHORIZATION***" || h.Headers["X-Api-Key"] != "***X_API_KEY***" {
		t.Errorf("the secret headers were recorded as %v", h.Headers)
	}
	if a := httpOf(t, evs[1]); a.Status != 202 {
		t.Errorf("the 202 was recorded as %s", evs[1].HTTP)
	}
}

func TestSSESplitsEventsAtBlankLinesWithAnyLineEnd(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"lf", "data: a\n\ndata: b\n\n", []string{"a", "b"}},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}},
		{"crlf within an event", "data: a\r\ndata: b\r\n\r\n", []string{"a\nb"}},
		{"cr", "data: a\r\rdata: b\r\r", []string{"a", "b"}},
		{"multi-line data", "data: {\"a\":\ndata: 1}\n\n", []string{"{\"a\":\n1}"}},
		{"comments and fields", ": ping\nevent: message\nid: 3\nretry: 500\ndata:x\n\n", []string{"x"}},
		{"unfinished event", "data: a\n\ndata: b\n", []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Fed a byte at a time: an event may be cut anywhere.
			var s sse
			var got []string
			for i := range len(tc.in) {
				s.feed([]byte{tc.in[i]}, func(e event) { got = append(got, string(e.data)) })
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("events %q, want %q", got, tc.want)
			}
		})
	}
}

// A frame that holds no message (a 202's empty body) is judged live as
// what HTTP did, as a reader judges it: its record's derived kind is
// http, and the session records no finding of it.
func TestAFrameWithNoMessageIsRecordedAsKindHTTP(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer target.Close()
	p := proxyTo(t, target.URL+"/mcp")
	resp, err := http.Post(p.url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	p.frames(t)
	raw, err := os.ReadFile(p.path)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, line := range bytes.Split(raw, []byte("\n")) {
		var rec struct {
			Dir      string          `json:"dir"`
			Kind     string          `json:"kind"`
			Findings json.RawMessage `json:"findings"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Dir == "s2h" {
			kinds = append(kinds, rec.Kind)
			if len(rec.Findings) > 0 {
				t.Errorf("the 202's record has findings: %s", line)
			}
		}
	}
	if strings.Join(kinds, ",") != "http" {
		t.Errorf("the 202 was recorded with kinds %q, want one of kind http:\n%s", kinds, raw)
	}
}

// A record lists the headers it keeps in one order, the same in every
// record: those that matter to MCP first, then the --redact ones as they
// were given.
func TestARecordListsItsHeadersInTheOrderTheyWereGiven(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	}))
	defer target.Close()
	extra := []string{"X-E", "X-D", "X-C", "X-B", "X-A"}
	p := proxyTo(t, target.URL+"/mcp", extra...)
	req, _ := http.NewRequest("POST", p.url, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	for _, n := range extra {
		req.Header.Set(n, "v")
	}
	req.Header.Set("Mcp-Session-Id", "s-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, evs := p.frames(t)
	want := `"headers":{"Mcp-Session-Id":"s-1","X-E":"***X_E***","X-D":"***X_D***","X-C":"***X_C***","X-B":"***X_B***","X-A":"***X_A***"}`
	if !bytes.Contains(evs[0].HTTP, []byte(want)) {
		t.Errorf("the request's headers were recorded as %s, want %s", evs[0].HTTP, want)
	}
}

// An SSE event with a data line longer than the proxy holds is recorded
// as one frame that says it was too large, and the events after it as
// they were: the long line is neither lost nor taken for an event's end.
func TestAnSSEEventWithALineTooLongToHoldIsRecordedAsTooLarge(t *testing.T) {
	var s sse
	var got []event
	emit := func(e event) { got = append(got, e) }
	s.feed([]byte("id: big\ndata: "), emit)
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for range maxBody/len(chunk) + 1 {
		s.feed(chunk, emit)
	}
	s.feed([]byte("\n\ndata: after\n\n"), emit)
	if len(got) != 2 || !got[0].over || got[0].id != "big" || len(got[0].data) != 0 || got[1].over || string(got[1].data) != "after" {
		t.Fatalf("events %d: %+v", len(got), got)
	}
}

// A JSON-RPC answer sent with another content type (text/plain) is
// recorded as a frame, so that the transport rules see it
// (bad-content-type); a body of that type that is no JSON stays a frame
// of kind http.
func TestAJSONAnswerOfAnotherContentTypeIsRecordedAsAFrame(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if r.URL.Query().Get("q") == "text" {
			io.WriteString(w, "not found")
			return
		}
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer target.Close()
	p := proxyTo(t, target.URL+"/mcp")
	for _, q := range []string{"json", "text"} {
		resp, err := http.Post(p.url+"?q="+q, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	_, evs := p.frames(t)
	var answers []string
	for _, ev := range evs {
		if ev.Dir == classify.S2H {
			answers = append(answers, string(ev.Frame))
		}
	}
	if len(answers) != 2 || answers[0] != `{"jsonrpc":"2.0","id":1,"result":{}}` || answers[1] != "" {
		t.Errorf("answers recorded as %q; want the JSON one as its frame, the text one as a frame of kind http", answers)
	}
}

// An SSE response's end is a frame of its own only when it says
// something the events did not: a request of its POST it left
// unanswered (the rules judge it stream-broken). A stream that answered
// every request ends with its last event, so that a server answering in
// streams does not get a row more per call than one answering in JSON.
func TestAStreamsEndIsRecordedOnlyWhenItLeftARequestUnanswered(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		if bytes.Contains(body, []byte(`"id":1`)) {
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
		}
	}))
	defer target.Close()
	p := proxyTo(t, target.URL+"/mcp")
	for _, req := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, // answered on its stream
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, // the stream ends without its answer
	} {
		resp, err := http.Post(p.url, "application/json", strings.NewReader(req))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	_, evs := p.frames(t)
	var ends []int64
	for _, ev := range evs {
		if bytes.Contains(ev.HTTP, []byte(`"stream_end":true`)) {
			ends = append(ends, httpOf(t, ev).Exchange)
		}
	}
	if len(evs) != 6 || !slices.Equal(ends, []int64{2}) {
		t.Errorf("the session has %d frames, stream ends of exchanges %v; want 6 (two requests, three events, one end) and the end of exchange 2 only", len(evs), ends)
	}
}

// A host that closes a GET stream between events ends it, as hosts end
// the streams they no longer want: the record's end says no error. One
// that closes it in the middle of an event cut that event short, and
// the record says the host closed it.
func TestAHostClosingAStreamBetweenEventsEndsItWhole(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
		if r.URL.Path == "/mcp/mid" {
			io.WriteString(w, "data: {\"jsonrpc\":")
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer target.Close()
	p := proxyTo(t, target.URL+"/mcp")
	for _, path := range []string{"", "/mid"} {
		resp, err := http.Get(p.url + path)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(resp.Body)
		for line := ""; line != "\n"; {
			if line, err = br.ReadString('\n'); err != nil {
				t.Fatal(err)
			}
		}
		resp.Body.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	var ends map[string]httpObject
	for time.Now().Before(deadline) {
		ends = map[string]httpObject{}
		_, evs := p.frames(t)
		for _, ev := range evs {
			if h := httpOf(t, ev); h.Status != 0 && len(ev.Frame) == 0 {
				ends[h.Path] = h
			}
		}
		if len(ends) == 2 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if h, ok := ends["/mcp"]; !ok || h.Error != "" {
		t.Errorf("the stream closed between events ended as %+v (recorded: %v), want no error", h, ok)
	}
	if h := ends["/mcp/mid"]; !strings.Contains(h.Error, "the host closed its connection") {
		t.Errorf("the stream closed in an event ended as %+v, want an error saying the host closed it", h)
	}
}
