// Command httpbench measures what an HTTP proxy in front of a Streamable
// HTTP server costs, against the server reached directly and through a
// bare net/http/httputil reverse proxy, in one run. It serves the target
// itself (an MCP-shaped echo, big bodies, SSE streams) and runs each proxy
// as a process of its own, a fresh one for each measure, so that each
// measure's peak RSS (VmHWM) is that proxy's alone.
//
//	httpbench [flags] -- RPCTAP-COMMAND...
//
// RPCTAP-COMMAND is the proxy to measure with its arguments; {target} in
// them is replaced by the target's URL and {run} by a counter. It must
// print the URL to send to on its first line of stdout, as "rpctap http"
// does. The bare proxy is this program run as "httpbench -bare TARGET".
//
// Measures (each prints one line per path, then a summary line of
// "name key value ..." pairs on stdout that .ci/bench/http reads):
//
//   - latency: N sequential POSTs of a tools/call, its write to its
//     answer's last byte, after WARMUP uncounted; paths alternate,
//     LATENCY-RUNS times; the best p50 and p99 count.
//   - throughput: POSTS small POSTs from CLIENTS concurrent clients.
//   - big: one response body of BIGMB MB (application/json), read and
//     dropped by the client; the proxy's peak RSS.
//   - streams: STREAMS open SSE streams, each having had one event; the
//     proxy's RSS with all of them open, and before them (after one POST).
//   - sse: EVENTS SSE events written 10 ms apart; the delay from the
//     server's write to the client's read of each event.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	bare       = flag.String("bare", "", "run as the bare reverse proxy to this target URL (internal)")
	n          = flag.Int("n", 2000, "latency: POSTs counted per run")
	warmup     = flag.Int("warmup", 200, "latency: uncounted POSTs before them")
	runs       = flag.Int("runs", 3, "throughput: runs per path, alternating")
	latRuns    = flag.Int("latency-runs", 7, "latency: runs per path, alternating")
	posts      = flag.Int("posts", 10000, "throughput: POSTs in all")
	clients    = flag.Int("clients", 64, "throughput: concurrent clients")
	bigMB      = flag.Int("bigmb", 100, "big: the response body in MB")
	streams    = flag.Int("streams", 1000, "streams: SSE streams held open at once")
	events     = flag.Int("events", 1000, "sse: events written 10 ms apart")
	only       = flag.String("only", "", "run only these measures (comma-separated: latency,throughput,big,streams,sse)")
	proxyError = flag.String("proxy-stderr", "", "append the proxies' stderr to this file (default: discarded)")
	before     = flag.String("before", "", "another rpctap to measure beside (path \"before\"): its command, words split at spaces")
)

func main() {
	flag.Parse()
	if *bare != "" {
		serveBare(*bare)
		return
	}
	if flag.NArg() == 0 {
		log.Fatal("usage: httpbench [flags] -- RPCTAP-COMMAND...")
	}
	tgt := startTarget()
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	paths := []path{
		{name: "direct"},
		{name: "bare", argv: []string{self, "-bare", "{target}"}},
		{name: "rpctap", argv: flag.Args()},
	}
	if *before != "" {
		paths = append(paths, path{name: "before", argv: strings.Fields(*before)})
	}
	want := func(m string) bool { return *only == "" || slices.Contains(strings.Split(*only, ","), m) }
	if want("latency") {
		measureLatency(tgt, paths)
	}
	if want("throughput") {
		measureThroughput(tgt, paths)
	}
	if want("big") {
		measureBig(tgt, paths[1:])
	}
	if want("streams") {
		measureStreams(tgt, paths[1:])
	}
	if want("sse") {
		measureSSE(tgt, paths)
	}
}

// serveBare is the floor: httputil's reverse proxy with nothing of its
// own but an immediate flush (as rpctap streams SSE).
func serveBare(target string) {
	u, err := url.Parse(target)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	rp.FlushInterval = -1
	fmt.Printf("http://%s%s\n", ln.Addr(), u.Path)
	log.Fatal(http.Serve(ln, rp))
}

// The target.

type target struct{ url string }

