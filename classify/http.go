package classify

import (
	"strconv"
	"strings"
)

// This file holds the transport rules of Streamable HTTP (the project's
// http design note, "Finding codes (transport http)"): what the HTTP
// request or response that carried a frame says against MCP. The tracker
// judges them from the facts the caller gives with the frame
// (Message.HTTP), as it reads them off the frame's record; it does no I/O.

// HTTP is what the HTTP transport said of a frame: the caller (the HTTP
// tap, or a reader of its session file) sets Message.HTTP to it before
// the tracker observes the frame. A frame with none is judged as on
// stdio. Header values are as the record holds them (secrets masked).
type HTTP struct {
	// Exchange numbers the request and its response in the session,
	// from 1: every frame of one exchange has the same.
	Exchange int64
	// Method is the request's method: POST, GET, DELETE.
	Method string
	// Status is the response's status; 0 on a frame of the request.
	Status int
	// ContentType is that of the request (on its frames) or of the
	// response (on its frames); Accept is the request's Accept, on its
	// frames.
	ContentType, Accept string
	// The MCP headers of the request (on its frames) or the response.
	SessionID, ProtocolVersion, McpMethod, McpName, WWWAuthenticate string
	// EventID is the SSE event's id, when the frame came in one that set
	// it.
	EventID string
	// StreamEnd says the frame marks the end of a text/event-stream
	// response: no event of it comes after.
	StreamEnd bool
}

// maxExchanges bounds the exchanges a tracker remembers for the rules
// that join a request and its response (and for the conversation each
// belongs to); past it the oldest is forgotten, and its response is not
// judged against its request.
const maxExchanges = 1024

// An exchangeState is what the rules keep of one HTTP exchange.
type exchangeState struct {
	n         int64
	rev       revision // the revision of the request's messages
	messages  bool     // the request carried JSON-RPC messages
	requests  []int64  // the seqs of the requests it carried (at most maxExchangeRequests)
	keys      []string // their flight keys
	answered  []bool
	status    bool   // its response's status was judged
	session   bool   // the request named a session (Mcp-Session-Id)
	resumable bool   // its stream set an event id
	judged    uint16 // per-exchange codes already raised (bit per code)
}

const maxExchangeRequests = 64

// httpState is what a tracker keeps for the transport rules.
type httpState struct {
	exchanges map[int64]*exchangeState
	order     []int64         // exchange numbers, oldest first
	reqExch   map[int64]int64 // request seq → its exchange
}

func (s *httpState) exchange(n int64) *exchangeState {
	if x, ok := s.exchanges[n]; ok {
		return x
	}
	if s.exchanges == nil {
		s.exchanges, s.reqExch = map[int64]*exchangeState{}, map[int64]int64{}
	}
	if len(s.order) >= maxExchanges {
		old := s.exchanges[s.order[0]]
		for _, r := range old.requests {
			delete(s.reqExch, r)
		}
		delete(s.exchanges, s.order[0])
		s.order = s.order[1:]
	}
	x := &exchangeState{n: n}
	s.exchanges[n] = x
	s.order = append(s.order, n)
	return x
}

// once reports whether code c was not yet raised for exchange x, and
// marks it raised.
func (x *exchangeState) once(c Code) bool {
	bit := uint16(1) << (c - CodeHTTPStatus)
	if x.judged&bit != 0 {
		return false
	}
	x.judged |= bit
	return true
}

// httpRules judges the frame m (its facts in m.HTTP) after the tracker
// observed it.
func (t *Tracker) httpRules(seq int64, m *Message) {
	h := m.HTTP
	x := t.http.exchange(h.Exchange)
	switch m.Dir {
	case H2S:
		t.httpRequest(seq, m, h, x)
	case S2H:
		for _, p := range t.pairs {
			t.answeredRequest(p.Request)
		}
		t.httpResponse(seq, m, h, x)
	}
}

// answeredRequest marks the request seq answered in its exchange.
func (t *Tracker) answeredRequest(seq int64) {
	n, ok := t.http.reqExch[seq]
	if !ok {
		return
	}
	x := t.http.exchanges[n]
	for i, r := range x.requests {
		if r == seq {
			x.answered[i] = true
		}
	}
}

// messages calls fn for m, or for each member of a batch.
func messages(m *Message, fn func(*Message)) {
	if m.Kind == KindBatch {
		for i := range m.Members {
			fn(&m.Members[i])
		}
		return
	}
	fn(m)
}

