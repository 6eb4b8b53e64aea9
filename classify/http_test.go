package classify

import (
	"slices"
	"strings"
	"testing"
)

// An hstep is one frame of an HTTP session with what HTTP said of it.
type hstep struct {
	dir  Direction
	body string // "" for a frame of kind http
	h    HTTP
}

// hrun feeds a tracker the steps, judging each frame by the tracker's
// profile as the tap does, and returns every session finding.
func hrun(steps []hstep) []SessionFinding {
	fs, _ := hrunPairs(steps)
	return fs
}

// hrunPairs is hrun, with the pairs the tracker found.
func hrunPairs(steps []hstep) ([]SessionFinding, []Pair) {
	tr := NewTracker(TrackerOptions{})
	var out []SessionFinding
	var pairs []Pair
	for i, s := range steps {
		var m Message
		if s.body == "" {
			m = NoMessage(s.dir, tr.Profile())
		} else {
			m = Classify([]byte(s.body), s.dir, tr.Profile())
		}
		h := s.h
		m.HTTP = &h
		obs := tr.ObserveDelivery(int64(i+1), 0, &m, Delivered)
		out = append(out, obs.Findings...)
		pairs = append(pairs, obs.Pairs...)
	}
	return append(out, tr.End(0)...), pairs
}

func codesOf(fs []SessionFinding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code.String())
	}
	return out
}

const (
	accept  = "application/json, text/event-stream"
	jsonCT  = "application/json"
	sseCT   = "text/event-stream"
	sess    = "s-1"
	init25  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`
	answer0 = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`
)

func post(n int64, body string) hstep {
	return hstep{H2S, body, HTTP{Exchange: n, Method: "POST", ContentType: jsonCT, Accept: accept, SessionID: sess, ProtocolVersion: "2025-11-25"}}
}

func answer(n int64, status int, ct, body string) hstep {
	return hstep{S2H, body, HTTP{Exchange: n, Method: "POST", Status: status, ContentType: ct}}
}

// session25 is a correct Streamable HTTP session of revision 2025-11-25:
// the handshake, a GET stream refused with 405, a tools/list answered on
// an SSE stream, a tools/call answered in JSON, and the session's end.
func session25() []hstep {
	initReq := post(1, init25)
	initReq.h.SessionID, initReq.h.ProtocolVersion = "", ""
	initAns := answer(1, 200, jsonCT, answer0)
	initAns.h.SessionID = sess
	return []hstep{
		initReq, initAns,
		post(2, inited), answer(2, 202, "", ""),
		{H2S, "", HTTP{Exchange: 3, Method: "GET", Accept: sseCT, SessionID: sess, ProtocolVersion: "2025-11-25"}},
		{S2H, "", HTTP{Exchange: 3, Method: "GET", Status: 405}},
		post(4, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		answer(4, 200, sseCT, `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`),
		{S2H, "", HTTP{Exchange: 4, Method: "POST", Status: 200, ContentType: sseCT, StreamEnd: true}},
		post(5, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}`),
		answer(5, 200, jsonCT, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`),
		{H2S, "", HTTP{Exchange: 6, Method: "DELETE", SessionID: sess, ProtocolVersion: "2025-11-25"}},
		{S2H, "", HTTP{Exchange: 6, Method: "DELETE", Status: 200}},
	}
}

const (
	discover26 = `{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{` + meta26 + `}}`
	call26     = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{},` + meta26 + `}}`
)

// session26 is a correct stateless exchange of revision 2026-07-28:
// server/discover, and a tools/call answered on an SSE stream, each POST
// with its Mcp-Method (and Mcp-Name) header.
func session26() []hstep {
	p := func(n int64, method, name, body string) hstep {
		return hstep{H2S, body, HTTP{Exchange: n, Method: "POST", ContentType: jsonCT, Accept: accept, McpMethod: method, McpName: name}}
	}
	return []hstep{
		p(1, "server/discover", "", discover26),
		answer(1, 200, jsonCT, `{"jsonrpc":"2.0","id":"d","result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`),
		p(2, "tools/call", "echo", call26),
		answer(2, 200, sseCT, `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[]}}`),
		{S2H, "", HTTP{Exchange: 2, Method: "POST", Status: 200, ContentType: sseCT, StreamEnd: true}},
	}
}

