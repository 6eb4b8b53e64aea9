package tap

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// The tap hands Options.Calls every request that got its answer, with its
// trace context, its answer's error code, and its times; batches pair
// member by member. cat as the server sends every frame back, so each
// request is answered in both directions.
func TestCallsGetEveryAnsweredRequestWithItsTraceContextAndErrorCode(t *testing.T) {
	var mu sync.Mutex
	var got []Call
	s := startSession(t, Options{Argv: []string{"/bin/cat"}, Framing: classify.FramingNDJSON, NoRedact: true, Calls: func(c Call) {
		mu.Lock()
		got = append(got, c)
		mu.Unlock()
	}})
	before := time.Now()
	for _, f := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"k=v"}}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such tool"}}`,
		`[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":"b","method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/x"}]`,
		`[{"jsonrpc":"2.0","id":"zz","result":{}},{"jsonrpc":"2.0","id":"b","error":{"code":-32000,"message":"x"}},{"jsonrpc":"2.0","id":"a","result":{}}]`,
		`{"jsonrpc":"2.0","id":9,"result":{}}`, // answers nothing
	} {
		// Each frame is answered once it has come back: a response
		// that overtook its request would answer nothing.
		s.write(t, []byte(f+"\n"))
		s.out.waitFor(t, f)
	}
	s.in.Close()
	s.wait(t, generous)
	mu.Lock()
	defer mu.Unlock()
	var lines []string
	for _, c := range got {
		lines = append(lines, fmt.Sprintf("%s %s %s err=%v/%v:%d tp=%q ts=%q", c.Dir, c.Method, c.ID, c.HasError, c.HasCode, c.ErrorCode, c.TraceParent, c.TraceState))
		if c.Start.Before(before.Add(-time.Second)) || c.End.Before(c.Start) || c.End.After(time.Now()) {
			t.Errorf("%s %s: start %v end %v, want the times it crossed", c.Dir, c.Method, c.Start, c.End)
		}
	}
	sort.Strings(lines)
	want := []string{
		`h2s ping a err=false/false:0 tp="" ts=""`,
		`h2s tools/call 1 err=true/true:-32601 tp="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" ts="k=v"`,
		`h2s tools/list b err=true/true:-32000 tp="" ts=""`,
		`s2h ping a err=false/false:0 tp="" ts=""`,
		`s2h tools/call 1 err=true/true:-32601 tp="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" ts="k=v"`,
		`s2h tools/list b err=true/true:-32000 tp="" ts=""`,
	}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("calls:\n%q\nwant:\n%q", lines, want)
	}
}

// The trace contexts kept for Calls are bounded: those never answered are
// forgotten past maxOpenCalls, and a request that stays open while others
// come and go does not make the table grow.
func TestCallsKeepBoundedMemoryForRequestsNeverAnswered(t *testing.T) {
	sent := 0
	c := newCalls(func(Call) { sent++ }, time.Now())
	tr := classify.NewTracker(classify.TrackerOptions{MaxInFlight: 100_000})
	seq := int64(0)
	frame := func(dir classify.Direction, f string) {
		seq++
		m := classify.Classify([]byte(f), dir, classify.JSONRPC)
		obs := tr.Observe(seq, time.Duration(seq), &m)
		c.observe(seq, time.Duration(seq), &m, obs.Pairs, nil)
	}
	const meta = `"params":{"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}`
	frame(classify.H2S, `{"jsonrpc":"2.0","id":"open","method":"wait",`+meta+`}`)
	for i := range 5 * maxOpenCalls {
		frame(classify.H2S, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m",%s}`, i, meta))
		frame(classify.S2H, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i))
		if len(c.order)-c.head > 2*maxOpenCalls+1 {
			t.Fatalf("after %d answered requests the table keeps %d keys", i, len(c.order)-c.head)
		}
	}
	if sent != 5*maxOpenCalls || len(c.open) != 1 {
		t.Fatalf("%d calls, %d open; want %d and the one still open", sent, len(c.open), 5*maxOpenCalls)
	}
	for i := range 3 * maxOpenCalls {
		frame(classify.H2S, fmt.Sprintf(`{"jsonrpc":"2.0","id":"never-%d","method":"m",%s}`, i, meta))
	}
	if len(c.open) > maxOpenCalls || len(c.order)-c.head > 2*maxOpenCalls+1 {
		t.Errorf("%d requests never answered: %d kept, %d keys; want at most %d", 3*maxOpenCalls, len(c.open), len(c.order)-c.head, maxOpenCalls)
	}
	// A peer's huge trace context is none: nothing of it is kept.
	c = newCalls(func(Call) {}, time.Now())
	huge := strings.Repeat("0", 1<<20)
	frame(classify.H2S, `{"jsonrpc":"2.0","id":"huge","method":"m","params":{"_meta":{"traceparent":"`+huge+`"}}}`)
	frame(classify.H2S, `{"jsonrpc":"2.0","id":"state","method":"m","params":{"_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"`+huge+`"}}}`)
	if len(c.open) != 1 {
		t.Errorf("%d requests kept, want the one with a usable traceparent", len(c.open))
	}
	for _, tc := range c.open {
		if len(tc.parent)+len(tc.state) > maxTraceParent+maxTraceState {
			t.Errorf("kept %d bytes of trace context", len(tc.parent)+len(tc.state))
		}
	}
}

// A tap of rpctap http hands Options.Calls each answered request with
// what HTTP did in the exchange that carried its answer: its method, its
// path and the response's status. A host's answer to a server's request
// goes in a request of its own, which has no status.
func TestCallsOfAnHTTPTapCarryTheExchangeOfTheirAnswer(t *testing.T) {
	var mu sync.Mutex
	var got []Call
	tp, err := New(Options{Argv: []string{"http://127.0.0.1:1/mcp"}, Transport: sessions.TransportHTTP, Env: []string{}, Warn: func(s string) { t.Log(s) },
		Calls: func(c Call) {
			mu.Lock()
			got = append(got, c)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	feed := tp.Feed()
	post := func(x int64, status int) *sessions.HTTPInfo {
		return &sessions.HTTPInfo{Exchange: x, Method: "POST", Path: "/mcp?t=1", Status: status, ContentType: "application/json"}
	}
	feed.Frame(classify.H2S, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`), post(1, 0))
	feed.Frame(classify.S2H, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), post(1, 200))
	feed.Frame(classify.S2H, []byte(`{"jsonrpc":"2.0","id":"r","method":"roots/list"}`), &sessions.HTTPInfo{Exchange: 2, Method: "GET", Path: "/mcp", Status: 200})
	feed.Frame(classify.H2S, []byte(`{"jsonrpc":"2.0","id":"r","result":{"roots":[]}}`), post(3, 0))
	feed.Close()
	mu.Lock()
	defer mu.Unlock()
	want := []sessions.SpanHTTP{{Method: "POST", Path: "/mcp?t=1", Status: 200}, {Method: "POST", Path: "/mcp?t=1"}}
	if len(got) != 2 || got[0].HTTP != want[0] || got[1].HTTP != want[1] {
		t.Errorf("calls %+v, want their HTTP %+v", got, want)
	}
}
