package export

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// The HAR of an HTTP session (the HTTP tap's, transport "http"): an entry
// per HTTP exchange, as a browser's network panel would have recorded it,
// from the frames' http objects.

// harExchange is one exchange of an HTTP session: where its records are.
type harExchange struct {
	n    int64
	recs []int // positions in the index
}

// httpExchanges lists the session's exchanges in the order their first
// record came, each with the positions of its records.
func (s *exporter) httpExchanges() ([]*harExchange, error) {
	var list []*harExchange
	by := map[int64]*harExchange{}
	rr := sessions.NewRecordReader(s.f)
	var chunk []sessions.Entry
	for pos := 0; pos < s.counts.Entries; pos += len(chunk) {
		chunk = s.x.Entries(chunk[:0], pos, pos+4096)
		for i := range chunk {
			e := &chunk[i]
			if !e.IsFrame() || e.Dir == classify.Err {
				continue
			}
			ev, err := rr.Read(*e)
			if err != nil {
				return nil, fmt.Errorf("%w (did the session file change while it was exported?)", err)
			}
			h, ok := sessions.ParseHTTP(ev.HTTP)
			if !ok {
				continue // a frame with no http object belongs to no exchange
			}
			x := by[h.Exchange]
			if x == nil {
				x = &harExchange{n: h.Exchange}
				by[h.Exchange] = x
				list = append(list, x)
			}
			x.recs = append(x.recs, pos+i)
		}
	}
	return list, nil
}

// harHTTP writes HAR 1.2 of an HTTP session: an entry per exchange, with
// its method, URL (the target's scheme and host, the request's path), the
// headers the tap recorded (masked), the request's body, the response's
// status, headers and body (a JSON body as it came; an event stream as
// its events, "id:" and "data:" lines), and the exchange's times.
func (s *exporter) harHTTP(w io.Writer) error {
	xs, err := s.httpExchanges()
	if err != nil {
		return err
	}
	base := ""
	if len(s.hdr.Argv) > 0 {
		if u, err := url.Parse(s.hdr.Argv[0]); err == nil && u.Host != "" {
			base = u.Scheme + "://" + u.Host
		}
	}
	j := &jsonOut{w: w}
	j.raw(`{"log":{"version":"1.2","creator":{"name":"rpctap","version":`).str(s.version()).raw(`},`)
	j.raw(`"comment":`).str(fmt.Sprintf("HTTP session %s (%s), exported by rpctap: an entry per HTTP exchange", s.red.MaskString(s.hdr.ID), s.sessionName()))
	j.raw(`,"entries":[`)
	rr := sessions.NewRecordReader(s.f)
	var ex httpEntry
	for i, x := range xs {
		if err := ex.read(s, rr, x); err != nil {
			return err
		}
		if i > 0 {
			j.raw(",")
		}
		ex.write(s, j, base)
		s.res.Pairs++
		if len(j.b) > 64<<10 {
			j.flush()
		}
		if j.err != nil {
			return j.err
		}
	}
	j.raw("\n]}}\n")
	j.flush()
	return j.err
}

// An httpEntry is one exchange read back, masked, for its HAR entry.
type httpEntry struct {
	n                     int64
	req, resp             sessions.HTTPInfo // the first record of each side
	hasReq, hasResp       bool
	start, firstResp, end int64 // t of the first record, the first response record, the last
	reqBody, respBody     []byte
	events, messages      int
	lines                 []int64
	methods               []string
	errs                  []string
}

// read reads exchange x's records back into e.
func (e *httpEntry) read(s *exporter, rr *sessions.RecordReader, x *harExchange) error {
	*e = httpEntry{n: x.n, reqBody: e.reqBody[:0], respBody: e.respBody[:0], lines: e.lines[:0], methods: e.methods[:0], errs: e.errs[:0]}
	for k, pos := range x.recs {
		en := s.x.At(pos)
		ev, err := rr.Read(en)
		if err != nil {
			return fmt.Errorf("%w (did the session file change while it was exported?)", err)
		}
		s.mask(ev)
		h, _ := sessions.ParseHTTP(ev.HTTP)
		if k == 0 {
			e.start = ev.T
		}
		e.end = ev.T
		e.lines = append(e.lines, en.Seq)
		if h.Error != "" && !slices.Contains(e.errs, h.Error) {
			e.errs = append(e.errs, h.Error)
		}
		if en.Kind != classify.KindHTTP {
			e.messages++
			if m := en.Method; m != "" && en.Dir == classify.H2S && !slices.Contains(e.methods, m) {
				e.methods = append(e.methods, m)
			}
		}
		switch ev.Dir {
		case classify.H2S:
			if !e.hasReq {
				e.req, e.hasReq = h, true
			} else if len(ev.Frame) > 0 && len(e.reqBody) > 0 {
				e.reqBody = append(e.reqBody, '\n')
			}
			e.reqBody = append(e.reqBody, ev.Frame...)
		case classify.S2H:
			if !e.hasResp {
				e.resp, e.hasResp, e.firstResp = h, true, ev.T
			}
			switch {
			case sessions.MediaType(h.ContentType) != "text/event-stream":
				e.respBody = append(e.respBody, ev.Frame...)
			case h.EventID != "" || len(ev.Frame) > 0 || h.Retry > 0 || en.Kind != classify.KindHTTP:
				// An event, as the stream carried it (its data lines
				// one a line; rpctap keeps no comment or event name).
				e.events++
				if h.EventID != "" {
					e.respBody = append(append(append(e.respBody, "id: "...), h.EventID...), '\n')
				}
				if h.Retry > 0 {
					e.respBody = fmt.Appendf(e.respBody, "retry: %d\n", h.Retry)
				}
				for _, l := range bytes.Split(ev.Frame, []byte("\n")) {
					e.respBody = append(append(append(e.respBody, "data: "...), l...), '\n')
				}
				e.respBody = append(e.respBody, '\n')
			}
		}
	}
	return nil
}

