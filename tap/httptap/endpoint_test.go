package httptap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/rpctap/rpctap/classify"
)

// legacyServer is a server of the legacy HTTP+SSE transport: GET /sse
// opens the stream, whose first event gives endpoint(base), the URL to
// POST to; each POST is answered 202 and its answer comes on the stream.
func legacyServer(t *testing.T, endpoint func(base string) string) *httptest.Server {
	answers := make(chan []byte, 4)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, ": hello\n\nevent: endpoint\ndata: "+endpoint(srv.URL)+"\r\n\r\n")
			w.(http.Flusher).Flush()
			for {
				select {
				case a := <-answers:
					io.WriteString(w, "event: message\ndata: "+string(a)+"\n\n")
					w.(http.Flusher).Flush()
				case <-r.Context().Done():
					return
				}
			}
		case r.Method == http.MethodPost && r.URL.Path == "/messages" && r.URL.Query().Get("sessionId") == "abc":
			var m struct{ ID json.RawMessage }
			json.NewDecoder(r.Body).Decode(&m)
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, "Accepted")
			answers <- []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// legacyHost plays the host: it opens the stream at sseURL, reads the
// endpoint event, POSTs a ping to the endpoint (resolved against
// sseURL), and reads the answer from the stream. It returns the endpoint
// as the event said it and the answer's data.
func legacyHost(t *testing.T, sseURL string) (endpoint, answer string) {
	t.Helper()
	resp, err := http.Get(sseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	data := func() string {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("the stream ended before its event: %v", err)
			}
			if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
				return v
			}
		}
	}
	endpoint = data()
	base, _ := url.Parse(sseURL)
	post, err := base.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := http.Post(post.String(), "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, pr.Body)
	pr.Body.Close()
	if pr.StatusCode != http.StatusAccepted {
		t.Fatalf("the POST to %s was answered %d, want 202", post, pr.StatusCode)
	}
	return endpoint, data()
}

type endpointObject struct {
	Event    string `json:"event"`
	Endpoint string `json:"endpoint"`
	From     string `json:"rewritten_from"`
	Error    string `json:"error"`
}

// endpointRecord finds the record of the endpoint event, and checks the
// session holds the ping and its answer, paired by the tracker.
func endpointRecord(t *testing.T, p *proxied) endpointObject {
	t.Helper()
	h, evs := p.frames(t)
	var got endpointObject
	var found, asked, answered bool
	tr := classify.NewTracker(classify.TrackerOptions{Profile: classify.MCP, Timeout: -1})
	for i, ev := range evs {
		m := h.Classify(ev.Frame, ev.Dir, classify.MCP)
		obs := tr.Observe(int64(i), 0, &m)
		switch {
		case m.Kind == classify.KindHTTP && bytes.Contains(ev.HTTP, []byte(`"event":"endpoint"`)):
			found = true
			json.Unmarshal(ev.HTTP, &got)
		case m.Kind == classify.KindRequest && m.Method() == "ping":
			asked = true
		case m.Kind == classify.KindResponse && len(obs.Pairs) == 1 && obs.Pairs[0].Method == "ping":
			answered = true
		}
	}
	if !found || !asked || !answered {
		t.Errorf("the session has the endpoint event %v, the ping %v, its paired answer %v", found, asked, answered)
	}
	return got
}

func TestALegacyEndpointAtTheTargetIsRewrittenToTheProxyAndRecordedAsARewrite(t *testing.T) {
	srv := legacyServer(t, func(base string) string { return base + "/messages?sessionId=abc" })
	p := proxyTo(t, srv.URL+"/sse")
	endpoint, answer := legacyHost(t, p.url)
	want := p.srv.URL + "/messages?sessionId=abc"
	if endpoint != want || answer != `{"jsonrpc":"2.0","id":5,"result":{}}` {
		t.Fatalf("through the proxy the host got endpoint %q and answer %q, want endpoint %q", endpoint, answer, want)
	}
	rec := endpointRecord(t, p)
	if rec.Endpoint != want || rec.From != srv.URL+"/messages?sessionId=abc" || rec.Error != "" {
		t.Errorf("the endpoint event was recorded as %+v, want %s rewritten from the server's", rec, want)
	}
}

func TestARelativeLegacyEndpointReachesTheHostUnchanged(t *testing.T) {
	srv := legacyServer(t, func(string) string { return "/messages?sessionId=abc" })
	p := proxyTo(t, srv.URL+"/sse")
	endpoint, _ := legacyHost(t, p.url)
	if endpoint != "/messages?sessionId=abc" {
		t.Fatalf("the host got endpoint %q, want the server's path unchanged", endpoint)
	}
	if rec := endpointRecord(t, p); rec.Endpoint != "/messages?sessionId=abc" || rec.From != "" {
		t.Errorf("the endpoint event was recorded as %+v, want the path, not rewritten", rec)
	}
}

