package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// An HTTPServer plays the recorded server of a session file as a
// Streamable HTTP server (replay --as-server --http). Each POST is
// answered as Serve answers a frame on stdio (the same matching, rounds
// and delays), on a response that is what the recorded answer's was: its
// status, JSON or an event stream, and its headers (Mcp-Session-Id among
// them); a notification gets the recorded 202. The server's frames that
// came after a request go out on the live response that plays the
// exchange they were recorded in, or on an open GET stream. A GET and a
// DELETE are answered as the recording's were. A stdio recording is
// served as though each request had been a POST answered with an event
// stream. It is an http.Handler; ServeHTTP may be called concurrently.
type HTTPServer struct {
	s         *server
	f         *os.File
	sf        *sessionFile
	path      string
	exchanges atomic.Int64
	ctx       context.Context
	cancel    context.CancelFunc
	loopDone  chan struct{}
	done      chan struct{} // closed by Close: open responses end
	closeOnce sync.Once
}

// httpFront is the server's side of an HTTPServer: the live responses
// the server's frames go out on. Its fields are guarded by server.mu.
type httpFront struct {
	s *server
	// streams are the open live responses by the recorded exchange each
	// plays; gets the open GET streams, oldest first.
	streams map[int32]*liveStream
	gets    []*liveStream
}

// A liveStream is one live response a POST or GET handler writes: what
// the server sends it is queued in events (under server.mu), and the
// handler writes it.
type liveStream struct {
	info   sessions.HTTPInfo // what the records of its frames say
	sse    bool
	batch  bool
	want   int // answers still to come
	events []streamEvent
	wake   chan struct{}
	ended  bool
}

type streamEvent struct {
	id     string
	body   []byte
	answer bool
}

// maxHTTPBody bounds a request body replay reads, as the HTTP tap does.
const maxHTTPBody = 16 << 20

// ErrLSPOverHTTP says an LSP recording cannot be served over HTTP.
var ErrLSPOverHTTP = errors.New("the recording is of an LSP session, which has no HTTP transport: replay it on stdio, without --http or --target")

// NewHTTPServer opens the recording at path to serve it over HTTP, and
// starts the replay's own session file when opts.Record.
func NewHTTPServer(path string, opts ServeOptions) (*HTTPServer, error) {
	if opts.Forward != nil {
		return nil, errors.New("--unmatched forward is not supported over HTTP yet: leave it out, or replay on stdio")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open the recording: %w (rpctap ls lists recent sessions)", err)
	}
	rec, err := loadRecording(f, f, opts.Ignore)
	if err != nil {
		f.Close()
		return nil, err
	}
	if p, _ := classify.ParseProfile(rec.hdr.ProfileOrDefault()); p == classify.LSP || rec.framings.LSP() {
		f.Close()
		return nil, ErrLSPOverHTTP
	}
	sf, opts, err := startRecord(rec, opts, sessions.TransportHTTP)
	if err != nil {
		f.Close()
		return nil, err
	}
	s := newServer(rec, nil, opts, sf)
	s.front = &httpFront{s: s, streams: map[int32]*liveStream{}}
	h := &HTTPServer{s: s, f: f, sf: sf, path: "/mcp", loopDone: make(chan struct{}), done: make(chan struct{})}
	for i := range rec.frames {
		if rec.frames[i].dir == classify.H2S {
			if hi, ok := rec.readHTTP(int32(i)); ok && hi.Path != "" {
				h.path, _, _ = strings.Cut(hi.Path, "?")
			}
			break
		}
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	go func() {
		defer close(h.loopDone)
		s.writeLoop(h.ctx)
	}()
	return h, nil
}

// Path is the path the recording's requests were made on ("/mcp" for a
// stdio recording): the one to give the host.
func (h *HTTPServer) Path() string { return h.path }

// Close ends the open responses and the replay's session file, its exit
// record taken from ctx's cause (Stopped), and says what the replay did.
func (h *HTTPServer) Close(ctx context.Context) (Stats, error) {
	var st Stats
	var err error
	h.closeOnce.Do(func() {
		close(h.done)
		s := h.s
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		s.poke()
		h.cancel()
		<-h.loopDone
		s.mu.Lock()
		s.fileDone = true
		if s.flush != nil {
			s.flush.Stop()
		}
		st, err = s.stats, s.werr
		s.mu.Unlock()
		h.f.Close()
		st, err = endRecord(ctx, h.sf, s.opts, st, err)
	})
	return st, err
}

// ServeHTTP answers one request of the host.
func (h *HTTPServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := h.exchanges.Add(1)
	req := &sessions.HTTPInfo{Exchange: n, Method: r.Method, Path: h.s.opts.Redactor.MaskString(r.URL.RequestURI()),
		ContentType: r.Header.Get("Content-Type"), Headers: recordHeaders(r.Header, h.s.opts.Redactor)}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, req)
	case http.MethodGet, http.MethodDelete:
		h.bodyless(w, r, req)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "rpctap replay answers POST, GET and DELETE", http.StatusMethodNotAllowed)
	}
}