var httpCodes = []Code{CodeHTTPStatus, CodeAuthChallenge, CodeHeaderMismatch, CodeMissingMCPHeaders, CodeMissingProtocolVersionHeader,
	CodeBadContentType, CodeAcceptMissing, CodeNotificationNotAccepted, CodeSessionHeader, CodeStreamBroken}

// Correct exchanges of both eras break no transport rule (nor any other).
func TestCorrectStreamableHTTPExchangesBreakNoTransportRule(t *testing.T) {
	for name, s := range map[string][]hstep{"2025-11-25": session25(), "2026-07-28": session26()} {
		if fs := hrun(s); len(fs) > 0 {
			t.Errorf("%s: findings %v on a correct session: %+v", name, codesOf(fs), fs)
		}
	}
}

// Each transport rule is raised by the one fault it names, made in a
// correct session, on the frame it is about, and by nothing else.
func TestEachTransportRuleIsRaisedByItsFault(t *testing.T) {
	cases := []struct {
		code  Code
		fault string
		base  func() []hstep
		mut   func(s []hstep) []hstep
		at    int64 // the frame the finding is on
		text  string
	}{
		{CodeHTTPStatus, "tools/list answered 500", session25, func(s []hstep) []hstep {
			s[7], s[8] = hstep{S2H, "", HTTP{Exchange: 4, Method: "POST", Status: 500}}, s[9]
			return slices.Delete(s, 8, 9)
		}, 8, "HTTP 500"},
		{CodeHTTPStatus, "a POST to a session that is gone, 404", session25, func(s []hstep) []hstep {
			s[10] = hstep{S2H, "", HTTP{Exchange: 5, Method: "POST", Status: 404}}
			return s
		}, 11, "the session is gone"},
		{CodeAuthChallenge, "initialize answered 401 with a challenge", session25, func(s []hstep) []hstep {
			s[1] = hstep{S2H, "", HTTP{Exchange: 1, Method: "POST", Status: 401, WWWAuthenticate: `Bearer resource_metadata="https://a.example/.well-known/oauth-protected-resource"`}}
			return s[:2]
		}, 2, `WWW-Authenticate: Bearer resource_metadata="https://a.example/.well-known/oauth-protected-resource"`},
		{CodeHeaderMismatch, "Mcp-Method names another method", session26, func(s []hstep) []hstep {
			s[2].h.McpMethod = "tools/list"
			return s
		}, 3, "Mcp-Method header (tools/list) is not the body's method (tools/call)"},
		{CodeHeaderMismatch, "Mcp-Name names another tool", session26, func(s []hstep) []hstep {
			s[2].h.McpName = "other"
			return s
		}, 3, "params.name (echo)"},
		{CodeMissingMCPHeaders, "a 2026-07-28 POST without Mcp-Method", session26, func(s []hstep) []hstep {
			s[0].h.McpMethod = ""
			return s
		}, 1, "no Mcp-Method header"},
		{CodeMissingMCPHeaders, "a 2026-07-28 tools/call without Mcp-Name", session26, func(s []hstep) []hstep {
			s[2].h.McpName = ""
			return s
		}, 3, "no Mcp-Name header"},
		{CodeMissingProtocolVersionHeader, "tools/list after the handshake without MCP-Protocol-Version", session25, func(s []hstep) []hstep {
			s[6].h.ProtocolVersion = ""
			return s
		}, 7, "no MCP-Protocol-Version header"},
		{CodeBadContentType, "a POST of text/plain", session25, func(s []hstep) []hstep {
			s[6].h.ContentType = "text/plain"
			return s
		}, 7, "POST carries JSON-RPC as text/plain"},
		{CodeBadContentType, "an answer of text/plain", session25, func(s []hstep) []hstep {
			s[10].h.ContentType = "text/plain"
			return s
		}, 11, "response carries JSON-RPC as text/plain"},
		{CodeAcceptMissing, "an Accept without text/event-stream", session25, func(s []hstep) []hstep {
			s[6].h.Accept = "application/json"
			return s
		}, 7, "Accept is application/json"},
		{CodeNotificationNotAccepted, "notifications/initialized answered 200", session25, func(s []hstep) []hstep {
			s[3].h.Status = 200
			return s
		}, 4, "answered 200"},
		{CodeSessionHeader, "a 2026-07-28 request sends Mcp-Session-Id", session26, func(s []hstep) []hstep {
			s[2].h.SessionID = "x"
			return s
		}, 3, "sends Mcp-Session-Id"},
		{CodeSessionHeader, "a 2026-07-28 answer returns Mcp-Session-Id", session26, func(s []hstep) []hstep {
			s[1].h.SessionID = "x"
			return s
		}, 2, "returns Mcp-Session-Id"},
		{CodeStreamBroken, "tools/list's stream ends before its answer", session25, func(s []hstep) []hstep {
			return slices.Delete(s, 7, 8)
		}, 7, "ended before its answer"},
		{CodeStreamBroken, "a 2026-07-28 tools/call's stream ends before its answer", session26, func(s []hstep) []hstep {
			return slices.Delete(s, 3, 4)
		}, 3, "ended before its answer"},
	}
	for _, c := range cases {
		t.Run(c.code.String()+"/"+c.fault, func(t *testing.T) {
			fs := hrun(c.mut(c.base()))
			var got []SessionFinding
			for _, f := range fs {
				if slices.Contains(httpCodes, f.Code) {
					got = append(got, f)
				}
			}
			if len(got) != 1 || got[0].Code != c.code || got[0].Seq != c.at || !strings.Contains(got[0].Message, c.text) {
				t.Fatalf("transport findings %+v; want one %s on frame %d saying %q", got, c.code, c.at, c.text)
			}
		})
	}
}