func TestAnEndpointOnAnotherServerIsLeftAndTheRecordSaysTheHostGoesAroundTheProxy(t *testing.T) {
	self := url.URL{Scheme: "http", Host: "127.0.0.1:9000"}
	target := &url.URL{Scheme: "http", Host: "127.0.0.1:3001", Path: "/sse"}
	for _, c := range []struct{ sent, given, other string }{
		{"/messages?s=1", "/messages?s=1", ""},
		{"messages", "messages", ""},
		{"http://127.0.0.1:3001/messages?s=1", "http://127.0.0.1:9000/messages?s=1", ""},
		{"http://localhost:3001/m", "http://127.0.0.1:9000/m", ""},
		{"//127.0.0.1:3001/m", "//127.0.0.1:9000/m", ""},
		{"https://127.0.0.1:3001/m", "https://127.0.0.1:3001/m", "https://127.0.0.1:3001"},
		{"http://127.0.0.1:3002/m", "http://127.0.0.1:3002/m", "http://127.0.0.1:3002"},
		{"http://elsewhere.example/m", "http://elsewhere.example/m", "http://elsewhere.example"},
	} {
		given, other := endpointFor(c.sent, target, self)
		if given != c.given || other != c.other {
			t.Errorf("endpoint %q: the host is given %q (other server %q), want %q (%q)", c.sent, given, other, c.given, c.other)
		}
	}
	srv := legacyServer(t, func(string) string { return "http://elsewhere.example/messages?sessionId=abc" })
	p := proxyTo(t, srv.URL+"/sse")
	resp, err := http.Get(p.url)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for line := ""; !strings.HasPrefix(line, "data:"); {
		if line, err = br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	resp.Body.Close()
	_, evs := p.frames(t)
	var rec endpointObject
	for _, ev := range evs {
		if bytes.Contains(ev.HTTP, []byte(`"endpoint"`)) {
			json.Unmarshal(ev.HTTP, &rec)
		}
	}
	if rec.Endpoint != "http://elsewhere.example/messages?sessionId=abc" || rec.From != "" || !strings.Contains(rec.Error, "around rpctap") {
		t.Errorf("an endpoint on another server was recorded as %+v", rec)
	}
}

func TestTheEndpointRewriteWorksWhateverHowTheStreamIsCutIntoReads(t *testing.T) {
	target := &url.URL{Scheme: "http", Host: "t:1"}
	stream := ": c\r\n\r\nretry: 5\r\nevent: endpoint\r\ndata: http://t:1/m?s=1\r\n\r\nevent: message\ndata: {}\n\n"
	want := strings.Replace(stream, "http://t:1/", "http://p:2/", 1)
	for name, in := range map[string]io.Reader{"whole": strings.NewReader(stream), "byte by byte": iotest.OneByteReader(strings.NewReader(stream))} {
		rw := &endpointRewriter{in: io.NopCloser(in), target: target, self: url.URL{Scheme: "http", Host: "p:2"}}
		got, err := io.ReadAll(iotest.OneByteReader(rw))
		if err != nil || string(got) != want || rw.sent != "http://t:1/m?s=1" {
			t.Errorf("%s: the host got %q (%v), want %q", name, got, err, want)
		}
	}
	// A stream whose first event is no endpoint goes unchanged.
	other := "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"u\":\"http://t:1/\"}}\n\nevent: endpoint\ndata: http://t:1/m\n\n"
	rw := &endpointRewriter{in: io.NopCloser(iotest.OneByteReader(strings.NewReader(other))), target: target, self: url.URL{Scheme: "http", Host: "p:2"}}
	if got, _ := io.ReadAll(rw); string(got) != other {
		t.Errorf("a stream whose first event is a message became %q", got)
	}
	// A first event longer than the proxy holds is relayed as it came,
	// from the moment it is: the proxy holds no more of it.
	long := "event: endpoint\ndata: http://t:1/m?" + strings.Repeat("x", holdMax) + "\n\n"
	rw = &endpointRewriter{in: io.NopCloser(iotest.OneByteReader(strings.NewReader(long))), target: target, self: url.URL{Scheme: "http", Host: "p:2"}}
	if got, _ := io.ReadAll(rw); string(got) != long || len(rw.held) != 0 {
		t.Errorf("a first event longer than the proxy holds became %.80q… (%d bytes held)", got, len(rw.held))
	}
}
