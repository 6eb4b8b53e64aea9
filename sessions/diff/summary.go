package diff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// A summary is what diff keeps of one session.
type summary struct {
	f       *os.File
	frames  int
	methods map[string]int64 // "h2s tools/call" → first line
	// tools, prompts and resources are the definitions the server definition
	// (the last listing of each name wins), as compact JSON.
	tools, prompts, resources map[string]definition
	// calls are the requests answered, by their structural hash (id
	// left out): the first of each.
	calls map[uint64]call
	// listed says the session listed tools, prompts, resources.
	listed [3]bool
	// answered says the server has answered a request: what was asked
	// before waited for its start-up too.
	answered bool
	// latency holds each group's latencies (µs).
	latency map[string][]int32
	// findings by code: how many, and the first.
	findings map[classify.Code]*findingCount
	// user are the lines of the frames the user wrote toward the server
	// (injected, edited): findings about them, or that link to them, are
	// the user's, and no difference between the servers.
	user     sessions.UserLines
	interned map[string]string
	hdr      sessions.Header
	// trips are the multi round-trip calls awaiting a retry, by their
	// first request's line.
	trips map[int64]trip
	// http holds an HTTP session's statuses by kind of exchange.
	http httpStatuses
}

// A trip is a multi round-trip call awaiting a retry: the call (its
// params' hash) whose answer the retry's is, and whether its first
// request waited for the server to start.
type trip struct {
	params  uint64
	startup bool
}

type definition struct {
	line int64
	def  []byte
}

type call struct {
	req, resp       int64 // lines
	reqOff, respOff int64
	key             uint64 // its call (sessions.CallID.Key)
	params, outcome uint64 // structural hashes of the request and its answer
	method          string
	name            string // what it calls, for people: "tools/call echo"
	masked          bool   // the recording masked a secret in the request or its answer
	// rounds are a multi round-trip call's (MCP 2026-07-28): its answer
	// is then its final one; 0 for a call of one round.
	rounds int
}

type findingCount struct {
	n       int
	line    int64
	sev     classify.Severity
	message string
}

type pendingCall struct {
	call                sessions.CallID
	params              uint64
	method, group, name string
	off                 int64
	startup             bool // asked before the server answered anything
	masked              bool
}

func summarize(path string, ig sessions.Ignore) (*summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot compare: %w", err)
	}
	s := &summary{f: f, methods: map[string]int64{}, tools: map[string]definition{}, prompts: map[string]definition{}, resources: map[string]definition{},
		calls: map[uint64]call{}, latency: map[string][]int32{}, findings: map[classify.Code]*findingCount{}, interned: map[string]string{},
		trips: map[int64]trip{}}
	rd := sessions.NewReader(f)
	hdr, hasHeader := rd.Header()
	s.hdr = hdr
	framing, _ := classify.ParseFraming(hdr.FramingOrDefault())
	profile, _ := classify.ParseProfile(hdr.ProfileOrDefault())
	tr := classify.NewTracker(classify.TrackerOptions{Profile: profile, LSPFraming: framing == classify.FramingLSP})
	inFlight := map[int64]pendingCall{}
	records := 0
	var hs sessions.Hasher
	hs.Ignore = ig
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		records++
		at := time.Duration(ev.T) * time.Microsecond
		if ev.Kind == sessions.EventNote && ev.Text == sessions.NoteFramingLSP {
			tr.UseLSPFraming()
		}
		if !ev.IsFrame() || ev.Dir == classify.Err {
			s.sessionFindings(tr.Advance(at))
			continue
		}
		s.frames++
		// The server's conversation, as replay reads it: not what the
		// user wrote in the server's place, nor a host frame the server
		// never read, and a server frame the user edited as the server
		// wrote it.
		frame, _, ok := sessions.ServerSide(ev)
		if !ok {
			continue
		}
		line := int64(ev.Line)
		fate := sessions.FateOf(ev)
		if ev.Dir == classify.H2S && fate.ByUser() {
			s.user.Add(line)
		}
		m := hdr.Classify(frame, ev.Dir, tr.Profile())
		obs := tr.ObserveDelivery(line, at, &m, fate.Delivery())
		if !s.user.Has(line) {
			s.frameFindings(line, &m)
		}
		s.sessionFindings(obs.Findings)
		if method := m.Method(); method != "" && (m.Kind == classify.KindRequest || m.Kind == classify.KindNotification) {
			key := s.intern(ev.Dir.String() + " " + method)
			if _, ok := s.methods[key]; !ok {
				s.methods[key] = line
			}
		}
		switch m.Kind {
		case classify.KindRequest:
			if ev.Dir == classify.H2S {
				inFlight[line] = s.request(&hs, m.Method(), frame, rd.Offset(), ev.Redacted)
				if ev.HTTP != nil {
					s.http.frame(line, ev.Dir, &m, ev.HTTP, inFlight[line].name, s.intern)
				}
			}
		case classify.KindResponse:
			if ev.Dir == classify.S2H {
				s.answered = true
			}
			s.answers(&hs, inFlight, obs.Pairs, line, frame, rd.Offset(), ev.Redacted)
		}
		if ev.HTTP != nil && !(m.Kind == classify.KindRequest && ev.Dir == classify.H2S) {
			s.http.frame(line, ev.Dir, &m, ev.HTTP, "", s.intern)
		}
	}
	if !hasHeader && records == 0 {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, sessions.ErrNoRecords)
	}
	return s, nil
}

