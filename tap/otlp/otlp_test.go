package otlp

import (
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/tap"
	"github.com/rpctap/rpctap/tap/otlp/otlptest"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestSpansReachTheCollectorWithRPCAttributesAndTheirTraceParent(t *testing.T) {
	col := otlptest.NewCollector(t)
	var warnings []string
	e, err := New(Config{Endpoint: col.URL, Headers: []string{"x-team=rpc=tap"}, Service: "server-everything", Session: "s1",
		Getenv: env(nil), Warn: func(s string) { warnings = append(warnings, s) }})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	e.Send(tap.Call{Dir: classify.H2S, Method: "tools/call", ID: "7", Start: t0, End: t0.Add(1500 * time.Microsecond), TraceParent: parent, TraceState: "k=v"})
	e.Send(tap.Call{Dir: classify.H2S, Method: "nope", ID: "a-b", Start: t0, End: t0.Add(time.Millisecond), HasError: true, HasCode: true, ErrorCode: -32601})
	e.Send(tap.Call{Dir: classify.S2H, Method: "roots/list", ID: "0", Start: t0, End: t0.Add(time.Millisecond), TraceParent: "junk"})
	st := e.Close(30 * time.Second)
	if st.Sent != 3 || st.Dropped != 0 || st.Failed != 0 || len(warnings) != 0 {
		t.Fatalf("stats %+v, warnings %q; want 3 sent", st, warnings)
	}
	spans, res := col.Spans()
	if len(spans) != 3 {
		t.Fatalf("the collector got %d spans, want 3", len(spans))
	}
	if res["service.name"] != "server-everything" {
		t.Errorf("resource %v, want service.name server-everything", res)
	}
	if got := col.Paths()[0]; got != "/v1/traces" {
		t.Errorf("exported to %s, want /v1/traces", got)
	}
	if got := col.Headers()[0].Get("x-team"); got != "rpc=tap" {
		t.Errorf("header x-team = %q, want rpc=tap", got)
	}
	byName := map[string]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	call, nope, roots := byName["tools/call"], byName["nope"], byName["roots/list"]
	if call == nil || nope == nil || roots == nil {
		t.Fatalf("spans %v", spans)
	}
	a := otlptest.Attrs(call.Attributes)
	want := map[string]string{"rpc.system": "jsonrpc", "rpc.method": "tools/call", "rpc.jsonrpc.request_id": "7", "rpc.jsonrpc.version": "2.0", "rpctap.direction": "h2s", "rpctap.session.id": "s1"}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("tools/call: %s = %q, want %q", k, a[k], v)
		}
	}
	if _, ok := a["rpc.jsonrpc.error_code"]; ok {
		t.Errorf("a result has an error code: %v", a)
	}
	// The child of the host's span: same trace, its parent the span the
	// traceparent names.
	if hex.EncodeToString(call.TraceId) != "4bf92f3577b34da6a3ce929d0e0e4736" || hex.EncodeToString(call.ParentSpanId) != "00f067aa0ba902b7" {
		t.Errorf("tools/call: trace %x parent %x, want the traceparent's", call.TraceId, call.ParentSpanId)
	}
	if call.TraceState != "k=v" {
		t.Errorf("trace state %q", call.TraceState)
	}
	if call.StartTimeUnixNano != uint64(t0.UnixNano()) || call.EndTimeUnixNano-call.StartTimeUnixNano != 1_500_000 {
		t.Errorf("tools/call: %d → %d, want the request's and the answer's times", call.StartTimeUnixNano, call.EndTimeUnixNano)
	}
	if call.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("kind %v", call.Kind)
	}
	// An error answer: its code, and the span's status.
	if a := otlptest.Attrs(nope.Attributes); a["rpc.jsonrpc.error_code"] != "int:-32601" || nope.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("an error answer: %v, status %v", a, nope.Status)
	}
	// No usable traceparent: a root span of a trace of its own.
	if len(nope.ParentSpanId) != 0 || len(roots.ParentSpanId) != 0 || string(roots.TraceId) == string(call.TraceId) {
		t.Errorf("spans without a traceparent have a parent: %x %x", nope.ParentSpanId, roots.ParentSpanId)
	}
	if otlptest.Attrs(roots.Attributes)["rpctap.direction"] != "s2h" {
		t.Errorf("roots/list: %v", otlptest.Attrs(roots.Attributes))
	}
}

