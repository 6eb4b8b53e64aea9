package export

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// An exportPair is one request (a batch member on its own) with its
// answer, masked and classified, for the formats made of pairs.
type exportPair struct {
	reqPos  int
	req     *sessions.Entry
	reqEv   *sessions.Event
	reqMsg  *classify.Message // the request (the member of a batch)
	member  int               // the member's index in its batch, or -1
	resp    *sessions.Entry   // nil when unanswered
	respEv  *sessions.Event
	respMsg *classify.Message
	latency time.Duration
}

// status is how the request ended: ok, error, or the request's status
// when unanswered (pending, timed out, cancelled, untracked, or dropped:
// the user dropped it in the tap, and its receiver never read it).
func (p *exportPair) status() string {
	switch {
	case p.respMsg == nil && p.reqEv.Held == sessions.HeldDropped:
		return "dropped"
	case p.respMsg == nil && p.req.Status == sessions.StatusOK:
		return sessions.StatusPending.String() // a batch member left unanswered
	case p.respMsg == nil:
		return p.req.Status.String()
	case p.respMsg.HasError():
		return sessions.StatusError.String()
	}
	return sessions.StatusOK.String()
}

// eachPair calls fn with each request of the session in order, with its
// answer when it has one.
func (s *exporter) eachPair(fn func(p *exportPair) error) error {
	var answerMsgs []classify.Message // the answers classified, each once for all the members
	m, p := &s.reqMsg, &s.pair        // reused from request to request
	return s.walkEntries(false, func(it *walkItem, answers []walkItem) error {
		*m = s.classify(&it.ev)
		answerMsgs = answerMsgs[:0]
		for k := range answers {
			answerMsgs = append(answerMsgs, s.classify(&answers[k].ev))
		}
		one := func(req *classify.Message, member int) error {
			*p = exportPair{reqPos: it.pos, req: &it.e, reqEv: &it.ev, reqMsg: req, member: member}
			for k := range answers {
				a := &answers[k]
				rm := &answerMsgs[k]
				answer := rm
				if rm.Kind == classify.KindBatch || member >= 0 {
					answer = answerIn(rm, req)
				}
				if answer == nil {
					continue
				}
				p.resp, p.respEv, p.respMsg, p.latency = &a.e, &a.ev, answer, a.latency
				break
			}
			s.res.Pairs++
			return fn(p)
		}
		if m.Kind == classify.KindBatch {
			for j := range m.Members {
				if m.Members[j].Kind == classify.KindRequest {
					if err := one(&m.Members[j], j); err != nil {
						return err
					}
				}
			}
			return nil
		}
		return one(m, -1)
	}, nil)
}

// answerIn finds the answer to req in the response m (a batch: its member
// with req's id).
func answerIn(m *classify.Message, req *classify.Message) *classify.Message {
	if !req.HasID() {
		return nil
	}
	if m.Kind != classify.KindBatch {
		if m.HasID() && m.ID().Equal(req.ID()) {
			return m
		}
		return nil
	}
	for j := range m.Members {
		if mm := &m.Members[j]; mm.Kind == classify.KindResponse && mm.HasID() && mm.ID().Equal(req.ID()) {
			return mm
		}
	}
	return nil
}

// jsonOut writes JSON made safe for a terminal a piece at a time: its
// strings are quoted with their control, bidi and format characters
// escaped, and frames embedded as JSON go through
// classify.AppendSafeJSON.
type jsonOut struct {
	w   io.Writer
	b   []byte
	err error
	// sec and secText cache the formatted second of the last time
	// written: a session's times share their seconds.
	sec     int64
	secText []byte
}

func (j *jsonOut) flush() {
	if j.err == nil && len(j.b) > 0 {
		_, j.err = j.w.Write(j.b)
	}
	j.b = j.b[:0]
}

func (j *jsonOut) raw(s string) *jsonOut { j.b = append(j.b, s...); return j }

// str writes s as a JSON string (bytes that are not UTF-8 as U+FFFD).
func (j *jsonOut) str(s string) *jsonOut { return j.strBytes([]byte(s)) }