// request is the call a host request makes, its frame read from the
// file at off (masked: the recording masked a secret in it).
func (s *summary) request(hs *sessions.Hasher, method string, frame []byte, off int64, masked bool) pendingCall {
	method = s.intern(method)
	h, idn, _ := hs.HashCall(method, frame)
	name, group := method, method
	if n := sessions.CallNameOf(method, idn.Parts); n != "" {
		name = s.intern(method + " " + n)
		if groupedByName(method) {
			group = name
		}
	}
	return pendingCall{call: idn.Call, params: h, method: method, group: group, name: name, off: off,
		startup: !s.answered, masked: masked}
}

// answers takes in the pairs a response of line (its frame read from the
// file at off) makes with the calls in flight: each call's latency, the
// first answer of each call, and the listings. A multi round-trip call
// is one call: the answer to its last retry is its answer, its latency
// runs from its first request, and its retries are no calls of their own.
func (s *summary) answers(hs *sessions.Hasher, inFlight map[int64]pendingCall, pairs []classify.Pair, line int64, frame []byte, off int64, masked bool) {
	for _, p := range pairs {
		pc, ok := inFlight[p.Request]
		if !ok {
			continue
		}
		delete(inFlight, p.Request)
		first := p.Origin == 0
		if !first {
			pc.startup = pc.startup || s.trips[p.Origin].startup
		}
		// A request asked before the server's first answer
		// waited for the server to start: not a call's latency.
		if lat := p.CallLatency.Microseconds(); lat >= 0 && !pc.startup && !p.InputRequired {
			s.latency[pc.group] = append(s.latency[pc.group], int32(min(lat, math.MaxInt32)))
		}
		if !first {
			s.retryAnswered(hs, p, line, frame, off, masked)
			continue
		}
		// A listing's answer is compared item by item instead.
		if _, seen := s.calls[pc.params]; !seen && !isListing(p.Method) {
			out, _ := hs.Hash(frame)
			s.calls[pc.params] = call{req: p.Request, resp: line, reqOff: pc.off, respOff: off,
				key: pc.call.Key, params: pc.params, outcome: out, method: pc.method, name: pc.name, masked: pc.masked || masked, rounds: p.Round}
			if p.InputRequired && len(s.trips) < maxTrips {
				s.trips[p.Request] = trip{params: pc.params, startup: pc.startup}
			}
		}
		s.listing(p.Method, line, frame)
	}
}