func (t *Tracker) httpRequest(seq int64, m *Message, h *HTTP, x *exchangeState) {
	carries := m.Kind != KindHTTP && m.Kind != KindBlank
	rev := t.era()
	messages(m, func(mm *Message) {
		if mm.Kind == KindRequest {
			if v := requestMeta(mm.Meta()).version; v != nil {
				rev = parseRevision(v)
			}
			if len(x.requests) < maxExchangeRequests && mm.HasID() && mm.ID().Valid() {
				x.requests = append(x.requests, seq)
				x.keys = append(x.keys, string(t.flightKey(H2S, mm.ID())))
				x.answered = append(x.answered, false)
				t.http.reqExch[seq] = x.n
			}
		}
	})
	x.rev = rev
	x.session = x.session || h.SessionID != ""
	x.messages = x.messages || carries
	if h.Method == "POST" && carries {
		if mt := mediaType(h.ContentType); mt != "application/json" && x.once(CodeBadContentType) {
			t.emit(seq, CodeBadContentType, Error, "The POST carries JSON-RPC as "+contentTypeText(h.ContentType)+"; MCP's Streamable HTTP transport sends every message in a POST of Content-Type application/json, and a server may refuse any other (415).", 0)
		}
		if !accepts(h.Accept, "application/json") || !accepts(h.Accept, "text/event-stream") {
			if x.once(CodeAcceptMissing) {
				t.emit(seq, CodeAcceptMissing, Warn, "The POST's Accept "+acceptText(h.Accept)+"; MCP's Streamable HTTP transport requires a client to list both application/json and text/event-stream, and a server may refuse the request (406) or answer in the form the host cannot read.", 0)
			}
		}
		if m.Kind != KindBatch {
			t.mcpHeaders(seq, m, h, rev)
		}
	}
	if h.SessionID != "" && rev == rev20260728 && x.once(CodeSessionHeader) {
		t.emit(seq, CodeSessionHeader, Info, "The request sends Mcp-Session-Id under revision 2026-07-28 of MCP, which has no sessions: the server ignores it, and each request stands on its own.", 0)
	}
	if (t.mcp.hsRev == rev20250618 || t.mcp.hsRev == rev20251125) && t.initState >= 2 && !t.legacySSE && h.ProtocolVersion == "" && rev != rev20260728 && x.once(CodeMissingProtocolVersionHeader) {
		t.emit(seq, CodeMissingProtocolVersionHeader, Error, "The request has no MCP-Protocol-Version header after the handshake negotiated revision "+t.mcp.hsRev.String()+"; MCP requires it on every later request, and a server that lacks it assumes 2025-03-26.", 0)
	}
}

// mcpHeaders judges the Mcp-Method and Mcp-Name headers of a POST that
// carries one message, m, under revision rev.
func (t *Tracker) mcpHeaders(seq int64, m *Message, h *HTTP, rev revision) {
	if m.Kind != KindRequest && m.Kind != KindNotification {
		return
	}
	method := m.Method()
	nameKey := ""
	switch method {
	case "tools/call", "prompts/get":
		nameKey = "name"
	case "resources/read":
		nameKey = "uri"
	}
	if h.McpMethod != "" && h.McpMethod != method {
		t.emit(seq, CodeHeaderMismatch, Error, "The Mcp-Method header ("+EscapeString(h.McpMethod, 80)+") is not the body's method ("+EscapeString(method, 80)+"); MCP 2026-07-28: the server MUST refuse it with error -32020 (HeaderMismatch).", 0)
		return
	}
	if nameKey != "" && h.McpName != "" {
		if v, ok := StringValue(Member(m.Params(), nameKey)); ok && v != h.McpName {
			t.emit(seq, CodeHeaderMismatch, Error, "The Mcp-Name header ("+EscapeString(h.McpName, 80)+") is not the body's params."+nameKey+" ("+EscapeString(v, 80)+"); MCP 2026-07-28: the server MUST refuse it with error -32020 (HeaderMismatch).", 0)
			return
		}
	}
	if rev != rev20260728 {
		return
	}
	switch {
	case h.McpMethod == "":
		t.emit(seq, CodeMissingMCPHeaders, Error, "The POST has no Mcp-Method header; revision 2026-07-28 of MCP requires it on every POST (it names the body's method, for gateways that do not read bodies).", 0)
	case nameKey != "" && h.McpName == "":
		t.emit(seq, CodeMissingMCPHeaders, Error, "The "+method+" POST has no Mcp-Name header; revision 2026-07-28 of MCP requires it with the body's params."+nameKey+".", 0)
	}
}

