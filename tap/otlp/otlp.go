// Package otlp sends a span for every call a tap sees (a request and its
// answer) to an OpenTelemetry collector over OTLP/HTTP, with the
// OpenTelemetry Go SDK and its OTLP exporter.
//
// It is best effort and off the traffic path: the tap hands each call to
// Send, which never waits; calls go through a bounded queue to the SDK's
// batch span processor (bounded too, and blocking only this package's
// goroutine), and are dropped when the collector does not keep up, which
// the Exporter says once.
package otlp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Config configures an Exporter.
type Config struct {
	// Endpoint is the collector's URL (--otlp-endpoint). A URL with no
	// path gets /v1/traces, as OTEL_EXPORTER_OTLP_ENDPOINT does; one with
	// a path is used as it is. "": the OTEL_EXPORTER_OTLP_* variables.
	Endpoint string
	// Headers are K=V pairs sent with every export (--otlp-header), on
	// top of those of OTEL_EXPORTER_OTLP_HEADERS and
	// OTEL_EXPORTER_OTLP_TRACES_HEADERS.
	Headers []string
	// Service is the resource's service.name, unless OTEL_SERVICE_NAME or
	// OTEL_RESOURCE_ATTRIBUTES names one.
	Service string
	// Session is the tap's session id, put on every span.
	Session string
	// Getenv reads the environment (os.Getenv).
	Getenv func(string) string
	// Warn says what goes wrong, one sentence each time.
	Warn func(string)
	// QueueSize bounds the calls waiting for the SDK (default 1024).
	QueueSize int
}

// Wanted reports whether the user asked for live OTLP: an endpoint given,
// or one in OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, unless OTEL_SDK_DISABLED is true or
// OTEL_TRACES_EXPORTER is none.
func Wanted(endpoint string, getenv func(string) string) bool {
	if endpoint != "" {
		return true
	}
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// An Exporter turns calls into spans and sends them. Send may be called
// from one goroutine at a time (the tap's recorder); Close once, after
// the last Send.
type Exporter struct {
	queue   chan tap.Call
	tp      *sdktrace.TracerProvider
	tracer  trace.Tracer
	session string
	where   string // the endpoint, for messages (no credentials)
	warn    func(string)
	worker  chan struct{}
	said    atomic.Bool  // the Exporter has said that spans are lost
	calls   atomic.Int64 // calls handed to Send
	dropped atomic.Int64 // calls dropped at the queue
	failed  atomic.Int64 // spans the collector did not take
	sent    atomic.Int64 // spans the collector took
	// exporting is when the export in flight began (unix ns; 0: none),
	// and failing is set while the last export failed: a collector that
	// is stuck or gone is not waited for at the end.
	exporting atomic.Int64
	failing   atomic.Bool
	// failedAt is when the last export failed (unix ns; 0: it did not):
	// for retryAfter after it, calls are dropped without a span being
	// made, so a collector that is gone costs the machine no CPU.
	failedAt atomic.Int64
	stopOnce sync.Once
}

// New starts an Exporter. Its errors say what to change in the flags or
// the environment.
func New(cfg Config) (*Exporter, error) {
	getenv := cfg.Getenv
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := getenv(name); p != "" {
			if p != "http/protobuf" {
				return nil, fmt.Errorf("%s is %q, but rpctap sends OTLP over HTTP with protobuf: set it to http/protobuf (or unset it) and point the endpoint at the collector's HTTP port (4318 by default)", name, p)
			}
			break
		}
	}
	var opts []otlptracehttp.Option
	where := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if where == "" && getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" {
		where = strings.TrimSuffix(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/") + "/v1/traces"
	}
	if cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--otlp-endpoint %q is not an http or https URL: give the collector's OTLP/HTTP address, as in --otlp-endpoint http://localhost:4318", cfg.Endpoint)
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces"
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
		where = u.String()
	}
	if len(cfg.Headers) > 0 {
		headers := map[string]string{}
		for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
			for k, v := range envHeaders(getenv(name)) {
				headers[k] = v
			}
		}
		for _, kv := range cfg.Headers {
			k, v, ok := strings.Cut(kv, "=")
			if k = strings.TrimSpace(k); !ok || k == "" {
				return nil, fmt.Errorf("--otlp-header %q is not KEY=VALUE: give one header a flag, as in --otlp-header authorization=\"Bearer TOKEN\"", kv)
			}
			headers[k] = v
		}
		opts = append(opts, otlptracehttp.WithHeaders(headers))
	}
	client, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("cannot set up the OTLP exporter: %w", err)
	}
	e := &Exporter{session: cfg.Session, where: withoutCredentials(where), warn: cfg.Warn, worker: make(chan struct{})}
	if e.warn == nil {
		e.warn = func(string) {}
	}
	if e.where == "" {
		e.where = "localhost:4318"
	}
	size := cfg.QueueSize
	if size <= 0 {
		size = 1024
	}
	e.queue = make(chan tap.Call, size)
	res, err := resource.New(context.Background(),
		resource.WithAttributes(attribute.String("service.name", cfg.Service)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && res == nil {
		res = resource.Default()
	}
	// The SDK reports what goes wrong inside it through the global
	// handler, which by default logs every failure on stderr: the host's
	// stderr. rpctap says it once, as it does for lost spans.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { e.lost(err.Error()) }))
	// The SDK's queue of finished spans, smaller than its default unless
	// OTEL_BSP_MAX_QUEUE_SIZE says otherwise: the tap's memory stays small
	// whatever the collector does.
	bsp := []sdktrace.BatchSpanProcessorOption{sdktrace.WithBlocking()}
	if getenv("OTEL_BSP_MAX_QUEUE_SIZE") == "" && getenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE") == "" {
		bsp = append(bsp, sdktrace.WithMaxQueueSize(512), sdktrace.WithMaxExportBatchSize(256))
	}
	e.tp = sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(sdktrace.NewBatchSpanProcessor(&counting{e: e, SpanExporter: client}, bsp...)),
	)
	e.tracer = e.tp.Tracer("github.com/rpctap/rpctap")
	go e.run()
	return e, nil
}

