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
	"testing"
	"time"

	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
)

// holdHarness is a proxy in front of target, with a view that holds
// what s2h matches toward the host.
type holdHarness struct {
	t     *testing.T
	srv   *httptest.Server
	view  *tap.HoldClient
	feed  *tap.Feed
	path  string
	helds chan tap.HeldFrame
}

func newHoldHarness(t *testing.T, target *httptest.Server, s2h string) *holdHarness {
	t.Helper()
	u, _ := url.Parse(target.URL + "/mcp")
	name := "httptap-hhold-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tp, err := tap.New(tap.Options{Argv: []string{u.String()}, Name: name, Record: true, Path: path, Listen: true, Transport: sessions.TransportHTTP, Env: []string{},
		Warn: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	feed := tp.Feed()
	srv := httptest.NewServer(New(Options{Target: u, Feed: feed, Redactor: tp.Redactor()}))
	info, err := tap.FindTap(name)
	if err != nil {
		t.Fatal(err)
	}
	view, err := tap.OpenHold(info.Socket, nil, &s2h)
	if err != nil {
		t.Fatal(err)
	}
	h := &holdHarness{t: t, srv: srv, view: view, feed: feed, path: path, helds: make(chan tap.HeldFrame, 8)}
	set := make(chan struct{}, 1)
	go func() {
		for {
			ev, err := view.Next()
			if err != nil {
				return
			}
			if ev.Held != nil && ev.Held.Matched {
				h.helds <- *ev.Held
			}
			if ev.OK != nil && ev.Act == "filter" {
				set <- struct{}{}
			}
			if ev.Notice != "" {
				t.Errorf("the view was told %q", ev.Notice)
			}
		}
	}()
	select {
	case <-set:
	case <-time.After(10 * time.Second):
		t.Fatal("the tap never said the view's filter is set")
	}
	return h
}

func (h *holdHarness) held() tap.HeldFrame {
	h.t.Helper()
	select {
	case f := <-h.helds:
		return f
	case <-time.After(10 * time.Second):
		h.t.Fatal("the view was never told of a held frame")
	}
	return tap.HeldFrame{}
}

// record closes the session and returns its file.
func (h *holdHarness) record() string {
	h.view.Close()
	h.srv.Close()
	h.feed.Close()
	rec, _ := os.ReadFile(h.path)
	return string(rec)
}

// A server's JSON answer the view holds reaches the host as the view
// decides: edited, with the edit's Content-Length; released as it came;
// dropped, never (the host waits, as for an answer that never comes on a
// pipe). The filter names the request's method: the answer is its.
func TestAHeldJSONAnswerReachesTheHostEditedReleasedOrNotAtAll(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		id := strings.TrimSuffix(strings.SplitN(b.String(), `"id":`, 2)[1], "}")
		id, _, _ = strings.Cut(id, ",")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"from":"the server"}}`)
	}))
	defer target.Close()
	h := newHoldHarness(t, target, "method:hold/*")
	type answer struct {
		status int
		length int64
		body   string
		err    error
	}
	ask := func(ctx context.Context, id, method string) chan answer {
		ch := make(chan answer, 1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", h.srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","method":"`+method+`","id":`+id+`}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				ch <- answer{err: err}
				return
			}
			var b bytes.Buffer
			_, err = b.ReadFrom(resp.Body)
			resp.Body.Close()
			ch <- answer{status: resp.StatusCode, length: resp.ContentLength, body: b.String(), err: err}
		}()
		return ch
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
	edited := ask(context.Background(), "1", "hold/a")
	f := h.held()
	if !strings.Contains(f.Frame, "the server") || f.Dir != "s2h" {
		t.Fatalf("the view held %+v, want the server's answer", f)
	}
	select {
	case a := <-edited:
		t.Fatalf("the host got the held answer before the view decided: %+v", a)
	case <-time.After(200 * time.Millisecond):
	}
	edit := `{"jsonrpc":"2.0","id":1,"result":{"from":"the view, longer than the server's answer"}}`
	h.view.Edit(f.N, []byte(edit))
	if a := answered(edited); a.err != nil || a.status != http.StatusOK || a.body != edit || a.length != int64(len(edit)) {
		t.Errorf("an edited answer came to the host as %d, length %d, %q, %v; want 200 and the edit whole", a.status, a.length, a.body, a.err)
	}
	released := ask(context.Background(), "2", "hold/b")
	h.view.Forward(h.held().N)
	if a := answered(released); a.err != nil || !strings.Contains(a.body, "the server") {
		t.Errorf("a released answer came to the host as %q, %v", a.body, a.err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dropped := ask(ctx, "3", "hold/c")
	h.view.Drop(h.held().N)
	select {
	case a := <-dropped:
		t.Errorf("the host got a dropped answer: %+v", a)
	case <-time.After(200 * time.Millisecond):
		cancel()
		answered(dropped)
	}
	if a := answered(ask(context.Background(), "4", "other")); !strings.Contains(a.body, "the server") {
		t.Errorf("an answer the filter does not hold came as %q, %v", a.body, a.err)
	}
	rec := h.record()
	for _, want := range []string{`"held":"edited"`, `"held":"forwarded"`, `"held":"dropped"`} {
		if !strings.Contains(rec, want) {
			t.Errorf("the session file lacks %s:\n%s", want, rec)
		}
	}
	if n := strings.Count(rec, `\"from\":\"the server\"`); n != 4 {
		t.Errorf("the session file holds the server's answer %d times, want 4 (each once):\n%s", n, rec)
	}
}

