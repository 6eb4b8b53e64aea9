package httptap

import (
	"bufio"
	"bytes"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// The bad input tests send something broken through the proxy at
// /mcp/bad, then a good POST to /mcp: the proxy relays what it can,
// records what happened, stays within its bounds, and answers the next
// request.

const okAnswer = `{"jsonrpc":"2.0","id":99,"result":{}}`

// badTarget serves bad at /mcp/bad and answers a POST to /mcp with
// okAnswer.
func badTarget(t *testing.T, bad http.HandlerFunc) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, okAnswer)
	})
	mux.HandleFunc("/mcp/bad", bad)
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// answersNext checks that a POST through the proxy after the bad input
// is answered as the target answers it.
func (p *proxied) answersNext(t *testing.T) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	resp, err := c.Post(p.url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":99,"method":"ping"}`))
	if err != nil {
		t.Fatalf("the POST after the bad input: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || string(b) != okAnswer {
		t.Fatalf("the POST after the bad input was answered %d %q (%v), want 200 %s", resp.StatusCode, b, err, okAnswer)
	}
}

// lastIs checks that the session's last two frames are the next POST
// and its answer, and returns the frames before them.
func lastIs(t *testing.T, evs []sessions.Event) []sessions.Event {
	t.Helper()
	n := len(evs)
	if n < 2 || string(evs[n-1].Frame) != okAnswer || !bytes.Contains(evs[n-2].Frame, []byte(`"method":"ping"`)) {
		t.Fatalf("the session does not end with the POST after the bad input and its answer: %d frames", n)
	}
	return evs[:n-2]
}

// heapPeak samples the heap's objects (live and not yet swept) every
// millisecond until stop is closed, and returns the largest it saw.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// heapBound is what the whole test process (target, proxy, host) may hold
// at once while one body crosses: what the proxy holds of a body to
// record it, and room for the rest.
const heapBound = maxBody + 16<<20

func TestABodyThatIsNotJSONIsRelayedUnchangedAndRecordedAsNotJSON(t *testing.T) {
	const req, ans = "hello, this is not JSON {", "<html>500: not JSON either</html>"
	var got atomic.Value
	target := badTarget(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(string(b))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, ans)
	})
	p := proxyTo(t, target.URL+"/mcp")
	resp, err := http.Post(p.url+"/bad", "application/json", strings.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != ans || got.Load() != req {
		t.Errorf("the target got %q and the host %q, want %q and %q", got.Load(), b, req, ans)
	}
	p.answersNext(t)
	h, evs := p.frames(t)
	evs = lastIs(t, evs)
	if len(evs) != 2 || string(evs[0].Frame) != req || string(evs[1].Frame) != ans {
		t.Fatalf("the bad exchange was recorded as %d frames, want the request's and the answer's bytes", len(evs))
	}
	for _, ev := range evs {
		if m := h.Classify(ev.Frame, ev.Dir, classify.Auto); m.Kind != classify.KindNotJSON {
			t.Errorf("the %s frame %q reads back as %s, want not-json", ev.Dir, ev.Frame, m.Kind)
		}
	}
}

func TestASSEStreamThatBreaksOffMidEventIsRelayedToTheBreakAndRecordedAsBroken(t *testing.T) {
	const whole = "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"
	const cut = "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"res"
	target := badTarget(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, whole+cut)
		w.(http.Flusher).Flush()
		// The server dies: its connection ends in the middle of the
		// chunked body.
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	p := proxyTo(t, target.URL+"/mcp")
	resp, err := http.Get(p.url + "/bad")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || string(b) != whole+cut {
		t.Errorf("the host read %q (%v), want %q and then an error: the stream broke off", b, err, whole+cut)
	}
	p.answersNext(t)
	_, evs := p.frames(t)
	evs = lastIs(t, evs)
	if len(evs) != 3 || !bytes.Contains(evs[1].Frame, []byte("notifications/message")) {
		t.Fatalf("the stream was recorded as %d frames, want the GET, the whole event and what says it broke off", len(evs))
	}
	if h := httpOf(t, evs[2]); len(evs[2].Frame) != 0 || !strings.Contains(h.Error, "broke off in the middle of an event") {
		t.Errorf("the break was recorded as %s %q", evs[2].HTTP, evs[2].Frame)
	}
}

