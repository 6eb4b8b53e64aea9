package export

import (
	"fmt"
	"io"
	"net/url"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// har writes HAR 1.2: an entry per pair (see the README for the mapping).
func (s *exporter) har(w io.Writer) error {
	if s.hdr.Transport == sessions.TransportHTTP {
		return s.harHTTP(w)
	}
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
