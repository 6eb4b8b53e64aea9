package tap

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

func httpTap(t *testing.T) (*Tap, *Feed, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tp, err := New(Options{Argv: []string{"http://127.0.0.1:1/mcp"}, Record: true, Path: path,
		Transport: sessions.TransportHTTP, Env: []string{}, Warn: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	return tp, tp.Feed(), path
}

// A tap of rpctap http sends a frame injected toward the server through
// its caller (as the proxy's own request), records it as the user's, and
// hands the captured answer to whoever waits; toward the host it hands
// the frame to its caller's other sender.
func TestAnHTTPTapInjectsTowardTheServerThroughItsCallerAndCapturesTheAnswer(t *testing.T) {
	tp, feed, path := httpTap(t)
	ping := []byte(`{"jsonrpc":"2.0","id":"z","method":"ping"}`)
	if _, err := tp.Inject(classify.H2S, ping, InjectOptions{Capture: true}); err == nil || !strings.Contains(err.Error(), "not started") {
		t.Errorf("inject before the proxy set how to send: %v; want that the session has not started", err)
	}
	var sent, toHost [][]byte
	feed.OnInject(func(body []byte) error {
		sent = append(sent, bytes.Clone(body))
		info := &sessions.HTTPInfo{Exchange: 1, Method: "POST", Path: "/mcp"}
		feed.Injected(classify.H2S, body, info)
		feed.Captured(classify.S2H, []byte(`{"jsonrpc":"2.0","id":"z","result":{}}`), &sessions.HTTPInfo{Exchange: 1, Method: "POST", Path: "/mcp", Status: 200})
		return nil
	}, func(body []byte) error {
		toHost = append(toHost, bytes.Clone(body))
		return nil
	})
	note := []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	if _, err := tp.Inject(classify.S2H, note, InjectOptions{Capture: true, Keep: true}); err != nil || len(toHost) != 1 || !bytes.Equal(toHost[0], note) {
		t.Errorf("inject toward the host: %v; the proxy was given %q", err, toHost)
	}
	if _, err := tp.Inject(classify.H2S, ping, InjectOptions{}); !errors.Is(err, errForwardHTTP) {
		t.Errorf("inject a request whose answer would go to the host: %v; want %v", err, errForwardHTTP)
	}
	res, err := tp.Inject(classify.H2S, ping, InjectOptions{Capture: true})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ans := <-res.Reply:
		if !bytes.Contains(ans.Body, []byte(`"result"`)) {
			t.Errorf("the captured answer is %s", ans.Body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the answer the proxy captured never came to the injector")
	}
	if len(sent) != 1 || !bytes.Equal(sent[0], ping) {
		t.Errorf("the proxy was given %q to send, want the one frame", sent)
	}
	feed.Close()
	rec, _ := os.ReadFile(path)
	if !bytes.Contains(rec, []byte(`"dir":"h2s","src":"inject"`)) || !bytes.Contains(rec, []byte(`"dir":"s2h","captured":true`)) {
		t.Errorf("the session file lacks the injected frame or its captured answer:\n%s", rec)
	}
}

// A view's intercept connection to a tap of rpctap http holds the
// caller's frames with the stdio rules: a held frame waits for the view,
// one behind it waits for it and goes after it, an edit goes on in its
// place, and when the view goes the frames it held go on as they were.
func TestAnHTTPTapHoldsFramesForAViewInOrderAndLetsThemGoWhenItGoes(t *testing.T) {
	tp, feed, path := httpTap(t)
	view, c := net.Pipe()
	filter := "method:hold/*"
	go func() {
		defer c.Close()
		tp.serveIntercept(c, bufio.NewReader(c), request{Op: "intercept", H2S: &filter})
	}()
	h := &HoldClient{c: view, r: bufio.NewReader(view)}
	next := func(ok func(HoldEvent) bool) HoldEvent {
		t.Helper()
		for {
			ev, err := h.Next()
			if err != nil {
				t.Fatal(err)
			}
			if ok(ev) {
				return ev
			}
		}
	}
	next(func(ev HoldEvent) bool { return ev.OK != nil && ev.Act == "filter" })
	type out struct {
		name string
		held Held
		ok   bool
	}
	outs := make(chan out, 4)
	hold := func(name, body string) {
		go func() {
			held, ok := feed.Hold(classify.H2S, []byte(body), &sessions.HTTPInfo{Method: "POST", Path: "/mcp"})
			outs <- out{name, held, ok}
			if ok {
				held.Relayed()
			}
		}()
	}
	if _, ok := feed.Hold(classify.H2S, []byte(`{"jsonrpc":"2.0","method":"other"}`), &sessions.HTTPInfo{}); ok {
		t.Error("a frame the filter does not hold, with none held, was held")
	}
	hold("first", `{"jsonrpc":"2.0","id":1,"method":"hold/a"}`)
	first := next(func(ev HoldEvent) bool { return ev.Held != nil }).Held
	hold("behind", `{"jsonrpc":"2.0","method":"notifications/behind"}`)
	next(func(ev HoldEvent) bool { return ev.Held != nil && !ev.Held.Matched })
	select {
	case o := <-outs:
		t.Fatalf("%s went on before the view decided: %+v", o.name, o.held)
	default:
	}
	h.Edit(first.N, []byte(`{"jsonrpc":"2.0","id":1,"method":"hold/edited"}`))
	went := func() out {
		t.Helper()
		select {
		case o := <-outs:
			return o
		case <-time.After(10 * time.Second):
			t.Fatal("a held frame never went on")
		}
		return out{}
	}
	for _, want := range []string{"first", "behind"} {
		o := went()
		if o.name != want || !o.ok {
			t.Fatalf("%s went on (%v), want %s next", o.name, o.ok, want)
		}
		if want == "first" && (o.held.How != sessions.HeldEdited || !bytes.Contains(o.held.Body, []byte("hold/edited"))) {
			t.Errorf("the edited frame went on as %s: %s", o.held.How, o.held.Body)
		}
		if want == "behind" && o.held.How != sessions.HeldWaited {
			t.Errorf("the frame behind went on as %s", o.held.How)
		}
	}
	hold("last", `{"jsonrpc":"2.0","id":2,"method":"hold/b"}`)
	next(func(ev HoldEvent) bool { return ev.Held != nil && strings.Contains(ev.Held.Frame, "hold/b") })
	view.Close()
	if o := went(); o.held.How != sessions.HeldDetached || !bytes.Contains(o.held.Body, []byte("hold/b")) {
		t.Errorf("when the view went, the frame it held went on as %s: %s", o.held.How, o.held.Body)
	}
	feed.Close()
	rec, _ := os.ReadFile(path)
	for _, want := range []string{`"held":"edited"`, `"held":"waited"`, `"held":"detached"`, `"http":{`} {
		if !bytes.Contains(rec, []byte(want)) {
			t.Errorf("the session file lacks %s:\n%s", want, rec)
		}
	}
}
