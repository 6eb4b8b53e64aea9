package export

import (
	"bytes"
	"io"
	"strconv"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

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
	j.b = classify.AppendString(j.b, s)
	if bytes.IndexByte(j.b[n:], 0x7f) >= 0 { // the one byte classify.AppendString keeps that AppendSafeJSON does not
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
		j.raw(`{"method":`).str(s.red.MaskString(m.Method)).raw(`,"requests":`).int(int64(m.Requests)).raw(`,"retries":`).int(int64(m.Retries)).raw(`,"notifications":`).int(int64(m.Notifications)).
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
			if p.resp.Call.Origin != 0 {
				j.raw(`,"call_latency_ms":`).ms(p.resp.Call.CallLatency)
			}
		} else {
			j.raw(`,"response":null`)
		}
		if p.req.Call.Origin != 0 {
			j.raw(`,"retry_of":`).int(p.req.Call.Origin)
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
