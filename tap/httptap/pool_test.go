package httptap

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Requests in flight at once through the proxy reuse its connections to
// the target the next time, rather than dial new ones: dialing for each
// request cost most of the proxy's time under 64 clients
// (.ci/bench/http).
func TestRequestsInFlightAtOnceReuseTheConnectionsToTheTarget(t *testing.T) {
	const n = 8
	var conns sync.Map
	var count atomic.Int64
	arrived := make(chan struct{}, n)
	release := make(chan struct{})
	target := badTarget(t, func(w http.ResponseWriter, r *http.Request) {
		if _, seen := conns.LoadOrStore(r.RemoteAddr, true); !seen {
			count.Add(1)
		}
		arrived <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, okAnswer)
	})
	closed := make(chan struct{}, 2*n)
	p := proxyOver(t, target.URL+"/mcp", closedBodies{NewTransport(), closed})
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	round := func() {
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				resp, err := c.Post(p.url+"/bad", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
		for range n {
			<-arrived // all n are in flight at once
		}
		release <- struct{}{}
		for range n - 1 {
			release <- struct{}{}
		}
		wg.Wait()
		for range n {
			<-closed // the proxy has read each answer to its end and closed it
		}
	}
	round()
	// The transport puts a connection back just after its body ends, in
	// a goroutine of its own: a moment more, which the load of a CI
	// machine can stretch.
	time.Sleep(100 * time.Millisecond)
	round()
	if got := count.Load(); got > n {
		t.Errorf("two rounds of %d requests in flight at once came to the target on %d connections, want %d", n, got, n)
	}
	p.answersNext(t)
}

// The proxy reuses its copy buffers: a small POST and its answer, through
// the proxy, with the target and the host in this process, allocate less
// than the one 32 KiB buffer a response cost each time before.
func TestASmallPOSTThroughTheProxyAllocatesNoCopyBufferOfItsOwn(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops buffers at random: allocations are counted in the run without it")
	}
	target := badTarget(t, http.NotFound)
	p := proxyTo(t, target.URL+"/mcp")
	c := &http.Client{Transport: &http.Transport{}}
	post := func() {
		resp, err := c.Post(p.url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":99,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for range 20 {
		post() // the connections and pools warm
	}
	const n = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		post()
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("%d bytes allocated per POST and answer, host and target included", per)
	if per >= 32<<10 {
		t.Errorf("%d bytes allocated per POST and answer: the proxy takes a new copy buffer for each", per)
	}
}

// closedBodies is a transport that says on closed when the proxy closes
// the body of an answer.
type closedBodies struct {
	http.RoundTripper
	closed chan<- struct{}
}

func (c closedBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.RoundTripper.RoundTrip(r)
	if err == nil {
		resp.Body = &saysClosed{ReadCloser: resp.Body, closed: c.closed}
	}
	return resp, err
}

type saysClosed struct {
	io.ReadCloser
	closed chan<- struct{}
	once   sync.Once
}

func (s *saysClosed) Close() error {
	err := s.ReadCloser.Close()
	s.once.Do(func() { s.closed <- struct{}{} })
	return err
}