func TestAGigabyteResponseIsRelayedWholeInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("relays 1 GB")
	}
	for _, tc := range []struct {
		name  string
		sized bool // the response says its Content-Length
		bound uint64
	}{
		// The proxy holds the first maxBody bytes, until the body turns
		// out larger.
		{"chunked", false, heapBound},
		// A body that says ahead it is larger is not held at all.
		{"with its Content-Length", true, 8 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const size = 1 << 30
			target := badTarget(t, func(w http.ResponseWriter, r *http.Request) {
				const head, tail = `{"jsonrpc":"2.0","id":1,"result":{"blob":"`, `"}}`
				w.Header().Set("Content-Type", "application/json")
				if tc.sized {
					w.Header().Set("Content-Length", strconv.Itoa(size))
				}
				io.WriteString(w, head)
				chunk := bytes.Repeat([]byte("x"), 256<<10)
				for left := size - len(head) - len(tail); left > 0; left -= len(chunk) {
					if _, err := w.Write(chunk[:min(len(chunk), left)]); err != nil {
						return
					}
				}
				io.WriteString(w, tail)
			})
			p := proxyTo(t, target.URL+"/mcp")
			runtime.GC()
			stop := make(chan struct{})
			peak := heapPeak(stop)
			resp, err := http.Get(p.url + "/bad")
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			close(stop)
			if n != size || err != nil {
				t.Errorf("the host read %d bytes (%v), want %d", n, err, size)
			}
			hp := <-peak
			t.Logf("heap peak while 1 GB crossed: %.1f MiB (bound %d MiB)", float64(hp)/(1<<20), tc.bound>>20)
			if hp > tc.bound {
				t.Errorf("the heap reached %.1f MiB while 1 GB crossed, more than %d MiB", float64(hp)/(1<<20), tc.bound>>20)
			}
			p.answersNext(t)
			_, evs := p.frames(t)
			evs = lastIs(t, evs)
			if len(evs) != 2 || len(evs[1].Frame) != 0 || httpOf(t, evs[1]).Error != tooLarge {
				t.Errorf("the answer was recorded as %d frames, the last %s", len(evs), evs[len(evs)-1].HTTP)
			}
		})
	}
}

func TestAHostThatNeverReadsHoldsTheTargetBackInBoundedMemory(t *testing.T) {
	var written atomic.Int64
	done := make(chan struct{})
	target := badTarget(t, func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		w.Header().Set("Content-Type", "text/event-stream")
		ev := []byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"" + strings.Repeat("x", 1000) + "\"}}\n\n")
		for written.Load() < 1<<30 {
			if _, err := w.Write(ev); err != nil {
				return // the proxy ended the request: its host went
			}
			w.(http.Flusher).Flush()
			written.Add(int64(len(ev)))
		}
	})
	p := proxyTo(t, target.URL+"/mcp")
	stop := make(chan struct{})
	peak := heapPeak(stop)
	conn, err := net.Dial("tcp", strings.TrimPrefix(p.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "GET /mcp/bad HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
	// The host reads nothing. Once the buffers between fill, the target
	// can write no more.
	var was int64 = -1
	for w := written.Load(); w != was; w = written.Load() {
		was = w
		time.Sleep(300 * time.Millisecond)
	}
	t.Logf("the target wrote %d KiB to a host that reads nothing", was>>10)
	if was >= 1<<30 {
		t.Fatalf("the target wrote all of 1 GB to a host that reads nothing")
	}
	p.answersNext(t)
	conn.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the target's request did not end when its host went away")
	}
	close(stop)
	if hp := <-peak; hp > heapBound {
		t.Errorf("the heap reached %.1f MiB while the host read nothing, more than %d MiB", float64(hp)/(1<<20), heapBound>>20)
	}
	_, evs := p.frames(t)
	var last sessions.Event
	for _, ev := range evs {
		if h := httpOf(t, ev); h.Path == "/mcp/bad" {
			last = ev
		}
	}
	if h := httpOf(t, last); !strings.Contains(h.Error, "the host stopped reading") {
		t.Errorf("the stream's last frame was recorded as %s, want one that says the host stopped reading", last.HTTP)
	}
}