func (j *jsonOut) strBytes(s []byte) *jsonOut {
	n := len(j.b)
	j.b = sessions.AppendString(j.b, s)
	if bytes.IndexByte(j.b[n:], 0x7f) >= 0 { // the one byte sessions.AppendString keeps that AppendSafeJSON does not
		q := classify.AppendSafeJSON(nil, j.b[n:])
		j.b = append(j.b[:n], q...)
	}
	return j
}

func (j *jsonOut) int(n int64) *jsonOut { j.b = strconv.AppendInt(j.b, n, 10); return j }
func (j *jsonOut) ms(d time.Duration) *jsonOut {
	j.b = strconv.AppendFloat(j.b, float64(d)/float64(time.Millisecond), 'f', -1, 64)
	return j
}

// value writes a frame as a JSON value when it is valid JSON, else as a
// string.
func (j *jsonOut) value(frame []byte) *jsonOut {
	if classify.Valid(frame) {
		j.b = classify.AppendSafeJSON(j.b, frame)
		return j
	}
	return j.strBytes(frame)
}

// message writes a classified frame as value does, trusting the
// classification where it read the whole frame as JSON.
func (j *jsonOut) message(m *classify.Message) *jsonOut {
	if m.Kind >= classify.KindBatch && m.Size == int64(len(m.Frame)) {
		j.b = classify.AppendSafeJSON(j.b, m.Frame)
		return j
	}
	return j.value(m.Frame)
}

// id writes an id as it was on the wire (it is valid JSON), or null.
func (j *jsonOut) id(m *classify.Message) *jsonOut {
	if !m.HasID() {
		return j.raw("null")
	}
	return j.value(m.ID().Raw)
}

// fate writes ,"fate":{…} for a record whose frame had a fate in the tap
// (Fate.AppendJSON), nothing for one that had none.
func (j *jsonOut) fate(ev *sessions.Event) *jsonOut {
	if f := sessions.FateOf(ev); !f.IsZero() {
		j.b = f.AppendJSON(append(j.b, `,"fate":`...))
	}
	return j
}

// time writes t in UTC to the microsecond (RFC 3339).
func (j *jsonOut) time(t time.Time) *jsonOut {
	t = t.UTC()
	if sec := t.Unix(); sec != j.sec || j.secText == nil {
		j.sec, j.secText = sec, t.AppendFormat(j.secText[:0], "2006-01-02T15:04:05")
	}
	us := t.Nanosecond() / 1000
	j.b = append(append(j.b, '"'), j.secText...)
	j.b = append(j.b, '.', byte('0'+us/100000), byte('0'+us/10000%10), byte('0'+us/1000%10), byte('0'+us/100%10), byte('0'+us/10%10), byte('0'+us%10), 'Z', '"')
	return j
}

func (j *jsonOut) finding(f sessions.EntryFinding, line int64) *jsonOut {
	j.raw(`{"line":`).int(line).raw(`,"code":`).str(f.Code.String()).raw(`,"severity":`).str(f.Severity.String()).
		raw(`,"message":`).str(f.Message)
	if f.Member >= 0 {
		j.raw(`,"member":`).int(int64(f.Member))
	}
	if f.Related != 0 {
		j.raw(`,"related":`).int(f.Related)
	}
	return j.raw("}")
}

// pairFindings writes the findings about a pair's request and answer as
// a JSON array.
func (j *jsonOut) pairFindings(s *exporter, p *exportPair) *jsonOut {
	req, resp := s.pairFindings(p)
	j.raw("[")
	for i, f := range req {
		if i > 0 {
			j.raw(",")
		}
		j.finding(f, p.req.Seq)
	}
	for i, f := range resp {
		if i > 0 || len(req) > 0 {
			j.raw(",")
		}
		j.finding(f, p.resp.Seq)
	}
	return j.raw("]")
}

// pairFindings are the findings about a pair's request and answer.
func (s *exporter) pairFindings(p *exportPair) (req, resp []sessions.EntryFinding) {
	if p.req.Codes != 0 {
		req = s.findings(p.reqPos)
	}
	if p.resp != nil && p.resp.Codes != 0 {
		if i, ok := s.x.BySeq(p.resp.Seq); ok {
			resp = s.findings(i)
		}
	}
	return req, resp
}