// A stream that gave an event id may be resumed with Last-Event-ID
// (revisions before 2026-07-28): its end before the answer is no fault.
func TestAResumableStreamThatEndsBeforeItsAnswerIsNotBroken(t *testing.T) {
	s := session25()
	// The server's priming event (an id, empty data), then the stream's
	// end with no answer.
	s[7] = hstep{S2H, "", HTTP{Exchange: 4, Method: "POST", Status: 200, ContentType: sseCT, EventID: "e1"}}
	for _, f := range hrun(s) {
		if f.Code == CodeStreamBroken {
			t.Fatalf("stream-broken on a stream with an event id: %+v", f)
		}
	}
}

// Two hosts through one HTTP tap are two conversations: their ids, their
// handshakes and their revisions do not mix. Both start with initialize
// id 0 at once, asking different revisions; the second host's answer
// comes first. Judged as one conversation, the second initialize reuses
// id 0, the first answer pairs with the wrong request (a revision later
// than the one asked: unsupported-version) and the other is unmatched.
func TestTwoHostsThroughOneHTTPTapAreJudgedApart(t *testing.T) {
	initA := post(1, strings.Replace(init25, "2025-11-25", "2025-03-26", 1))
	initA.h.SessionID, initA.h.ProtocolVersion = "", ""
	initB := post(2, init25)
	initB.h.SessionID, initB.h.ProtocolVersion = "", ""
	ansB := answer(2, 200, jsonCT, answer0)
	ansB.h.SessionID = "s-b"
	ansA := answer(1, 200, jsonCT, strings.Replace(answer0, "2025-11-25", "2025-03-26", 1))
	ansA.h.SessionID = "s-a"
	in := func(n int64, sid, body, pv string) hstep {
		s := post(n, body)
		s.h.SessionID, s.h.ProtocolVersion = sid, pv
		return s
	}
	steps := []hstep{initA, initB, ansB, ansA,
		in(3, "s-b", inited, "2025-11-25"), answer(3, 202, "", ""),
		in(4, "s-a", inited, "2025-03-26"), answer(4, 202, "", ""),
		in(5, "s-a", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "2025-03-26"),
		in(6, "s-b", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "2025-11-25"),
		answer(6, 200, jsonCT, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`),
		answer(5, 200, jsonCT, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`),
	}
	if fs := hrun(steps); len(fs) > 0 {
		t.Fatalf("two hosts judged as one: %v %+v", codesOf(fs), fs)
	}
	// Stateless 2026-07-28 clients, each with its own revision in its
	// requests' _meta, with no session: two conversations as well.
	other := strings.ReplaceAll(meta26, `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"}`)
	s := session26()
	b := session26()
	for i := range b {
		b[i].h.Exchange += 10
		b[i].body = strings.ReplaceAll(b[i].body, meta26, other)
	}
	mixed := []hstep{s[0], b[0], b[1], s[1], s[2], b[2], b[3], s[3], s[4], b[4]}
	if fs := hrun(mixed); len(fs) > 0 {
		t.Fatalf("two stateless hosts judged as one: %v %+v", codesOf(fs), fs)
	}
}