// maxTrips bounds the multi round-trip calls awaiting a retry; past it a
// call's retries are left out (its first answer stands).
const maxTrips = 4096

// retryAnswered makes the answer of line to a retry, paired as p, the
// answer of the call it retries (when that call is one diff keeps).
func (s *summary) retryAnswered(hs *sessions.Hasher, p classify.Pair, line int64, frame []byte, off int64, masked bool) {
	tr, ok := s.trips[p.Origin]
	if !ok {
		return
	}
	if !p.InputRequired {
		delete(s.trips, p.Origin)
	}
	c, ok := s.calls[tr.params]
	if !ok || c.req != p.Origin {
		return
	}
	c.resp, c.respOff, c.rounds = line, off, p.Round
	c.outcome, _ = hs.Hash(frame)
	c.masked = c.masked || masked
	s.calls[tr.params] = c
}

func (s *summary) intern(v string) string { return sessions.InternIn(s.interned, v) }

// groupedByName reports whether the latencies of method's calls are
// grouped by what they call (one tool, prompt or resource), and not by
// the method alone: MCP's calls of one thing (an LSP request's document
// and position would make a group a call).
func groupedByName(method string) bool {
	switch method {
	case "tools/call", "prompts/get", "resources/read":
		return true
	}
	return false
}

func isListing(method string) bool {
	return method == "tools/list" || method == "prompts/list" || method == "resources/list"
}

// listing keeps the definitions in a tools/list, prompts/list or
// resources/list answer.
func (s *summary) listing(method string, line int64, frame []byte) {
	var into map[string]definition
	var member, key string
	var kind int
	switch method {
	case "tools/list":
		into, member, key, kind = s.tools, "tools", "name", 0
	case "prompts/list":
		into, member, key, kind = s.prompts, "prompts", "name", 1
	case "resources/list":
		into, member, key, kind = s.resources, "resources", "uri", 2
	default:
		return
	}
	list := classify.Member(classify.Member(frame, "result"), member)
	if list == nil {
		return
	}
	s.listed[kind] = true
	var defs []json.RawMessage
	if err := json.Unmarshal(list, &defs); err != nil {
		return
	}
	for _, d := range defs {
		name, ok := classify.StringValue(classify.Member(d, key))
		if !ok {
			continue
		}
		var b bytes.Buffer
		if json.Compact(&b, d) == nil {
			into[name] = definition{line: line, def: b.Bytes()}
		}
	}
}

func (s *summary) frameFindings(line int64, m *classify.Message) {
	for _, f := range m.Findings {
		s.count(line, f)
	}
	for i := range m.Members {
		for _, f := range m.Members[i].Findings {
			s.count(line, f)
		}
	}
}

// sessionFindings counts the tracker's findings, but the user's.
func (s *summary) sessionFindings(fs []classify.SessionFinding) {
	for _, f := range fs {
		if !sessions.FindingByUser(f.Seq, f.Related, s.user.Has) {
			s.count(f.Seq, f.Finding)
		}
	}
}

func (s *summary) count(line int64, f classify.Finding) {
	fc := s.findings[f.Code]
	if fc == nil {
		s.findings[f.Code] = &findingCount{n: 1, line: line, sev: f.Severity, message: f.Message}
		return
	}
	fc.n++
	fc.sev = max(fc.sev, f.Severity)
}

// readFrameAt reads back the frame of the record at off, as the server
// read or wrote it (sessions.ServerSide).
func readFrameAt(f io.ReaderAt, off int64) []byte {
	r := sessions.NewReaderAt(f, off)
	ev, err := r.Next()
	if err != nil {
		return nil
	}
	frame, _, ok := sessions.ServerSide(ev)
	if !ok {
		return nil
	}
	return bytes.Clone(frame)
}
