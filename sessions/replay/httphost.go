package replay

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// PlayHTTP plays the recorded host of the session file at path against
// the live Streamable HTTP server at target, as PlayHost does on stdio:
// each of the host's messages goes in a POST of its own (a recorded batch
// as one), with the headers the recording has for it but the session's:
// the live server's Mcp-Session-Id takes the place of the recorded one.
// A recorded GET opens an event stream, a recorded DELETE is sent. Every
// message of a response, JSON or an event stream, is the live server's
// frame. A stdio recording is played as though each message had been a
// POST. client sends the requests (nil: http.DefaultClient).
func PlayHTTP(ctx context.Context, path string, target *url.URL, client *http.Client, opts HostOptions) (*HostReport, error) {
	p, err := newPlayer(path, opts)
	if err != nil {
		return nil, err
	}
	if p.profile == classify.LSP || p.framings.LSP() {
		p.f.Close()
		return nil, ErrLSPOverHTTP
	}
	if client == nil {
		client = http.DefaultClient
	}
	hx := &httpHost{p: p, target: target, client: client, queue: make(chan hostRequest, 64), sessions: map[string]string{}, sent: make(chan struct{})}
	hx.ctx, hx.cancel = context.WithCancel(ctx)
	p.hx, p.to = hx, io.Discard
	go hx.run()
	err = p.run(ctx)
	hx.close()
	if err != nil {
		return nil, err
	}
	p.finish()
	return p.rep, nil
}

// An httpHost sends the player's messages to a live Streamable HTTP
// server, one request at a time in the recorded order (each once the
// previous one's response began), and hands the player every message
// that comes back.
type httpHost struct {
	p       *player
	target  *url.URL
	client  *http.Client
	queue   chan hostRequest
	sent    chan struct{} // closed when run has sent the last request
	ctx     context.Context
	cancel  context.CancelFunc
	reading sync.WaitGroup // the POST responses being read
	streams sync.WaitGroup // the GET streams

	// sessions maps the recording's Mcp-Session-Id values to the live
	// server's; current is the one the live server gave last.
	mu       sync.Mutex
	sessions map[string]string
	current  string
}

// A hostRequest is one request to send: the recorded record's http
// object (raw) and the body.
type hostRequest struct {
	method string
	info   []byte
	body   []byte
}

// post queues a message to send, its record's http object info (nil in
// a stdio recording).
func (hx *httpHost) post(info, body []byte) {
	hx.queue <- hostRequest{method: http.MethodPost, info: bytes.Clone(info), body: bytes.Clone(body)}
}

// bodyless queues a recorded GET or DELETE.
func (hx *httpHost) bodyless(info []byte) {
	h, ok := parseHTTP(info)
	if !ok || h.Method != http.MethodGet && h.Method != http.MethodDelete {
		return
	}
	hx.queue <- hostRequest{method: h.Method, info: bytes.Clone(info)}
}

// close waits for the requests queued and the answers being read (for
// as long as an answer may take), then ends what is left and the GET
// streams: the live server's output has ended.
func (hx *httpHost) close() {
	close(hx.queue)
	done := make(chan struct{})
	go func() {
		<-hx.sent
		hx.reading.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(hx.p.opts.Timeout):
	}
	hx.cancel()
	<-hx.sent
	hx.streams.Wait()
	hx.reading.Wait()
	hx.p.end()
}

func (hx *httpHost) run() {
	defer close(hx.sent)
	for r := range hx.queue {
		hx.send(r)
	}
}

// send makes one request and starts reading its response.
func (hx *httpHost) send(r hostRequest) {
	rec, _ := parseHTTP(r.info)
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(hx.ctx, r.method, hx.target.String(), body)
	if err != nil {
		hx.p.log("cannot make the %s request: %v", r.method, err)
		return
	}
	recordedSession := ""
	for _, x := range rec.Headers {
		switch http.CanonicalHeaderKey(x.Name) {
		case "Mcp-Session-Id":
			recordedSession = x.Value
		case "Content-Type", "Content-Length", "Accept", "Cookie", "Authorization", "Proxy-Authorization", "Set-Cookie", "Www-Authenticate":
		default:
			if !strings.Contains(x.Value, "***") {
				req.Header.Set(x.Name, x.Value)
			}
		}
	}
	hx.mu.Lock()
	if recordedSession != "" {
		live, ok := hx.sessions[recordedSession]
		if !ok {
			live = hx.current
			hx.sessions[recordedSession] = live
		}
		if live != "" {
			req.Header.Set("Mcp-Session-Id", live)
		}
	}
	hx.mu.Unlock()
	switch r.method {
	case http.MethodPost:
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	case http.MethodGet:
		req.Header.Set("Accept", "text/event-stream")
	}
	wg := &hx.reading
	if r.method == http.MethodGet {
		wg = &hx.streams
	}
	began := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		resp, err := hx.client.Do(req)
		if err != nil {
			close(began)
			if hx.ctx.Err() == nil {
				hx.p.log("%s %s: %v", r.method, esc(hx.target.Redacted()), err)
			}
			return
		}
		defer resp.Body.Close()
		if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && recordedSession == "" {
			hx.mu.Lock()
			hx.current = sid
			hx.mu.Unlock()
		}
		close(began)
		if resp.StatusCode >= 300 {
			hx.p.log("%s %s: the server answered %s", r.method, esc(hx.target.Redacted()), esc(resp.Status))
		}
		hx.read(resp)
	}()
	// The next request waits for this one's response to begin, so that
	// the server takes them in the recorded order and a new session's id
	// is known (a handshake's, for as long as an answer may take); not
	// past headerWait in a session (a server that answers a call only once
	// it is done, while the host sends on, or a GET stream's that begins
	// late). A GET that went on at once could be cancelled, the replay
	// done, before the server took it.
	wait := headerWait
	switch {
	case recordedSession == "":
		wait = hx.p.opts.Timeout
	}
	select {
	case <-began:
	case <-time.After(wait):
	case <-hx.ctx.Done():
	}
}

// headerWait bounds how long a request in a session waits for the
// previous one's response to begin.
const headerWait = time.Second

// read hands the player the messages of a response: a JSON body whole,
// or the data of each event of an event stream.
func (hx *httpHost) read(resp *http.Response) {
	switch mediaType(resp.Header.Get("Content-Type")) {
	case "application/json":
		b, err := io.ReadAll(io.LimitReader(resp.Body, classify.MaxParse))
		if err == nil && len(bytes.TrimSpace(b)) > 0 {
			hx.deliver(bytes.TrimSpace(b))
		}
	case "text/event-stream":
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), maxHTTPBody)
		var data []byte
		for sc.Scan() {
			line := sc.Bytes()
			switch {
			case len(line) == 0:
				if len(data) > 0 {
					hx.deliver(data)
				}
				data = data[:0]
			case bytes.HasPrefix(line, []byte("data:")):
				v := bytes.TrimPrefix(line[5:], []byte(" "))
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, v...)
			}
		}
		if err := sc.Err(); err != nil && !errors.Is(err, context.Canceled) && hx.ctx.Err() == nil {
			hx.p.log("reading an event stream of the server: %v", err)
		}
	default:
		io.Copy(io.Discard, resp.Body)
	}
}

func (hx *httpHost) deliver(body []byte) {
	hx.p.deliver(body, time.Now())
	hx.p.poke()
}