// An SSE event the view holds reaches the host once decided, at its
// event boundary: edited, its data lines are the edit's and its id is
// kept; dropped, it never comes. The events behind it wait behind it, in
// order; those the filter does not hold go on as they come.
func TestAHeldSSEEventReachesTheHostEditedOrNotAtAllAndTheEventsBehindItWait(t *testing.T) {
	step := make(chan string, 8)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	h := newHoldHarness(t, target, "method:hold/*")
	resp, err := http.Get(h.srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan string, 8)
	go func() {
		host := bufio.NewReader(resp.Body)
		var ev strings.Builder
		for {
			line, err := host.ReadString('\n')
			if err != nil {
				close(events)
				return
			}
			if line == "\n" {
				events <- ev.String()
				ev.Reset()
				continue
			}
			ev.WriteString(line)
		}
	}()
	event := func() string {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("the host never got the next event")
		}
		return ""
	}
	quiet := func(why string) {
		t.Helper()
		select {
		case ev := <-events:
			t.Errorf("%s, the host got %q", why, ev)
		case <-time.After(200 * time.Millisecond):
		}
	}
	step <- "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"other/first\"}\n\n"
	if ev := event(); !strings.Contains(ev, "other/first") {
		t.Fatalf("the host got %q, want an event the filter does not hold", ev)
	}
	step <- "id: 2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\n"
	step <- "data: \"method\":\"hold/edit\"}\r\n\r\n"
	step <- "id: 3\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"other/behind\"}\n\n"
	f := h.held()
	if !strings.Contains(f.Frame, "hold/edit") {
		t.Fatalf("the view held %q", f.Frame)
	}
	quiet("while an event was held")
	edit := `{"jsonrpc":"2.0","method":"hold/edited","params":{"by":"the view"}}`
	h.view.Edit(f.N, []byte(edit))
	if ev := event(); ev != "id: 2\nevent: message\ndata: "+edit+"\n" {
		t.Errorf("the host got %q, want the edit with the event's id and type", ev)
	}
	if ev := event(); !strings.Contains(ev, "other/behind") {
		t.Errorf("the host got %q, want the event that waited behind the held one", ev)
	}
	step <- "id: 4\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"hold/drop\"}\n\n"
	step <- "id: 5\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"other/last\"}\n\n"
	f = h.held()
	quiet("while an event was held")
	h.view.Drop(f.N)
	if ev := event(); !strings.Contains(ev, "other/last") {
		t.Errorf("the host got %q after a dropped event, want the next one", ev)
	}
	resp.Body.Close()
	rec := h.record()
	for _, want := range []string{`"held":"edited"`, `"held":"dropped"`, "hold/edited", "other/behind"} {
		if !strings.Contains(rec, want) {
			t.Errorf("the session file lacks %s:\n%s", want, rec)
		}
	}
}
