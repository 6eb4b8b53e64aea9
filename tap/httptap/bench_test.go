package httptap

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
)

// The benchmarks send small POSTs through the proxy, and through a bare
// httputil reverse proxy, to profile what the proxy adds (go test -bench
// POST -cpuprofile); .ci/bench/http measures the built binary.

func benchTarget(b *testing.B) *httptest.Server {
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 200) + `"}]}}`
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	b.Cleanup(s.Close)
	return s
}

func benchPOSTs(b *testing.B, u string) {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`
	b.ReportAllocs()
	b.SetParallelism(32) // 64 clients on 2 cores, as .ci/bench/http
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := c.Post(u, "application/json", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
}

func BenchmarkPOSTThroughTheProxy(b *testing.B) {
	target := benchTarget(b)
	p := proxyTo(b, target.URL+"/mcp")
	b.Cleanup(func() { p.srv.Close(); p.feed.Close() })
	benchPOSTs(b, p.url)
}

func BenchmarkPOSTThroughABareProxy(b *testing.B) {
	benchPOSTs(b, bareProxy(b)+"/mcp")
}

// One POST at a time, as .ci/bench/http's latency measure sends them.
func BenchmarkPOSTsOneByOneThroughTheProxy(b *testing.B) {
	target := benchTarget(b)
	p := proxyTo(b, target.URL+"/mcp")
	b.Cleanup(func() { p.srv.Close(); p.feed.Close() })
	benchOneByOne(b, p.url)
}

func BenchmarkPOSTsOneByOneThroughABareProxy(b *testing.B) {
	benchOneByOne(b, bareProxy(b)+"/mcp")
}

func benchOneByOne(b *testing.B, u string) {
	c := &http.Client{Transport: &http.Transport{}}
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Post(u, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// bareProxy is the URL of a bare httputil reverse proxy, flushing at
// once, in front of a new benchTarget.
func bareProxy(b *testing.B) string {
	u, _ := url.Parse(benchTarget(b).URL)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	s := httptest.NewServer(rp)
	b.Cleanup(s.Close)
	return s.URL
}