// post answers a POST: its messages are matched as on stdio, and the
// response is the recorded one of the exchange of the first recorded
// request (or notification) that answers.
func (h *HTTPServer) post(w http.ResponseWriter, r *http.Request, req *sessions.HTTPInfo) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxHTTPBody+1))
	if err != nil {
		http.Error(w, "rpctap replay could not read the request's body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxHTTPBody {
		http.Error(w, "rpctap replay reads a request body of at most 16 MiB", http.StatusRequestEntityTooLarge)
		return
	}
	s := h.s
	now := time.Now()
	m := classify.Classify(body, classify.H2S, s.hostProfile())
	st := &liveStream{wake: make(chan struct{}, 1)}
	s.mu.Lock()
	s.record(classify.H2S, body, req)
	rx, requests := int32(-1), 0
	take := func(mm *classify.Message, b []byte) {
		switch mm.Kind {
		case classify.KindRequest:
			requests++
			s.sawHostID(mm)
			if it, ok := s.reply(mm, b, now, false); ok {
				if it.raw == nil && rx < 0 {
					rx = s.rec.frames[it.frame].exchange
				}
				it.to = st
				st.want++
				s.pushAnswer(it)
			}
		case classify.KindNotification:
			if p := s.notified(mm, b, now); p >= 0 && rx < 0 {
				rx = s.rec.frames[p].exchange
			}
		case classify.KindResponse:
			s.answered(mm, b, now)
		}
	}
	switch m.Kind {
	case classify.KindBatch:
		st.batch = true
		for i := range m.Members {
			take(&m.Members[i], m.Members[i].Frame)
		}
	case classify.KindRequest, classify.KindNotification, classify.KindResponse:
		take(&m, body)
	default:
		if m.Answer != nil {
			requests++
			st.want++
			s.push(outItem{due: now, raw: m.Answer.JSON(), answer: true, to: st})
			s.log("the host sent %s; answered with error %d, as a strict server does", m.Kind.Phrase(), m.Answer.Code)
		}
	}
	h.head(st, rx, req, requests > 0, r.Header)
	if rx >= 0 {
		s.front.streams[rx] = st
	}
	expect := st.want > 0
	s.mu.Unlock()
	h.respond(w, r, st, rx, requests > 0, expect)
}

// bodyless answers a GET or a DELETE as the recording's first one not
// answered yet was (its last, when all were): a GET's event stream stays
// open for the server's frames until the host or replay closes it. One
// the recording has none of is answered 405, as a server that offers no
// such thing answers.
func (h *HTTPServer) bodyless(w http.ResponseWriter, r *http.Request, req *sessions.HTTPInfo) {
	s := h.s
	s.mu.Lock()
	s.record(classify.H2S, nil, req)
	recorded := s.rec.gets
	if r.Method == http.MethodDelete {
		recorded = s.rec.deletes
	}
	pick := int32(-1)
	for _, i := range recorded {
		if pick = i; !s.rec.frames[i].used {
			break
		}
	}
	st := &liveStream{wake: make(chan struct{}, 1)}
	rx := int32(-1)
	if pick >= 0 {
		s.rec.frames[pick].used = true
		rx = s.rec.frames[pick].exchange
		h.head(st, rx, req, false, r.Header)
	}
	if pick < 0 || st.info.Status == 0 {
		st.info = sessions.HTTPInfo{Exchange: req.Exchange, Method: req.Method, Path: req.Path, Status: http.StatusMethodNotAllowed}
		s.log("%s %s: the recording has no %s, so replay answers %d", r.Method, esc(req.Path), r.Method, http.StatusMethodNotAllowed)
	} else {
		s.log("%s %s: answered as line %d of the recording", r.Method, esc(req.Path), s.rec.frames[pick].line)
	}
	stream := r.Method == http.MethodGet && st.sse && st.info.Status == http.StatusOK
	if stream {
		s.front.streams[rx] = st
		s.front.gets = append(s.front.gets, st)
	}
	s.mu.Unlock()
	h.respond(w, r, st, rx, stream, false)
}