func (s *exporter) sessionJSON(j *jsonOut) {
	j.raw(`{"file":`).str(s.opts.Source).raw(`,"id":`).str(s.red.MaskString(s.hdr.ID)).raw(`,"name":`).str(s.red.MaskString(s.hdr.Name)).raw(`,"argv":[`)
	for i, a := range s.red.MaskStrings(s.hdr.Argv) {
		if i > 0 {
			j.raw(",")
		}
		j.str(a)
	}
	j.raw(`],"started":`).time(s.hdr.Started).raw(`,"framing":`).str(s.hdr.FramingOrDefault()).raw(`,"profile":`).str(s.x.Profile().String()).raw("}")
}

// jsonDoc writes the JSON export: the session, per-method statistics,
// every pair with its latency and findings, and every finding.
func (s *exporter) jsonDoc(w io.Writer) error {
	stats, err := s.stats()
	if err != nil {
		return err
	}
	j := &jsonOut{w: w}
	j.raw(`{"rpctap":"export","version":1,"session":`)
	s.sessionJSON(j)
	c := s.counts
	j.raw(`,"records":`).int(int64(c.Entries)).raw(`,"frames":{"h2s":`).int(int64(c.H2S)).raw(`,"s2h":`).int(int64(c.S2H)).raw(`,"err":`).int(int64(c.Err)).raw("}")
	j.raw(`,"methods":[`)
	for i, m := range stats {
		if i > 0 {
			j.raw(",")
		}
		j.raw("\n  ")
		j.raw(`{"method":`).str(s.red.MaskString(m.Method)).raw(`,"requests":`).int(int64(m.Requests)).raw(`,"notifications":`).int(int64(m.Notifications)).
			raw(`,"answered":`).int(int64(m.Answered)).raw(`,"errors":`).int(int64(m.Errors))
		if m.Answered > 0 {
			j.raw(`,"p50_ms":`).ms(m.P50).raw(`,"p95_ms":`).ms(m.P95).raw(`,"p99_ms":`).ms(m.P99).raw(`,"max_ms":`).ms(m.Max)
		}
		j.raw("}")
	}
	j.raw("\n],\n\"pairs\":[")
	n := 0
	err = s.eachPair(func(p *exportPair) error {
		if n > 0 {
			j.raw(",")
		}
		n++
		j.raw("\n  ")
		j.raw(`{"request":{"line":`).int(p.req.Seq).raw(`,"time":`).time(s.at(p.req.T)).raw(`,"dir":`).str(p.req.Dir.String())
		if p.member >= 0 {
			j.raw(`,"member":`).int(int64(p.member))
		}
		j.raw(`,"id":`).id(p.reqMsg).raw(`,"method":`).str(p.reqMsg.Method()).raw(`,"frame":`).message(p.reqMsg).fate(p.reqEv).raw("}")
		if p.respMsg != nil {
			j.raw(`,"response":{"line":`).int(p.resp.Seq).raw(`,"time":`).time(s.at(p.resp.T)).raw(`,"frame":`).message(p.respMsg).fate(p.respEv).raw("}")
			j.raw(`,"latency_ms":`).ms(p.latency)
		} else {
			j.raw(`,"response":null`)
		}
		j.raw(`,"status":`).str(p.status())
		if p.respMsg != nil {
			if code, ok := p.respMsg.ErrorCode(); ok {
				j.raw(`,"error_code":`).int(code)
			}
		}
		j.raw(`,"findings":`).pairFindings(s, p).raw("}")
		if len(j.b) > 64<<10 {
			j.flush()
		}
		return j.err
	})
	if err != nil {
		return err
	}
	j.raw("\n],\n\"findings\":[")
	n = 0
	s.eachFinding(func(e *sessions.Entry, fs []sessions.EntryFinding) {
		for _, f := range fs {
			if n > 0 {
				j.raw(",")
			}
			n++
			j.raw("\n  ").finding(f, e.Seq)
		}
		if len(j.b) > 64<<10 {
			j.flush()
		}
	})
	j.raw("\n]}\n")
	j.flush()
	return j.err
}