func TestTheStandardOTELVariablesNameTheCollectorAndItsHeaders(t *testing.T) {
	col := otlptest.NewCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20abc")
	t.Setenv("OTEL_SERVICE_NAME", "from-env")
	if !Wanted("", os.Getenv) {
		t.Fatal("OTEL_EXPORTER_OTLP_ENDPOINT does not turn live OTLP on")
	}
	e, err := New(Config{Service: "srv", Getenv: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	e.Send(tap.Call{Dir: classify.H2S, Method: "ping", ID: "1", Start: time.Now(), End: time.Now()})
	if st := e.Close(30 * time.Second); st.Sent != 1 {
		t.Fatalf("stats %+v", st)
	}
	_, res := col.Spans()
	if col.Paths()[0] != "/v1/traces" || col.Headers()[0].Get("Authorization") != "Bearer abc" || res["service.name"] != "from-env" {
		t.Errorf("path %s, authorization %q, service %q", col.Paths()[0], col.Headers()[0].Get("Authorization"), res["service.name"])
	}
}

func TestLiveOTLPIsWantedOnlyWhenAnEndpointIsGiven(t *testing.T) {
	for _, c := range []struct {
		flag string
		env  map[string]string
		want bool
	}{
		{"", nil, false},
		{"http://c:4318", nil, true},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, false},
		{"", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
	} {
		if got := Wanted(c.flag, env(c.env)); got != c.want {
			t.Errorf("Wanted(%q, %v) = %v", c.flag, c.env, got)
		}
	}
}

func TestSettingsRpctapCannotUseAreRefusedSayingWhatToType(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		says string
	}{
		{Config{Endpoint: "localhost:4318"}, "--otlp-endpoint http://localhost:4318"},
		{Config{Endpoint: "ftp://x"}, "not an http or https URL"},
		{Config{Endpoint: "http://x", Headers: []string{"novalue"}}, "KEY=VALUE"},
		{Config{Endpoint: "http://x", Getenv: env(map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})}, "set it to http/protobuf"},
	} {
		if c.cfg.Getenv == nil {
			c.cfg.Getenv = env(nil)
		}
		_, err := New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%+v: %v, want an error saying %q", c.cfg, err, c.says)
		}
	}
}

// A collector that takes the connection and never answers: Send never
// waits for it, the calls it cannot take are dropped, and that is said
// once; Close waits no longer than it is told to.
func TestACollectorThatNeverAnswersNeitherBlocksSendNorCloseAndIsSaidOnce(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	defer srv.Close()
	defer close(hang)
	var mu sync.Mutex
	var warnings []string
	e, err := New(Config{Endpoint: srv.URL, Getenv: env(nil), QueueSize: 16, Warn: func(s string) {
		mu.Lock()
		warnings = append(warnings, s)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20_000 // more than the SDK's queue and this one
	done := make(chan struct{})
	go func() {
		for i := range n {
			e.Send(tap.Call{Dir: classify.H2S, Method: "tools/call", ID: strconv.Itoa(i), Start: time.Now(), End: time.Now()})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("Send waited for a collector that never answers")
	}
	closed := make(chan Stats)
	go func() { closed <- e.Close(100 * time.Millisecond) }()
	var st Stats
	select {
	case st = <-closed:
	case <-time.After(60 * time.Second):
		t.Fatal("Close waited past its limit for a collector that never answers")
	}
	if st.Calls != n || st.Dropped == 0 || st.Sent != 0 {
		t.Errorf("stats %+v: want all %d calls seen, some dropped, none sent", st, n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "dropped") || !strings.Contains(warnings[0], srv.URL) {
		t.Errorf("warnings %q, want one saying spans are dropped", warnings)
	}
}