// head sets st's response from the first recorded server frame of
// exchange rx: its status, content type and headers. With no recorded
// one (a request the recording cannot answer, a stdio recording), a
// response carrying answers is an event stream, and one of notifications
// or answers only a 202; its Mcp-Session-Id is the host's. s.mu is held.
func (h *HTTPServer) head(st *liveStream, rx int32, req *sessions.HTTPInfo, answers bool, reqHeader http.Header) {
	st.info = sessions.HTTPInfo{Exchange: req.Exchange, Method: req.Method, Path: req.Path}
	if i, ok := h.s.rec.firstOut[rx]; ok && rx >= 0 {
		if hi, ok := h.s.rec.readHTTP(i); ok && hi.Status != 0 {
			st.info.Status, st.info.ContentType, st.info.Headers = hi.Status, hi.ContentType, hi.Headers
			st.sse = mediaType(hi.ContentType) == "text/event-stream"
			return
		}
	}
	if req.Method != http.MethodPost {
		return
	}
	if sid := reqHeader.Get("Mcp-Session-Id"); sid != "" {
		st.info.Headers = []sessions.HTTPHeader{{Name: "Mcp-Session-Id", Value: sid}}
	}
	if answers {
		st.info.Status, st.info.ContentType, st.sse = http.StatusOK, "text/event-stream", true
	} else {
		st.info.Status = http.StatusAccepted
	}
}