// write writes e as a HAR entry; base is the target's scheme and host.
func (e *httpEntry) write(s *exporter, j *jsonOut, base string) {
	req := e.req
	if !e.hasReq {
		req = e.resp // the request's record is missing (a gap): the response names it too
	}
	path := s.red.MaskString(req.Path)
	wait, receive := time.Duration(0), time.Duration(0)
	if e.hasResp {
		wait = time.Duration(e.firstResp-e.start) * time.Microsecond
		receive = time.Duration(e.end-e.firstResp) * time.Microsecond
	}
	j.raw("\n").raw(`{"startedDateTime":`).time(s.at(e.start)).raw(`,"time":`).ms(wait + receive)
	j.raw(`,"request":{"method":`).str(req.Method).raw(`,"url":`).str(base + path).raw(`,"httpVersion":"HTTP/1.1","cookies":[],"headers":`)
	harHeaders(s, j, &e.req, e.hasReq && len(e.reqBody) > 0)
	j.raw(`,"queryString":[`)
	if _, q, ok := strings.Cut(path, "?"); ok {
		vs, _ := url.ParseQuery(q)
		n := 0
		for _, k := range slices.Sorted(maps.Keys(vs)) {
			for _, v := range vs[k] {
				if n > 0 {
					j.raw(",")
				}
				n++
				j.raw(`{"name":`).str(k).raw(`,"value":`).str(v).raw("}")
			}
		}
	}
	j.raw("]")
	if len(e.reqBody) > 0 {
		mt := e.req.ContentType
		if mt == "" {
			mt = "application/octet-stream"
		}
		j.raw(`,"postData":{"mimeType":`).str(mt).raw(`,"text":`).strBytes(e.reqBody).raw("}")
	}
	j.raw(`,"headersSize":-1,"bodySize":`).int(int64(len(e.reqBody))).raw("}")
	status, text := e.resp.Status, http.StatusText(e.resp.Status)
	if !e.hasResp {
		status, text = 0, "no response recorded"
	}
	j.raw(`,"response":{"status":`).int(int64(status)).raw(`,"statusText":`).str(text).raw(`,"httpVersion":"HTTP/1.1","cookies":[],"headers":`)
	harHeaders(s, j, &e.resp, e.hasResp)
	mt := e.resp.ContentType // "" for a response with no body (a 202)
	j.raw(`,"content":{"size":`).int(int64(len(e.respBody))).raw(`,"mimeType":`).str(mt)
	if len(e.respBody) > 0 {
		j.raw(`,"text":`).strBytes(e.respBody)
	}
	if len(e.errs) > 0 {
		j.raw(`,"comment":`).str(s.red.MaskString(strings.Join(e.errs, "; ")))
	}
	j.raw(`},"redirectURL":"","headersSize":-1,"bodySize":`)
	if e.hasResp && sessions.MediaType(mt) != "text/event-stream" && len(e.errs) == 0 {
		j.int(int64(len(e.respBody)))
	} else {
		j.raw("-1") // a stream's bytes on the wire are not the events rpctap kept
	}
	j.raw(`},"cache":{},"timings":{"send":0,"wait":`).ms(wait).raw(`,"receive":`).ms(receive).raw("}")
	j.raw(`,"_rpctap":{"exchange":`).int(e.n).raw(`,"lines":[`)
	for i, l := range e.lines {
		if i > 0 {
			j.raw(",")
		}
		j.int(l)
	}
	j.raw(`],"messages":`).int(int64(e.messages)).raw(`,"events":`).int(int64(e.events))
	if len(e.methods) > 0 {
		j.raw(`,"methods":[`)
		for i, m := range e.methods {
			if i > 0 {
				j.raw(",")
			}
			j.str(s.red.MaskString(m))
		}
		j.raw("]")
	}
	if len(e.errs) > 0 {
		j.raw(`,"error":`).str(s.red.MaskString(strings.Join(e.errs, "; ")))
	}
	j.raw("}}")
}

// harHeaders writes the headers the tap recorded of one side (masked as
// recorded, and with the export's redactor), its Content-Type first when
// the side carried a body.
func harHeaders(s *exporter, j *jsonOut, h *sessions.HTTPInfo, body bool) {
	j.raw("[")
	n := 0
	if body && h.ContentType != "" {
		j.raw(`{"name":"Content-Type","value":`).str(s.red.MaskString(h.ContentType)).raw("}")
		n++
	}
	for _, hd := range h.Headers {
		if n > 0 {
			j.raw(",")
		}
		n++
		j.raw(`{"name":`).str(hd.Name).raw(`,"value":`).str(s.red.MaskString(hd.Value)).raw("}")
	}
	j.raw("]")
}