// Send hands a call to the exporter; it never waits. When the queue is
// full the call is dropped.
func (e *Exporter) Send(c tap.Call) {
	e.calls.Add(1)
	select {
	case e.queue <- c:
	default:
		e.dropped.Add(1)
		if !e.said.Load() {
			e.lost(fmt.Sprintf("the queue of %d calls is full", cap(e.queue)))
		}
	}
}

// lost says, the first time only, that spans are being lost and why.
func (e *Exporter) lost(why string) {
	e.say(fmt.Sprintf("spans for the OTLP collector at %s are being dropped (%s); traffic is not slowed, and rpctap says this once", e.where, classify.EscapeString(why, 300)))
}

// say says msg when nothing was said of lost spans yet.
func (e *Exporter) say(msg string) {
	if e.said.CompareAndSwap(false, true) {
		e.warn(msg)
	}
}

// run makes a span of each call, until the queue is closed.
func (e *Exporter) run() {
	defer close(e.worker)
	prop := propagation.TraceContext{}
	var sa []sessions.SpanAttribute
	for c := range e.queue {
		if f := e.failedAt.Load(); f != 0 && time.Since(time.Unix(0, f)) < retryAfter {
			e.dropped.Add(1)
			continue
		}
		ctx := context.Background()
		if c.TraceParent != "" {
			carrier := propagation.MapCarrier{"traceparent": c.TraceParent}
			if c.TraceState != "" {
				carrier["tracestate"] = c.TraceState
			}
			ctx = prop.Extract(ctx, carrier)
		}
		sa = sessions.AppendRPCAttributes(sa[:0], sessions.RPCCall{Method: cut(c.Method), ID: cut(c.ID), HasID: true, Dir: c.Dir})
		if e.session != "" {
			sa = append(sa, sessions.SpanAttribute{Key: "rpctap.session.id", Value: e.session})
		}
		if c.HasError && c.HasCode {
			sa = append(sa, sessions.SpanAttribute{Key: "rpc.jsonrpc.error_code", Value: c.ErrorCode})
		}
		if h := c.HTTP; h != (sessions.SpanHTTP{}) {
			sa = sessions.AppendHTTPAttributes(sa, sessions.SpanHTTP{Method: cut(h.Method), Path: cut(h.Path), Status: h.Status})
		}
		attrs := keyValues(sa)
		name := cut(c.Method)
		if name == "" {
			name = "jsonrpc"
		}
		_, span := e.tracer.Start(ctx, name, trace.WithTimestamp(c.Start), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		if c.HasError {
			span.SetStatus(codes.Error, "the answer is a JSON-RPC error")
		}
		span.End(trace.WithTimestamp(c.End))
	}
}

// keyValues are a span's attributes as OpenTelemetry's API takes them.
func keyValues(sa []sessions.SpanAttribute) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, len(sa))
	for i, a := range sa {
		switch v := a.Value.(type) {
		case string:
			kv[i] = attribute.String(a.Key, v)
		case int64:
			kv[i] = attribute.Int64(a.Key, v)
		case bool:
			kv[i] = attribute.Bool(a.Key, v)
		}
	}
	return kv
}