func (t *Tracker) httpResponse(seq int64, m *Message, h *HTTP, x *exchangeState) {
	if h.EventID != "" {
		x.resumable = true
	}
	if !x.status && h.Status != 0 {
		x.status = true
		t.httpStatus(seq, h, x)
	}
	if m.Kind != KindHTTP && m.Kind != KindBlank && h.Status < 300 {
		if mt := mediaType(h.ContentType); mt != "application/json" && mt != "text/event-stream" && x.once(CodeBadContentType) {
			t.emit(seq, CodeBadContentType, Error, "The response carries JSON-RPC as "+contentTypeText(h.ContentType)+"; MCP's Streamable HTTP transport answers with application/json or text/event-stream only, and a host reads nothing else.", 0)
		}
	}
	if h.SessionID != "" && x.rev == rev20260728 && x.once(CodeSessionHeader) {
		t.emit(seq, CodeSessionHeader, Info, "The response returns Mcp-Session-Id to a revision 2026-07-28 request; that revision of MCP has no sessions, and the host does not send it back.", 0)
	}
	if h.StreamEnd && h.Method == "POST" {
		t.streamEnded(seq, x)
	}
}

// httpStatus judges the status of the first frame of x's response.
func (t *Tracker) httpStatus(seq int64, h *HTTP, x *exchangeState) {
	st := h.Status
	if st >= 400 {
		// No JSON-RPC answer comes after an error status: the requests
		// of the POST are done, and do not time out.
		defer t.settleExchange(x, seq)
	}
	switch {
	case st == 401 && h.WWWAuthenticate != "":
		t.emit(seq, CodeAuthChallenge, Info, "The server asks the host to authenticate (401): WWW-Authenticate: "+EscapeString(h.WWWAuthenticate, 400), 0)
	case st == 405 && (h.Method == "GET" || h.Method == "DELETE"):
		// MCP lets a server answer 405 to a GET (it offers no stream)
		// and to a DELETE (it does not let the host end the session).
	case st >= 400:
		t.emit(seq, CodeHTTPStatus, Error, "The server answered the "+methodText(h.Method)+" with HTTP "+strconv.Itoa(st)+statusHint(st, x)+".", 0)
	case h.Method == "POST" && x.messages && len(x.requests) == 0 && st != 202:
		t.emit(seq, CodeNotificationNotAccepted, Warn, "The POST carried only notifications or responses, and the server answered "+strconv.Itoa(st)+"; MCP's Streamable HTTP transport answers such a POST 202 Accepted with no body (or an error status when it refuses it).", 0)
	}
}

// streamEnded judges the end of x's SSE response: a request of the POST
// still unanswered was cut off.
func (t *Tracker) streamEnded(seq int64, x *exchangeState) {
	if x.resumable && x.rev != rev20260728 {
		return // the host may resume the stream with Last-Event-ID
	}
	for i, r := range x.requests {
		if x.answered[i] {
			continue
		}
		t.emit(r, CodeStreamBroken, Warn, "The response stream of this request ended before its answer; the host gets none on it, and must send the request again with a new id (MCP Streamable HTTP).", seq)
	}
	t.settleExchange(x, seq)
}

// settleExchange takes the requests of x still unanswered out of flight:
// their HTTP answer, the frame seq, said no JSON-RPC answer comes. Each
// pairs with that frame, which ends it (an answer that comes all the same
// still pairs).
func (t *Tracker) settleExchange(x *exchangeState, seq int64) {
	for i, r := range x.requests {
		if x.answered[i] {
			continue
		}
		x.answered[i] = true
		f, ok := t.flights.get([]byte(x.keys[i]))
		for ; ok && f != nil; f = f.newer {
			if f.seq == r && f.state == flying {
				t.pairs = append(t.pairs, t.newPair(seq, t.now, f))
				t.land(f, cancelled)
				break
			}
		}
	}
}

func methodText(m string) string {
	if m == "" {
		return "request"
	}
	return EscapeString(m, 16)
}

func statusHint(st int, x *exchangeState) string {
	text := ""
	switch st {
	case 400:
		text = " (Bad Request): it could not take the message, or its headers"
	case 401:
		text = " (Unauthorized) with no WWW-Authenticate: the host is not told how to authenticate"
	case 403:
		text = " (Forbidden): it refuses the host, or its Origin"
	case 404:
		text = " (Not Found)"
		if x.session {
			text += ": the session is gone; MCP: the host starts a new one with initialize"
		}
	case 405:
		text = " (Method Not Allowed)"
	case 406:
		text = " (Not Acceptable): the host's Accept does not allow its answer"
	case 415:
		text = " (Unsupported Media Type)"
	case 500:
		text = " (Internal Server Error)"
	case 502:
		text = " (Bad Gateway)"
	case 503:
		text = " (Service Unavailable)"
	}
	return text
}

// mediaType is a Content-Type's media type, in lower case.
func mediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// accepts reports whether an Accept header lists the media type mt.
func accepts(accept, mt string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		if mediaType(part) == mt {
			return true
		}
	}
	return false
}

func contentTypeText(ct string) string {
	if ct == "" {
		return "with no Content-Type"
	}
	return EscapeString(ct, 80)
}

func acceptText(a string) string {
	if a == "" {
		return "is missing"
	}
	return "is " + EscapeString(a, 120)
}