// eachFinding calls fn with each entry that has findings, in order.
func (s *exporter) eachFinding(fn func(e *sessions.Entry, fs []sessions.EntryFinding)) {
	var chunk []sessions.Entry
	for pos := 0; pos < s.counts.Entries; pos += len(chunk) {
		chunk = s.x.Entries(chunk[:0], pos, pos+4096)
		for i := range chunk {
			if chunk[i].Codes != 0 {
				fn(&chunk[i], s.findings(pos+i))
			}
		}
	}
}

// har writes HAR 1.2: an entry per pair (see the README for the mapping).
func (s *exporter) har(w io.Writer) error {
	j := &jsonOut{w: w}
	j.raw(`{"log":{"version":"1.2","creator":{"name":"rpctap","version":`).str(s.version()).raw(`},`)
	j.raw(`"comment":`).str(fmt.Sprintf("JSON-RPC session %s (%s), exported by rpctap: an entry per request and its answer", s.red.MaskString(s.hdr.ID), s.sessionName()))
	j.raw(`,"entries":[`)
	n := 0
	err := s.eachPair(func(p *exportPair) error {
		if n > 0 {
			j.raw(",")
		}
		n++
		method := p.reqMsg.Method()
		peer := "server"
		if p.req.Dir == classify.S2H {
			peer = "host"
		}
		u := (&url.URL{Scheme: "jsonrpc", Host: peer, Path: "/" + method}).String()
		j.raw("\n").raw(`{"startedDateTime":`).time(s.at(p.req.T)).raw(`,"time":`).ms(p.latency)
		j.raw(`,"request":{"method":"POST","url":`).str(u).raw(`,"httpVersion":"JSON-RPC/2.0","cookies":[],"headers":[],"queryString":[],"postData":{"mimeType":"application/json","text":`).
			strBytes(p.reqMsg.Frame).raw(`},"headersSize":-1,"bodySize":`).int(int64(len(p.reqMsg.Frame))).raw("}")
		status, text := 0, "no answer: "+p.status()
		if f := sessions.FateOf(p.reqEv); !f.Delivered() {
			text = "no answer: " + f.Text()
		}
		var body []byte
		if p.respMsg != nil {
			body = p.respMsg.Frame
			status, text = 200, "OK"
			if p.respMsg.HasError() {
				status, text = 500, "JSON-RPC error"
				if msg, ok := sessions.ErrorMessage(p.respMsg); ok {
					text = msg
				}
			}
		}
		j.raw(`,"response":{"status":`).int(int64(status)).raw(`,"statusText":`).str(text).raw(`,"httpVersion":"JSON-RPC/2.0","cookies":[],"headers":[],"content":{"size":`).
			int(int64(len(body))).raw(`,"mimeType":"application/json"`)
		if p.respMsg != nil {
			j.raw(`,"text":`).strBytes(body)
		}
		j.raw(`},"redirectURL":"","headersSize":-1,"bodySize":`)
		if p.respMsg != nil {
			j.int(int64(len(body)))
		} else {
			j.raw("-1")
		}
		j.raw(`},"cache":{},"timings":{"send":0,"wait":`).ms(p.latency).raw(`,"receive":0}`)
		j.raw(`,"_rpctap":{"direction":`).str(p.req.Dir.String()).raw(`,"request_line":`).int(p.req.Seq)
		if p.resp != nil {
			j.raw(`,"response_line":`).int(p.resp.Seq)
		}
		if p.member >= 0 {
			j.raw(`,"member":`).int(int64(p.member))
		}
		j.raw(`,"id":`).id(p.reqMsg).raw(`,"status":`).str(p.status())
		if p.respMsg != nil {
			if code, ok := p.respMsg.ErrorCode(); ok {
				j.raw(`,"error_code":`).int(code)
			}
		}
		if f := sessions.FateOf(p.reqEv); !f.IsZero() {
			j.b = f.AppendJSON(append(j.b, `,"request_fate":`...))
		}
		if p.respEv != nil {
			if f := sessions.FateOf(p.respEv); !f.IsZero() {
				j.b = f.AppendJSON(append(j.b, `,"response_fate":`...))
			}
		}
		if p.req.Codes != 0 || p.resp != nil && p.resp.Codes != 0 {
			j.raw(`,"findings":`).pairFindings(s, p)
		}
		j.raw("}}")
		if len(j.b) > 64<<10 {
			j.flush()
		}
		return j.err
	})
	if err != nil {
		return err
	}
	j.raw("\n]}}\n")
	j.flush()
	return j.err
}

