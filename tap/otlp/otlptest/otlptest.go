// Package otlptest is an in-process OTLP/HTTP collector for tests: it
// decodes the real protobuf payload of each export, as a collector does.
package otlptest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// A Collector is an in-process OTLP/HTTP receiver: it decodes the real
// protobuf payload of each export, as a collector does.
type Collector struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*coltracepb.ExportTraceServiceRequest
	headers  []http.Header
	paths    []string
}

// NewCollector starts a collector, stopped when the test ends.
func NewCollector(t testing.TB) *Collector {
	c := &Collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req coltracepb.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("the collector got what is not an OTLP protobuf export (%s): %v", r.Header.Get("Content-Type"), err)
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.requests = append(c.requests, &req)
		c.headers = append(c.headers, r.Header.Clone())
		c.paths = append(c.paths, r.URL.Path)
		c.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(c.Close)
	return c
}

// Spans are the spans received, with their resource's attributes.
// Paths are the URL paths exports came to, in order.
func (c *Collector) Paths() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.paths...)
}

// Headers are the HTTP headers of the exports, in order.
func (c *Collector) Headers() []http.Header {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]http.Header(nil), c.headers...)
}

func (c *Collector) Spans() (spans []*tracepb.Span, resource map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	resource = map[string]string{}
	for _, req := range c.requests {
		for _, rs := range req.ResourceSpans {
			for k, v := range Attrs(rs.Resource.Attributes) {
				resource[k] = v
			}
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
	}
	return spans, resource
}

// Attrs are attributes as text; an integer is "int:N".
func Attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			out[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			out[kv.Key] = "int:" + strconv.FormatInt(v.IntValue, 10)
		}
	}
	return out
}