// A request whose POST was answered with an error status, or whose
// stream ended before its answer, gets no JSON-RPC answer: its finding
// says so, and it is not also unanswered at the session's end.
func TestARequestRefusedOverHTTPIsNotAlsoUnanswered(t *testing.T) {
	refused := session25()
	refused[7] = hstep{S2H, "", HTTP{Exchange: 4, Method: "POST", Status: 503}}
	refused = slices.Delete(refused, 8, 9)
	cut := slices.Delete(session25(), 7, 8)
	for name, s := range map[string][]hstep{"503": refused, "stream cut": cut} {
		fs, pairs := hrunPairs(s)
		if got := codesOf(fs); len(got) != 1 || (got[0] != "http-status" && got[0] != "stream-broken") {
			t.Errorf("%s: findings %v; want only the transport's", name, got)
		}
		// The frame that ended it is its answer, for the view's pending
		// list and latency.
		if !slices.ContainsFunc(pairs, func(p Pair) bool { return p.Request == 7 && p.Response == 8 && p.Method == "tools/list" }) {
			t.Errorf("%s: pairs %+v; want tools/list (7) paired with the frame that ended it (8)", name, pairs)
		}
	}
}

// Stateless clients alike (the same revision and client name) through one
// tap, at once, with the same ids: each request is answered in its own
// POST, so none reuses another's id.
func TestStatelessClientsAlikeAtOnceDoNotShareIDs(t *testing.T) {
	a, b, c := session26(), session26(), session26()
	for i := range b {
		b[i].h.Exchange += 10
		c[i].h.Exchange += 20
	}
	mixed := []hstep{a[0], b[0], a[1], b[1], c[0], c[1], a[2], b[2], c[2], b[3], a[3], c[3], a[4], b[4], c[4]}
	if fs := hrun(mixed); len(fs) > 0 {
		t.Fatalf("stateless clients alike: %v %+v", codesOf(fs), fs)
	}
	// server/discover is the probe: one asking for a revision that an
	// earlier discover did not offer is answered rightly with a result.
	for _, s := range [][]hstep{a, c} {
		s[1].body = strings.Replace(s[1].body, `["2026-07-28"]`, `["2025-11-25"]`, 1)
	}
	if fs := hrun([]hstep{a[0], a[1], c[0], c[1]}); len(fs) > 0 {
		t.Fatalf("a second server/discover: %v %+v", codesOf(fs), fs)
	}
}
