package export

import (
	"encoding/hex"
	"io"
	"strconv"

	"github.com/rpctap/rpctap/sessions"
)

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
			RequestFate: sessions.FateOf(p.reqEv), RequestHTTP: p.reqEv.HTTP}
		if p.resp != nil {
			sp.ResponseLine, sp.End, sp.ResponseFate, sp.ResponseHTTP = p.resp.Seq, s.at(p.resp.T), sessions.FateOf(p.respEv), p.respEv.HTTP
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
			j.raw(`"stringValue":`).str(s.red.MaskString(v))
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