// respond writes st's response: its head, then, when hold, what the
// server sends it, until the answers it expects are all written (never,
// when it expects none: a GET stream, a request the recording never
// answered), or the host or replay ends it. The head is recorded as a
// frame of kind http, as the HTTP tap records one.
func (h *HTTPServer) respond(w http.ResponseWriter, r *http.Request, st *liveStream, rx int32, hold, expect bool) {
	s := h.s
	defer func() {
		s.mu.Lock()
		st.ended = true
		if rx >= 0 && s.front.streams[rx] == st {
			delete(s.front.streams, rx)
		}
		s.front.gets = slices.DeleteFunc(s.front.gets, func(g *liveStream) bool { return g == st })
		s.mu.Unlock()
	}()
	hd := w.Header()
	for _, x := range st.info.Headers {
		if sentHeader(x) {
			hd.Set(x.Name, x.Value)
		}
	}
	fl, _ := w.(http.Flusher)
	if st.sse {
		hd.Set("Content-Type", st.info.ContentType)
		hd.Set("Cache-Control", "no-cache")
		w.WriteHeader(st.info.Status)
		if fl != nil {
			fl.Flush()
		}
		s.mu.Lock()
		s.record(classify.S2H, nil, &st.info)
		s.mu.Unlock()
		if !hold {
			return
		}
	} else if !hold || !expect {
		w.WriteHeader(st.info.Status)
		s.mu.Lock()
		s.record(classify.S2H, nil, &st.info)
		s.mu.Unlock()
		return
	}
	var answers [][]byte
	for {
		s.mu.Lock()
		evs := st.events
		st.events = nil
		left := st.want
		s.mu.Unlock()
		for _, ev := range evs {
			if !st.sse {
				answers = append(answers, ev.body)
				continue
			}
			var b []byte
			b = append(b, "event: message\n"...)
			if ev.id != "" {
				b = append(append(append(b, "id: "...), ev.id...), '\n')
			}
			b = append(append(append(b, "data: "...), ev.body...), "\n\n"...)
			if _, err := w.Write(b); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
		if left == 0 && st.sse && expect {
			return
		}
		if left == 0 && !st.sse {
			hd.Set("Content-Type", "application/json")
			w.WriteHeader(st.info.Status)
			if st.batch {
				w.Write(append(append([]byte{'['}, bytes.Join(answers, []byte{','})...), ']'))
			} else if len(answers) > 0 {
				w.Write(answers[0])
			}
			return
		}
		select {
		case <-st.wake:
		case <-r.Context().Done():
			return
		case <-h.done:
			return
		}
	}
}

// send queues frame body of it on the live response it goes out on, and
// records it there; false when there is none open (it is not sent).
// s.mu is held.
func (f *httpFront) send(it outItem, body []byte) bool {
	s := f.s
	st := it.to
	if st == nil && it.raw == nil {
		st = f.route(it.frame)
	}
	if st == nil || st.ended || !st.sse && !it.answer {
		if it.raw == nil {
			s.log("line %d of the recording came on a response that is not open now; not sent", s.rec.frames[it.frame].line)
		}
		return false
	}
	ev := streamEvent{body: body, answer: it.answer}
	if it.raw == nil && st.sse {
		if hi, ok := s.rec.readHTTP(it.frame); ok {
			ev.id = hi.EventID
		}
	}
	st.events = append(st.events, ev)
	if it.answer && it.to == st {
		st.want--
	}
	poke(st.wake)
	info := st.info
	info.EventID = ev.id
	s.record(classify.S2H, body, &info)
	return true
}

// route is the live response recorded frame j goes out on: the one that
// plays the exchange it was recorded in, else the newest GET stream;
// nil when none is open. s.mu is held.
func (f *httpFront) route(j int32) *liveStream {
	if st := f.streams[f.s.rec.frames[j].exchange]; st != nil && !st.ended && st.sse {
		return st
	}
	if n := len(f.gets); n > 0 {
		return f.gets[n-1]
	}
	return nil
}

// sentHeader says whether a recorded response header is sent again: not
// one the recording masked (a cookie), nor one net/http writes itself.
func sentHeader(x sessions.HTTPHeader) bool {
	switch http.CanonicalHeaderKey(x.Name) {
	case "Set-Cookie", "Authorization", "Proxy-Authorization", "Cookie", "Content-Type", "Content-Length":
		return false
	}
	return !strings.Contains(x.Value, "***")
}

// recordHeaders are the headers of a host request the replay's session
// file keeps: those that matter to MCP, as the HTTP tap keeps them,
// secrets masked.
func recordHeaders(h http.Header, red *sessions.Redactor) []sessions.HTTPHeader {
	var out []sessions.HTTPHeader
	for _, name := range []string{"Mcp-Method", "Mcp-Name", "Mcp-Session-Id", "MCP-Protocol-Version", "Last-Event-ID", "Origin"} {
		if vs := h.Values(name); len(vs) > 0 {
			out = append(out, sessions.HTTPHeader{Name: name, Value: red.MaskString(strings.Join(vs, ", "))})
		}
	}
	return out
}

func mediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// readHTTP reads back what HTTP said of recorded frame i (its record's
// http object); false when it has none.
func (rec *recording) readHTTP(i int32) (sessions.HTTPInfo, bool) {
	f := &rec.frames[i]
	ev, err := sessions.NewReaderAt(rec.f, f.off).Next()
	if err != nil || len(ev.HTTP) == 0 {
		return sessions.HTTPInfo{}, false
	}
	return parseHTTP(ev.HTTP)
}

// parseHTTP reads a record's http object, its headers in their order.
func parseHTTP(raw []byte) (sessions.HTTPInfo, bool) {
	var x struct {
		Exchange    int64           `json:"exchange"`
		Method      string          `json:"method"`
		Path        string          `json:"path"`
		Status      int             `json:"status"`
		ContentType string          `json:"content_type"`
		EventID     string          `json:"event_id"`
		Retry       int64           `json:"retry_ms"`
		Headers     json.RawMessage `json:"headers"`
		Error       string          `json:"error"`
	}
	if json.Unmarshal(raw, &x) != nil {
		return sessions.HTTPInfo{}, false
	}
	h := sessions.HTTPInfo{Exchange: x.Exchange, Method: x.Method, Path: x.Path, Status: x.Status, ContentType: x.ContentType,
		EventID: x.EventID, Retry: x.Retry, Error: x.Error}
	if len(x.Headers) > 0 {
		dec := json.NewDecoder(bytes.NewReader(x.Headers))
		if t, err := dec.Token(); err == nil && t == json.Delim('{') {
			for dec.More() {
				k, err1 := dec.Token()
				v, err2 := dec.Token()
				name, ok1 := k.(string)
				val, ok2 := v.(string)
				if err1 != nil || err2 != nil || !ok1 || !ok2 {
					break
				}
				h.Headers = append(h.Headers, sessions.HTTPHeader{Name: name, Value: val})
			}
		}
	}
	return h, true
}