var (
	answer = []byte(`{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 200) + `"}]}}`)
	hold   = make(chan struct{}) // closed to end the held streams
	holdMu sync.Mutex
)

func startTarget() target {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		id := "0"
		if i := bytes.Index(body, []byte(`"id":`)); i >= 0 {
			rest := body[i+5:]
			j := bytes.IndexAny(rest, ",}")
			if j > 0 {
				id = string(rest[:j])
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(bytes.Replace(answer, []byte("ID"), []byte(id), 1))
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		size, _ := strconv.ParseInt(r.URL.Query().Get("bytes"), 10, 64)
		w.Header().Set("Content-Type", "application/json")
		// No Content-Length: the proxy cannot know the size ahead.
		head := []byte(`{"jsonrpc":"2.0","id":1,"result":{"blob":"`)
		tail := []byte(`"}}`)
		w.Write(head)
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		left := size - int64(len(head)+len(tail))
		for left > 0 {
			c := chunk[:min(int64(len(chunk)), left)]
			if _, err := w.Write(c); err != nil {
				return
			}
			left -= int64(len(c))
		}
		w.Write(tail)
	})
	mux.HandleFunc("GET /hold", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"open\"}}\n\n")
		w.(http.Flusher).Flush()
		holdMu.Lock()
		h := hold
		holdMu.Unlock()
		select {
		case <-h:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("GET /sse", func(w http.ResponseWriter, r *http.Request) {
		count, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for i := range count {
			<-tick.C
			_, err := fmt.Fprintf(w, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":%d,\"written\":%d}}\n\n",
				i, i, time.Now().UnixNano())
			if err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go http.Serve(ln, mux)
	return target{url: "http://" + ln.Addr().String() + "/mcp"}
}

// Paths.

type path struct {
	name string
	argv []string // the proxy; none: the target directly
}

// A running proxy (or the target directly).
type running struct {
	base string // the URL to send to, ending in /mcp
	cmd  *exec.Cmd
	run  string // its {run}
}

var started atomic.Int64

func (p path) start(t target) *running {
	if p.argv == nil {
		return &running{base: t.url}
	}
	k := strconv.FormatInt(started.Add(1), 10)
	var argv []string
	for _, a := range p.argv {
		argv = append(argv, strings.NewReplacer("{target}", t.url, "{run}", k).Replace(a))
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if *proxyError != "" {
		f, err := os.OpenFile(*proxyError, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			log.Fatal(err)
		}
		cmd.Stderr = f
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatalf("%s: %v", p.name, err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		log.Fatalf("%s printed no URL: %v", p.name, err)
	}
	go io.Copy(io.Discard, out)
	return &running{base: strings.TrimSpace(line), cmd: cmd, run: k}
}

// url is the proxy's URL for a path of the target.
func (r *running) url(path string) string {
	return strings.TrimSuffix(r.base, "/mcp") + path
}

// rss is the proxy's peak and current resident set, in MiB.
func (r *running) rss() (peak, now float64) {
	if r.cmd == nil {
		return 0, 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	field := func(name string) float64 {
		for l := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				return kb / 1024
			}
		}
		return 0
	}
	return field("VmHWM"), field("VmRSS")
}

// recorded says on stdout how many frames each way the session of
// rpctap's run should hold, for the script to check.
func (r *running) recorded(name string, frames int) {
	if name == "rpctap" || name == "before" {
		fmt.Printf("session %s frames %d\n", r.run, frames)
	}
}

// stop ends the proxy as an interrupt does (rpctap closes its session).
func (r *running) stop() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { r.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.cmd.Process.Kill()
		<-done
	}
}

func newClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, DisableCompression: true}}
}

var reqID atomic.Int64

func post(c *http.Client, u string) error {
	id := reqID.Add(1)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`, id)
	req, _ := http.NewRequest("POST", u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "echo")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || !bytes.Contains(got, []byte(fmt.Sprintf(`"id":%d,`, id))) {
		return fmt.Errorf("status %d, body %.80q", resp.StatusCode, got)
	}
	return nil
}

func pct(d []time.Duration, p float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	i := min(int(float64(len(s))*p), len(s)-1)
	return float64(s[i].Nanoseconds()) / 1e3
}

// Measures.

func measureLatency(t target, paths []path) {
	best := map[string][2]float64{}
	for run := range *latRuns {
		for _, p := range paths {
			r := p.start(t)
			c := newClient(1)
			var d []time.Duration
			for i := range *warmup + *n {
				start := time.Now()
				if err := post(c, r.base); err != nil {
					log.Fatalf("latency %s: %v", p.name, err)
				}
				if i >= *warmup {
					d = append(d, time.Since(start))
				}
			}
			r.stop()
			r.recorded(p.name, *warmup+*n)
			p50, p99 := pct(d, 0.5), pct(d, 0.99)
			fmt.Fprintf(os.Stderr, "latency run %d %-7s p50 %7.1f µs  p99 %7.1f µs\n", run+1, p.name, p50, p99)
			b, ok := best[p.name]
			if !ok {
				b = [2]float64{p50, p99}
			}
			best[p.name] = [2]float64{min(b[0], p50), min(b[1], p99)}
		}
	}
	for _, p := range paths {
		fmt.Printf("latency %s p50_us %.1f p99_us %.1f\n", p.name, best[p.name][0], best[p.name][1])
	}
}

func measureThroughput(t target, paths []path) {
	best := map[string]float64{}
	for run := range *runs {
		for _, p := range paths {
			r := p.start(t)
			c := newClient(*clients)
			var next atomic.Int64
			var wg sync.WaitGroup
			var failed atomic.Pointer[error]
			start := time.Now()
			for range *clients {
				wg.Go(func() {
					for next.Add(1) <= int64(*posts) {
						if err := post(c, r.base); err != nil {
							failed.Store(&err)
							return
						}
					}
				})
			}
			wg.Wait()
			secs := time.Since(start).Seconds()
			peak, _ := r.rss()
			r.stop()
			r.recorded(p.name, *posts)
			if e := failed.Load(); e != nil {
				log.Fatalf("throughput %s: %v", p.name, *e)
			}
			rate := float64(*posts) / secs
			fmt.Fprintf(os.Stderr, "throughput run %d %-7s %8.0f POSTs/s (%d POSTs, %d clients, %.2f s) peak RSS %.1f MiB\n",
				run+1, p.name, rate, *posts, *clients, secs, peak)
			best[p.name] = max(best[p.name], rate)
		}
	}
	for _, p := range paths {
		fmt.Printf("throughput %s per_s %.0f\n", p.name, best[p.name])
	}
}

func measureBig(t target, paths []path) {
	size := int64(*bigMB) * 1e6
	for _, p := range paths {
		r := p.start(t)
		start := time.Now()
		resp, err := http.Get(r.url("/big?bytes=" + strconv.FormatInt(size, 10)))
		if err != nil {
			log.Fatalf("big %s: %v", p.name, err)
		}
		got, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || got != size {
			log.Fatalf("big %s: %d of %d bytes: %v", p.name, got, size, err)
		}
		secs := time.Since(start).Seconds()
		// The next request is answered.
		if err := post(newClient(1), r.base); err != nil {
			log.Fatalf("big %s: the POST after the body: %v", p.name, err)
		}
		peak, _ := r.rss()
		r.stop()
		fmt.Fprintf(os.Stderr, "big %-7s %d MB in %.2f s, peak RSS %.1f MiB\n", p.name, *bigMB, secs, peak)
		fmt.Printf("big %s peak_mib %.1f secs %.2f\n", p.name, peak, secs)
	}
}

func measureStreams(t target, paths []path) {
	for _, p := range paths {
		holdMu.Lock()
		hold = make(chan struct{})
		h := hold
		holdMu.Unlock()
		r := p.start(t)
		if err := post(newClient(1), r.base); err != nil {
			log.Fatalf("streams %s: the POST before the streams: %v", p.name, err)
		}
		_, base := r.rss()
		c := newClient(*streams)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		opened := make(chan error, *streams)
		for range *streams {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(ctx, "GET", r.url("/hold"), nil)
				req.Header.Set("Accept", "text/event-stream")
				resp, err := c.Do(req)
				if err != nil {
					opened <- err
					return
				}
				defer resp.Body.Close()
				br := bufio.NewReader(resp.Body)
				for {
					l, err := br.ReadString('\n')
					if err != nil {
						opened <- err
						return
					}
					if l == "\n" {
						break
					}
				}
				opened <- nil
				io.Copy(io.Discard, br)
			})
		}
		for range *streams {
			if err := <-opened; err != nil {
				log.Fatalf("streams %s: %v", p.name, err)
			}
		}
		// Let the proxy settle with every stream open.
		time.Sleep(500 * time.Millisecond)
		peak, now := r.rss()
		close(h)
		cancel()
		wg.Wait()
		if err := post(newClient(1), r.base); err != nil {
			log.Fatalf("streams %s: the POST after the streams: %v", p.name, err)
		}
		r.stop()
		fmt.Fprintf(os.Stderr, "streams %-7s %d open: RSS %.1f MiB (%.1f MiB before), peak %.1f MiB\n", p.name, *streams, now, base, peak)
		fmt.Printf("streams %s rss_mib %.1f base_mib %.1f peak_mib %.1f\n", p.name, now, base, peak)
	}
}

func measureSSE(t target, paths []path) {
	for _, p := range paths {
		r := p.start(t)
		resp, err := http.Get(r.url("/sse?n=" + strconv.Itoa(*events)))
		if err != nil {
			log.Fatalf("sse %s: %v", p.name, err)
		}
		br := bufio.NewReader(resp.Body)
		var d []time.Duration
		for {
			l, err := br.ReadBytes('\n')
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				log.Fatalf("sse %s: %v", p.name, err)
			}
			at := time.Now()
			if i := bytes.Index(l, []byte(`"written":`)); i >= 0 {
				ns, _ := strconv.ParseInt(string(bytes.TrimRight(l[i+10:], "}\n")), 10, 64)
				d = append(d, at.Sub(time.Unix(0, ns)))
			}
		}
		resp.Body.Close()
		r.stop()
		if len(d) != *events {
			log.Fatalf("sse %s: %d of %d events", p.name, len(d), *events)
		}
		fmt.Fprintf(os.Stderr, "sse %-7s %d events: delay p50 %7.1f µs  p99 %7.1f µs  max %7.1f µs\n", p.name, len(d), pct(d, 0.5), pct(d, 0.99), pct(d, 1))
		fmt.Printf("sse %s p50_us %.1f p99_us %.1f max_us %.1f\n", p.name, pct(d, 0.5), pct(d, 0.99), pct(d, 1))
	}
}
