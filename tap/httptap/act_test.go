package httptap

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
)

// An injected request goes to the target as the proxy's own POST with
// the headers of the host's last request as the host sent them (the
// records mask the secrets; the request carries them), its Mcp-Method and
// Mcp-Name said of its own body; its answer, an SSE stream here, is
// recorded captured and handed to the injector.
func TestAnInjectedRequestCarriesTheHostsLastHeadersAndItsAnswerIsCaptured(t *testing.T) {
	var mu sync.Mutex
	var injected http.Header
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		if !bytes.Contains(b.Bytes(), []byte(`"rpctap-1"`)) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
			return
		}
		mu.Lock()
		injected = r.Header.Clone()
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"rpctap-1\",\"result\":{\"echo\":true}}\n\n"))
	}))
	defer target.Close()
	u, _ := url.Parse(target.URL + "/mcp")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tp, err := tap.New(tap.Options{Argv: []string{u.String()}, Record: true, Path: path, Transport: sessions.TransportHTTP, Env: []string{},
		Warn: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	feed := tp.Feed()
	srv := httptest.NewServer(New(Options{Target: u, Feed: feed, Redactor: tp.Redactor(), Redact: []string{"X-Api-Key"}}))
	defer srv.Close()

	call := []byte(`{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo","arguments":{}}}`)
	if _, err := tp.Inject(classify.H2S, call, tap.InjectOptions{Capture: true}); err == nil || !strings.Contains(err.Error(), "no request yet") {
		t.Errorf("inject before the host's first request: %v; want that the host has sent none yet", err)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	for k, v := range map[string]string{"Content-Type": "application/json", "Authorization": "Bearer s3cret", "Mcp-Session-Id": "sess-1",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "ping", "X-Api-Key": "k3y", "X-Other": "not carried"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	res, err := tp.Inject(classify.H2S, call, tap.InjectOptions{Capture: true})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ans := <-res.Reply:
		if !bytes.Contains(ans.Body, []byte(`"echo":true`)) {
			t.Errorf("the injector got %s, want the answer", ans.Body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the injected request's answer never came to the injector")
	}
	mu.Lock()
	for k, want := range map[string]string{"Authorization": "Bearer s3cret", "Mcp-Session-Id": "sess-1", "Mcp-Protocol-Version": "2026-07-28",
		"Mcp-Method": "tools/call", "Mcp-Name": "echo", "X-Api-Key": "k3y", "X-Other": "", "Accept": "application/json, text/event-stream"} {
		if got := injected.Get(k); got != want {
			t.Errorf("the injected request carried %s %q, want %q", k, got, want)
		}
	}
	mu.Unlock()
	srv.Close()
	feed.Close()
	rec, _ := os.ReadFile(path)
	if bytes.Contains(rec, []byte("s3cret")) || bytes.Contains(rec, []byte("k3y")) {
		t.Errorf("the session file holds a secret the host sent:\n%s", rec)
	}
	if !bytes.Contains(rec, []byte(`"dir":"h2s","src":"inject"`)) || bytes.Count(rec, []byte(`"dir":"s2h","captured":true`)) != 2 {
		t.Errorf("the session file lacks the injected request or its two captured frames:\n%s", rec)
	}
}

// A host that speaks no revision with Mcp-Method gets none on an
// injected request; one that does gets the injected body's, and no
// Mcp-Name left over from its own last request.
func TestAnInjectedRequestsMCPHeadersAreThoseOfItsOwnBody(t *testing.T) {
	for _, c := range []struct {
		last       http.Header
		body       string
		method, nm string
	}{
		{http.Header{}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`, "", ""},
		{http.Header{"Mcp-Method": {"tools/call"}, "Mcp-Name": {"old"}}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "tools/list", ""},
		{http.Header{"Mcp-Method": {"ping"}}, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///x"}}`, "resources/read", "file:///x"},
		{http.Header{"Mcp-Method": {"ping"}}, `{"jsonrpc":"2.0","id":1,"result":{}}`, "", ""},
	} {
		h := c.last.Clone()
		nameMCPHeaders(h, []byte(c.body))
		if h.Get("Mcp-Method") != c.method || h.Get("Mcp-Name") != c.nm {
			t.Errorf("after %v, %s: Mcp-Method %q Mcp-Name %q; want %q %q", c.last, c.body, h.Get("Mcp-Method"), h.Get("Mcp-Name"), c.method, c.nm)
		}
	}
}

// A host's POST the view holds goes on as the view decides: dropped, a
// notification is answered 202 as a server would and a request is left
// for the host to give up on (its answer never comes, as on a pipe);
// answered in place, the host gets the view's reply; the target gets
// none of them.
func TestAHeldRequestDroppedOrAnsweredInPlaceNeverReachesTheTarget(t *testing.T) {
	var mu sync.Mutex
	var got []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		mu.Lock()
		got = append(got, b.String())
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer target.Close()
	u, _ := url.Parse(target.URL + "/mcp")
	name := "httptap-hold-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tp, err := tap.New(tap.Options{Argv: []string{u.String()}, Name: name, Record: true, Path: path, Listen: true, Transport: sessions.TransportHTTP, Env: []string{},
		Warn: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	feed := tp.Feed()
	srv := httptest.NewServer(New(Options{Target: u, Feed: feed, Redactor: tp.Redactor()}))
	defer srv.Close()
	info, err := tap.FindTap(name)
	if err != nil {
		t.Fatal(err)
	}
	filter := "method:hold/*"
	view, err := tap.OpenHold(info.Socket, &filter, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	helds, set := make(chan tap.HeldFrame, 8), make(chan struct{}, 1)
	go func() {
		for {
			ev, err := view.Next()
			if err != nil {
				return
			}
			if ev.Held != nil {
				helds <- *ev.Held
			}
			if ev.OK != nil && ev.Act == "filter" {
				set <- struct{}{}
			}
		}
	}()
	select {
	case <-set: // the filter is in force
	case <-time.After(10 * time.Second):
		t.Fatal("the tap never said the view's filter is set")
	}
	heldNext := func() tap.HeldFrame {
		t.Helper()
		select {
		case h := <-helds:
			return h
		case <-time.After(10 * time.Second):
			t.Fatal("the view was never told of a held frame")
		}
		return tap.HeldFrame{}
	}
	post := func(ctx context.Context, body string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		return http.DefaultClient.Do(req)
	}
	type answer struct {
		status int
		body   string
		err    error
	}
	answered := func(ch chan answer) answer {
		t.Helper()
		select {
		case a := <-ch:
			return a
		case <-time.After(10 * time.Second):
			t.Fatal("the host's request was never answered")
		}
		return answer{}
	}
	async := func(ctx context.Context, body string) chan answer {
		ch := make(chan answer, 1)
		go func() {
			resp, err := post(ctx, body)
			if err != nil {
				ch <- answer{err: err}
				return
			}
			var b bytes.Buffer
			b.ReadFrom(resp.Body)
			resp.Body.Close()
			ch <- answer{status: resp.StatusCode, body: b.String()}
		}()
		return ch
	}
	note := async(context.Background(), `{"jsonrpc":"2.0","method":"hold/note"}`)
	view.Drop(heldNext().N)
	if a := answered(note); a.err != nil || a.status != http.StatusAccepted {
		t.Errorf("a dropped notification was answered %d %v, want 202", a.status, a.err)
	}
	reply := async(context.Background(), `{"jsonrpc":"2.0","id":7,"method":"hold/ask"}`)
	view.Reply(heldNext().N, []byte(`{"jsonrpc":"2.0","id":7,"result":{"from":"the view"}}`))
	if a := answered(reply); a.err != nil || a.status != http.StatusOK || !strings.Contains(a.body, "the view") {
		t.Errorf("a request answered in place came back %d %q %v, want 200 with the view's reply", a.status, a.body, a.err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dropped := async(ctx, `{"jsonrpc":"2.0","id":8,"method":"hold/ask"}`)
	view.Drop(heldNext().N)
	select {
	case a := <-dropped:
		t.Errorf("a dropped request was answered: %d %q %v", a.status, a.body, a.err)
	case <-time.After(200 * time.Millisecond): // the host waits, as for an answer that never comes
		cancel()
		answered(dropped)
	}
	if resp, err := post(context.Background(), `{"jsonrpc":"2.0","method":"other"}`); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("a request the filter does not hold: %v %v", resp, err)
	}
	mu.Lock()
	if len(got) != 1 || !strings.Contains(got[0], `"other"`) {
		t.Errorf("the target got %q, want only the frame that was not held", got)
	}
	mu.Unlock()
	srv.Close()
	feed.Close()
	rec, _ := os.ReadFile(path)
	if bytes.Count(rec, []byte(`"held":"dropped"`)) != 2 || !bytes.Contains(rec, []byte(`"held":"answered"`)) || !bytes.Contains(rec, []byte(`"src":"inject"`)) {
		t.Errorf("the session file lacks the drops, or the reply in place:\n%s", rec)
	}
}

// A frame injected toward the host goes into the host's open GET stream
// as an event of its own, between two of the server's, never inside one;
// with no stream open, or with the server's event half written, it is
// refused with a sentence. The host's answer to an injected request is
// kept from the server (answered 202) and handed to the injector.
func TestAFrameInjectedTowardTheHostIsAnEventOfTheOpenStreamAndItsAnswerIsKept(t *testing.T) {
	step := make(chan string)
	var mu sync.Mutex
	var posts []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			var b bytes.Buffer
			b.ReadFrom(r.Body)
			mu.Lock()
			posts = append(posts, b.String())
			mu.Unlock()
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for s := range step {
			io.WriteString(w, s)
			w.(http.Flusher).Flush()
		}
	}))
	defer target.Close()
	defer close(step)
	u, _ := url.Parse(target.URL + "/mcp")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tp, err := tap.New(tap.Options{Argv: []string{u.String()}, Record: true, Path: path, Transport: sessions.TransportHTTP, Env: []string{},
		Warn: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	feed := tp.Feed()
	srv := httptest.NewServer(New(Options{Target: u, Feed: feed, Redactor: tp.Redactor()}))
	defer srv.Close()
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	if _, err := tp.Inject(classify.S2H, note, tap.InjectOptions{}); err == nil || !strings.Contains(err.Error(), "no response stream to the host is open") {
		t.Errorf("inject toward the host with no stream open: %v", err)
	}
	resp, err := http.Get(srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	host := bufio.NewReader(resp.Body)
	event := func() string {
		t.Helper()
		var ev strings.Builder
		for {
			line, err := host.ReadString('\n')
			if err != nil {
				t.Fatalf("the host's stream ended: %v", err)
			}
			if line == "\n" {
				return ev.String()
			}
			ev.WriteString(line)
		}
	}
	step <- "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"
	if ev := event(); !strings.Contains(ev, "notifications/message") {
		t.Fatalf("the host read %q, want the server's event", ev)
	}
	if _, err := tp.Inject(classify.S2H, note, tap.InjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := event(); ev != "data: "+string(note)+"\n" {
		t.Errorf("the host read %q, want the injected frame as an event of its own", ev)
	}
	for _, half := range []string{"data: {\"jsonrpc\":\"2.0\",", "\"method\":\"notifications/second\"}\n"} { // half a line, then a line of an event not ended
		step <- half
		if _, err := io.ReadFull(host, make([]byte, len(half))); err != nil { // the proxy relayed it
			t.Fatal(err)
		}
		if _, err := tp.Inject(classify.S2H, note, tap.InjectOptions{}); err == nil || !strings.Contains(err.Error(), "middle of a server's event") {
			t.Errorf("inject after the server wrote %q of an event: %v", half, err)
		}
	}
	step <- "\n"
	if ev := event(); ev != "" {
		t.Errorf("the host read %q, want the end of the server's second event", ev)
	}
	ask := []byte(`{"jsonrpc":"2.0","id":"rpctap-r1","method":"roots/list"}`)
	res, err := tp.Inject(classify.S2H, ask, tap.InjectOptions{Capture: true})
	if err != nil {
		t.Fatal(err)
	}
	if ev := event(); !strings.Contains(ev, "roots/list") {
		t.Errorf("the host read %q, want the injected request", ev)
	}
	answer, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":"rpctap-r1","result":{"roots":[]}}`))
	if err != nil || answer.StatusCode != http.StatusAccepted {
		t.Fatalf("the host's answer was answered %v %v, want 202", answer, err)
	}
	select {
	case ans := <-res.Reply:
		if !bytes.Contains(ans.Body, []byte(`"roots"`)) {
			t.Errorf("the injector got %s", ans.Body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the host's answer never came to the injector")
	}
	mu.Lock()
	if len(posts) != 0 {
		t.Errorf("the server got %q, want nothing (the answer is the injector's)", posts)
	}
	mu.Unlock()
	resp.Body.Close()
	srv.Close()
	feed.Close()
	rec, _ := os.ReadFile(path)
	if bytes.Count(rec, []byte(`"dir":"s2h","src":"inject"`)) != 2 || !bytes.Contains(rec, []byte(`"dir":"h2s","captured":true`)) {
		t.Errorf("the session file lacks the frames injected toward the host, or the host's captured answer:\n%s", rec)
	}
}