func (s *exporter) version() string {
	if s.opts.Version != "" {
		return s.opts.Version
	}
	return "devel"
}

// otlpBatch is how many spans each line of the OTLP export carries.
const otlpBatch = 512

// otlp writes OTLP JSON, as the OpenTelemetry file exporter does: one
// ExportTraceServiceRequest a line, a span per pair.
func (s *exporter) otlp(w io.Writer) error {
	j := &jsonOut{w: w}
	head := func() {
		j.raw(`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":`).str(s.sessionName()).
			raw(`}},{"key":"rpctap.session.id","value":{"stringValue":`).str(s.red.MaskString(s.hdr.ID)).raw(`}}]},`).
			raw(`"scopeSpans":[{"scope":{"name":"rpctap","version":`).str(s.version()).raw(`},"spans":[`)
	}
	n := 0
	err := s.eachPair(func(p *exportPair) error {
		if n%otlpBatch == 0 {
			head()
		} else {
			j.raw(",")
		}
		n++
		sp := sessions.SpanPair{SessionID: s.hdr.ID, Request: p.reqMsg, Response: p.respMsg, RequestLine: p.req.Seq, Member: p.member, Start: s.at(p.req.T),
			RequestFate: sessions.FateOf(p.reqEv)}
		if p.resp != nil {
			sp.ResponseLine, sp.End, sp.ResponseFate = p.resp.Seq, s.at(p.resp.T), sessions.FateOf(p.respEv)
		}
		sessions.PairSpanIn(&s.span, sp)
		s.spanJSON(j, &s.span)
		if n%otlpBatch == 0 {
			j.raw("]}]}]}\n")
			j.flush()
		}
		return j.err
	})
	if err != nil {
		return err
	}
	if n%otlpBatch != 0 {
		j.raw("]}]}]}\n")
	}
	j.flush()
	return j.err
}

func (s *exporter) spanJSON(j *jsonOut, sp *sessions.Span) {
	j.raw(`{"traceId":"`)
	j.b = hex.AppendEncode(j.b, sp.TraceID[:])
	j.raw(`","spanId":"`)
	j.b = hex.AppendEncode(j.b, sp.SpanID[:])
	j.raw(`"`)
	if sp.Parent != ([8]byte{}) {
		j.raw(`,"parentSpanId":"`)
		j.b = hex.AppendEncode(j.b, sp.Parent[:])
		j.raw(`"`)
	}
	if sp.Flags != 0 {
		j.raw(`,"flags":`).int(int64(sp.Flags))
	}
	j.raw(`,"name":`).str(s.red.MaskString(sp.Name)).raw(`,"kind":3,"startTimeUnixNano":"`).int(sp.Start.UnixNano()).raw(`","endTimeUnixNano":"`).int(sp.End.UnixNano()).raw(`","attributes":[`)
	for i, a := range sp.Attributes {
		if i > 0 {
			j.raw(",")
		}
		j.raw(`{"key":`).str(a.Key).raw(`,"value":{`)
		switch v := a.Value.(type) {
		case string:
			j.raw(`"stringValue":`).str(v)
		case int64:
			j.raw(`"intValue":"`).int(v).raw(`"`)
		case bool:
			j.raw(`"boolValue":`).raw(strconv.FormatBool(v))
		}
		j.raw("}}")
	}
	j.raw("]")
	if sp.Error {
		j.raw(`,"status":{"code":2,"message":`).str(sp.ErrorMessage).raw("}")
	}
	j.raw("}")
}