// resetConn ends w's connection with a TCP reset.
func resetConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	conn.(*net.TCPConn).SetLinger(0)
	conn.Close()
}

func TestATargetThatResetsTheConnectionIsAnsweredOrCutAndRecorded(t *testing.T) {
	t.Run("before it answers", func(t *testing.T) {
		target := badTarget(t, func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			resetConn(w)
		})
		p := proxyTo(t, target.URL+"/mcp")
		resp, err := http.Post(p.url+"/bad", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Errorf("a reset before the answer was answered %d, want 502", resp.StatusCode)
		}
		p.answersNext(t)
		_, evs := p.frames(t)
		evs = lastIs(t, evs)
		if len(evs) != 2 || httpOf(t, evs[1]).Status != 502 || httpOf(t, evs[1]).Error == "" {
			t.Errorf("the reset was recorded as %d frames, the last %s", len(evs), evs[len(evs)-1].HTTP)
		}
	})
	t.Run("in the middle of its body", func(t *testing.T) {
		const part = `{"jsonrpc":"2.0","id":1,"result":{"content":[`
		target := badTarget(t, func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, part)
			w.(http.Flusher).Flush()
			resetConn(w)
		})
		p := proxyTo(t, target.URL+"/mcp")
		// What happened is the record's to say: rpctap's stderr (the
		// standard logger) gets nothing of it.
		var logged bytes.Buffer
		log.SetOutput(&logged)
		defer log.SetOutput(os.Stderr)
		resp, err := http.Post(p.url+"/bad", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(bufio.NewReader(resp.Body))
		resp.Body.Close()
		if err == nil || string(b) != part {
			t.Errorf("the host read %q (%v), want %q and then an error: the body broke off", b, err, part)
		}
		p.answersNext(t)
		if logged.Len() > 0 {
			t.Errorf("the proxy logged on stderr: %q", logged.String())
		}
		_, evs := p.frames(t)
		evs = lastIs(t, evs)
		if len(evs) != 2 || len(evs[1].Frame) != 0 || !strings.Contains(httpOf(t, evs[1]).Error, "broke off after "+strconv.Itoa(len(part))+" bytes") {
			t.Errorf("the cut body was recorded as %d frames, the last %s %q", len(evs), evs[len(evs)-1].HTTP, evs[len(evs)-1].Frame)
		}
	})
}

func TestASSEStreamThatEndsInTheMiddleOfAnEventIsRecordedAsEndingThere(t *testing.T) {
	const whole = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"
	const cut = "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"res"
	target := badTarget(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, whole+cut) // and the response ends, cleanly
	})
	p := proxyTo(t, target.URL+"/mcp")
	resp, err := http.Get(p.url + "/bad")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != whole+cut {
		t.Errorf("the host read %q (%v), want %q", b, err, whole+cut)
	}
	p.answersNext(t)
	_, evs := p.frames(t)
	evs = lastIs(t, evs)
	if len(evs) != 3 {
		t.Fatalf("the stream was recorded as %d frames, want the GET, the whole event and what says it ended mid-event", len(evs))
	}
	if h := httpOf(t, evs[2]); len(evs[2].Frame) != 0 || h.Error != "the stream ended in the middle of an event, after "+strconv.Itoa(len(whole+cut))+" bytes" {
		t.Errorf("the end was recorded as %s %q", evs[2].HTTP, evs[2].Frame)
	}
}