// retryAfter is how long after a failed export calls are dropped unmade.
const retryAfter = time.Second

// maxText bounds the text of a span's name and attributes.
const maxText = 256

func cut(s string) string {
	if len(s) <= maxText {
		return s
	}
	return strings.ToValidUTF8(s[:maxText], "") + "…"
}

// Stats say how the export went.
type Stats struct {
	Calls, Sent, Dropped, Failed int64
}

// Stats returns the counts so far.
func (e *Exporter) Stats() Stats {
	return Stats{Calls: e.calls.Load(), Sent: e.sent.Load(), Dropped: e.dropped.Load(), Failed: e.failed.Load()}
}

// stuckAfter is how long an export may take before the collector counts
// as stuck, and the end of the session does not wait for it.
const stuckAfter = 250 * time.Millisecond

// answering reports whether the collector takes exports: the last one did
// not fail, and none has been waiting for longer than stuckAfter.
func (e *Exporter) answering() bool {
	began := e.exporting.Load()
	return !e.failing.Load() && (began == 0 || time.Since(time.Unix(0, began)) < stuckAfter)
}

// Close sends what is queued and stops the exporter. It waits at most
// wait for a collector that answers, and not at all for one that is
// stuck or gone (the tap's exit never waits on an observer). Spans it
// could not send are lost, and said to be (once, as any loss is).
func (e *Exporter) Close(wait time.Duration) Stats {
	if !e.answering() {
		wait = 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	e.stopOnce.Do(func() { close(e.queue) })
	select {
	case <-e.worker:
	case <-ctx.Done():
	}
	err := e.tp.Shutdown(ctx)
	st := e.Stats()
	if unsent := st.Calls - st.Dropped - st.Sent - st.Failed; unsent > 0 && (err != nil || ctx.Err() != nil) {
		if wait == 0 {
			e.say(fmt.Sprintf("%d spans for the OTLP collector at %s were not sent: it was not answering when the session ended", unsent, e.where))
		} else {
			e.say(fmt.Sprintf("%d spans for the OTLP collector at %s were not sent: it did not take them within %s of the session's end", unsent, e.where, wait))
		}
	}
	return st
}

// counting wraps the SDK's OTLP exporter to count what the collector
// took and what it did not.
type counting struct {
	e *Exporter
	sdktrace.SpanExporter
}

func (c *counting) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	c.e.exporting.Store(time.Now().UnixNano())
	err := c.SpanExporter.ExportSpans(ctx, spans)
	c.e.exporting.Store(0)
	c.e.failing.Store(err != nil)
	if err == nil {
		c.e.failedAt.Store(0)
	} else {
		c.e.failedAt.Store(time.Now().UnixNano())
	}
	if err != nil {
		c.e.failed.Add(int64(len(spans)))
		why := err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			why = "the collector did not answer in time"
		}
		c.e.lost(why)
		return nil // said above; the SDK would log it again on stderr
	}
	c.e.sent.Add(int64(len(spans)))
	return nil
}

// envHeaders reads headers in the form of OTEL_EXPORTER_OTLP_HEADERS:
// k1=v1,k2=v2, values URL-encoded.
func envHeaders(s string) map[string]string {
	out := map[string]string{}
	for kv := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		if dec, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			v = dec
		}
		out[k] = v
	}
	return out
}

// withoutCredentials is a URL with no user or password in it.
func withoutCredentials(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = nil
	return u.String()
}
