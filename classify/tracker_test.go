package classify

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// step is one frame of a conversation: at ms milliseconds, in dir.
type step struct {
	ms    int
	dir   Direction
	frame string
}

// run feeds a conversation through a tracker and returns its findings as
// "seq:code" strings (seq is the 1-based step), sorted, plus the pairs.
func run(t *testing.T, opts TrackerOptions, steps []step, endMs int) (findings []string, pairs []Pair) {
	t.Helper()
	tr := NewTracker(opts)
	for i, s := range steps {
		m := Classify([]byte(s.frame), s.dir, tr.Profile())
		obs := tr.Observe(int64(i+1), time.Duration(s.ms)*time.Millisecond, &m)
		for _, f := range obs.Findings {
			findings = append(findings, fmt.Sprintf("%d:%s", f.Seq, f.Code))
		}
		pairs = append(pairs, obs.Pairs...)
	}
	for _, f := range tr.Advance(time.Duration(endMs) * time.Millisecond) {
		findings = append(findings, fmt.Sprintf("%d:%s", f.Seq, f.Code))
	}
	sort.Strings(findings)
	return findings, pairs
}

const (
	initReq  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`
	initResp = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":` + serverCaps + `,"serverInfo":{"name":"s","version":"1"}}}`
	// serverCaps offers every server feature.
	serverCaps = `{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{"subscribe":true,"listChanged":true},"logging":{},"completions":{}}`
	// meta26 is the _meta of a host request under revision 2026-07-28.
	meta26 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	inited = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

func TestTrackerSessionFindings(t *testing.T) {
	cases := []struct {
		name  string
		opts  TrackerOptions
		steps []step
		endMs int
		want  string
	}{
		{"a response pairs with the request of the other direction", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
			{5, S2H, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		}, 60000, ""},
		{"directions have separate id spaces", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":0,"method":"ping"}`},
			{1, S2H, `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`},
			{2, S2H, `{"jsonrpc":"2.0","id":0,"result":{}}`},
			{3, H2S, `{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`},
		}, 10, ""},
		{"a response from the same side as its request is unmatched", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
			{1, H2S, `{"jsonrpc":"2.0","id":1,"result":{}}`},
			{2, S2H, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		}, 10, "2:unmatched-response"},
		{"a string id never pairs with a number id", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
			{1, S2H, `{"jsonrpc":"2.0","id":"1","result":{}}`},
		}, 10, "2:unmatched-response"},
		{"numbers pair by exact value and escaped strings by content", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
			{1, H2S, `{"jsonrpc":"2.0","id":"a/1","method":"ping"}`},
			{2, S2H, `{"jsonrpc":"2.0","id":1.0,"result":{}}`},
			{3, S2H, `{"jsonrpc":"2.0","id":"a\/\u0031","result":{}}`},
		}, 10, "3:fractional-id"},
		{"big integer ids are exact", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`},
			{1, S2H, `{"jsonrpc":"2.0","id":9007199254740992,"result":{}}`},
		}, 10, "1:unsafe-int-id 2:unmatched-response 2:unsafe-int-id"},
		{"a second answer is a duplicate", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":7,"method":"ping"}`},
			{1, S2H, `{"jsonrpc":"2.0","id":7,"result":{}}`},
			{2, S2H, `{"jsonrpc":"2.0","id":7,"result":{}}`},
		}, 10, "3:duplicate-response"},
		{"an answer after the timeout is late but pairs", TrackerOptions{Timeout: time.Second}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":7,"method":"tools/call"}`},
			{1500, S2H, `{"jsonrpc":"2.0","id":7,"result":{}}`},
		}, 5000, "1:timeout 2:late-response"},
		{"a request unanswered at the deadline times out", TrackerOptions{Timeout: time.Second}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":7,"method":"tools/call"}`},
			{999, H2S, `{"jsonrpc":"2.0","method":"x"}`},
		}, 1000, "1:timeout"},
		{"the default timeout is 30 s", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`},
			{1, H2S, `{"jsonrpc":"2.0","id":2,"method":"tools/call"}`},
		}, 30000, "1:timeout"},
		{"a negative timeout turns timeouts off", TrackerOptions{Timeout: -1}, []step{
			{1000, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`},
			{1000, H2S, `{"jsonrpc":"2.0","id":2,"method":7}`},
		}, 3600000, "2:bad-method"},
		{"per-method timeouts override the default", TrackerOptions{Timeout: time.Second, MethodTimeouts: map[string]time.Duration{"slow": 10 * time.Second}}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"slow"}`},
			{0, H2S, `{"jsonrpc":"2.0","id":2,"method":"fast"}`},
		}, 5000, "2:timeout"},
		{"MCP progress restarts the clock", TrackerOptions{Timeout: time.Second}, []step{
			{0, H2S, initReq},
			{0, S2H, initResp},
			{0, H2S, inited},
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"p1"}}}`},
			{0, H2S, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":"p2"}}}`},
			{800, S2H, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}`},
			{1600, S2H, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":2}}`},
			{2500, S2H, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		}, 2500, "5:timeout"},
		{"progress restarts the clock only under MCP", TrackerOptions{Profile: JSONRPC, Timeout: time.Second}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"p1"}}}`},
			{800, S2H, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1}}`},
		}, 1500, "1:timeout"},
		{"a reused id while in flight is flagged and both answers pair", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":3,"method":"a"}`},
			{1, H2S, `{"jsonrpc":"2.0","id":3,"method":"b"}`},
			{2, S2H, `{"jsonrpc":"2.0","id":3,"result":1}`},
			{3, S2H, `{"jsonrpc":"2.0","id":3,"result":2}`},
		}, 10, "2:id-reused"},
		{"an id reused after its answer is fine", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":3,"method":"a"}`},
			{1, S2H, `{"jsonrpc":"2.0","id":3,"result":1}`},
			{2, H2S, `{"jsonrpc":"2.0","id":3,"method":"b"}`},
			{3, S2H, `{"jsonrpc":"2.0","id":3,"result":2}`},
		}, 10, ""},
		{"MCP cancellation is noted and a later answer is allowed", TrackerOptions{Timeout: time.Second}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":9,"method":"tools/call"}`},
			{10, H2S, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"user"}}`},
			{20, S2H, `{"jsonrpc":"2.0","id":9,"result":{}}`},
		}, 5000, "1:cancelled"},
		{"a cancelled request never answered does not time out", TrackerOptions{Timeout: time.Second}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":9,"method":"tools/call"}`},
			{10, H2S, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`},
		}, 5000, "1:cancelled"},
		{"LSP cancellation is noted", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":"x","method":"textDocument/hover","params":{}}`},
			{10, H2S, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"x"}}`},
			{20, S2H, `{"jsonrpc":"2.0","id":"x","error":{"code":-32800,"message":"Request cancelled"}}`},
		}, 5000, "1:cancelled"},
		{"an error with no id links to the frame the peer could not read", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
			{1, H2S, `not json at all`},
			{2, S2H, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: unexpected token"}}`},
			{3, S2H, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		}, 10, "2:not-json 3:error-names-no-request"},
		{"an error with no id and nothing unreadable still says so", TrackerOptions{}, []step{
			{2, S2H, `{"jsonrpc":"2.0","error":{"code":-32603,"message":"Something broke: disk full"}}`},
		}, 10, "1:error-names-no-request 1:missing-id-error"},
		{"an error with no id answers the unreadable frame: it is not unanswered", TrackerOptions{Timeout: time.Second}, []step{
			{0, H2S, `not json at all`},
			{2, S2H, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: unexpected token"}}`},
		}, 5000, "1:not-json 2:error-names-no-request"},
		{"a result with no id names no request: result-without-id says it", TrackerOptions{}, []step{
			{0, H2S, `not json at all`},
			{2, S2H, `{"jsonrpc":"2.0","id":null,"result":{}}`},
		}, 10, "1:not-json 2:result-without-id"},
		{"an error with a null id answers a request with a null id", TrackerOptions{Timeout: time.Second}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":null,"method":"ping"}`},
			{2, S2H, `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found: ping"}}`},
		}, 5000, "1:null-id"},
		{"frames on stderr are not JSON-RPC", TrackerOptions{}, []step{
			{0, Err, `{"jsonrpc":"2.0","id":1,"result":{}}`},
			{1, Err, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		}, 60000, ""},
		{"batch members are requests and responses like any other", TrackerOptions{Timeout: time.Second}, []step{
			{0, H2S, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`},
			{5, S2H, `{"jsonrpc":"2.0","id":1,"result":{}}`},
			{6, S2H, `[{"jsonrpc":"2.0","id":3,"result":{}}]`},
		}, 5000, "1:batch 1:timeout 3:batch 3:unmatched-response"},
		{"an invalid frame the receiver never refuses is unanswered", TrackerOptions{Timeout: time.Second}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":5,"method":7}`},
		}, 2000, "1:bad-method 1:unanswered-invalid"},
		{"an invalid frame refused by id is answered, not unmatched", TrackerOptions{Timeout: time.Second}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":5,"method":7}`},
			{1, S2H, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request: method must be a string"}}`},
		}, 2000, "1:bad-method"},
		{"a result to an invalid frame answers it but is not the error owed", TrackerOptions{Timeout: time.Second}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":5,"method":7}`},
			{1, S2H, `{"jsonrpc":"2.0","id":5,"result":{}}`},
		}, 2000, "1:bad-method 1:unanswered-invalid"},
		{"a second result to an invalid frame is a duplicate", TrackerOptions{Timeout: time.Second}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":5,"method":7}`},
			{1, S2H, `{"jsonrpc":"2.0","id":5,"result":{}}`},
			{2, S2H, `{"jsonrpc":"2.0","id":5,"result":{}}`},
		}, 2000, "1:bad-method 1:unanswered-invalid 3:duplicate-response"},
		{"an error after a result to an invalid frame settles it, as a duplicate", TrackerOptions{Timeout: time.Second}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":5,"method":7}`},
			{1, S2H, `{"jsonrpc":"2.0","id":5,"result":{}}`},
			{2, S2H, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request: method must be a string"}}`},
		}, 2000, "1:bad-method 3:duplicate-response"},
		{"any answer after the error an invalid frame got is a duplicate", TrackerOptions{Timeout: time.Second}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":5,"method":7}`},
			{1, S2H, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request: method must be a string"}}`},
			{2, S2H, `{"jsonrpc":"2.0","id":5,"result":{}}`},
			{3, S2H, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request: method must be a string"}}`},
		}, 2000, "1:bad-method 3:duplicate-response 4:duplicate-response"},
		{"an answer to a reused invalid id settles the newer frame", TrackerOptions{Timeout: 30 * time.Second}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":5,"method":7}`},
			{10000, H2S, `{"jsonrpc":"2.0","id":5,"method":7}`},
			{35000, S2H, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request: method must be a string"}}`},
		}, 100000, "1:bad-method 1:unanswered-invalid 2:bad-method"},
		{"stdout noise is owed no answer", TrackerOptions{Timeout: time.Second}, []step{
			{0, S2H, `Listening on stdio`},
		}, 2000, "1:not-json"},
		{"MCP: a request before the initialize answer is flagged", TrackerOptions{}, []step{
			{0, H2S, initReq},
			{1, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			{2, H2S, `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
			{3, S2H, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
			{4, S2H, initResp},
			{5, S2H, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`},
			{6, S2H, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		}, 10, "2:before-initialize"},
		{"MCP: the server may send requests once it has answered initialize", TrackerOptions{}, []step{
			{0, H2S, initReq},
			{1, S2H, initResp},
			{2, S2H, `{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`},
			{3, H2S, `{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}`},
			{4, H2S, inited},
		}, 10, ""},
		{"MCP: only the host's notifications/initialized ends the handshake", TrackerOptions{}, []step{
			{0, H2S, initReq},
			{1, S2H, initResp},
			{2, S2H, inited},
			{3, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			{4, S2H, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`},
		}, 10, "4:before-initialize"},
		{"MCP: server/discover during the handshake is allowed but ends no handshake", TrackerOptions{}, []step{
			{0, H2S, initReq},
			{1, H2S, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta26 + `}}`},
			{2, H2S, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
			{3, S2H, initResp},
			{4, S2H, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: server/discover"}}`},
			{5, S2H, `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`},
		}, 10, "3:before-initialize"},
		{"MCP: a session whose first request carries the protocol version in _meta has no handshake", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta26 + `}}`},
			{1, S2H, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[]}}`},
			{2, H2S, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + meta26 + `}}`},
			{3, S2H, `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete"}}`},
		}, 10, ""},
		{"no handshake rules outside MCP: an initialize without a protocol version", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}`},
			{1, H2S, `{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{}}`},
			{2, S2H, `{"jsonrpc":"2.0","id":0,"result":{"capabilities":{}}}`},
			{3, S2H, `{"jsonrpc":"2.0","id":1,"result":null}`},
		}, 10, ""},
		{"MCP: a host request before notifications/initialized is flagged", TrackerOptions{}, []step{
			{0, H2S, initReq},
			{1, S2H, initResp},
			{2, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			{3, H2S, inited},
			{4, H2S, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
			{5, S2H, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`},
			{6, S2H, `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`},
		}, 10, "3:before-initialize"},
		// An early notifications/initialized still counts: no later request
		// is flagged before-initialize.
		{"MCP: notifications/initialized sent before the initialize answer arrives counts", TrackerOptions{}, []step{
			{0, H2S, initReq},
			{1, H2S, inited},
			{2, S2H, initResp},
			{3, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			{4, S2H, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`},
		}, 10, ""},
		{"MCP: a request between an early notifications/initialized and the initialize answer is still early", TrackerOptions{}, []step{
			{0, H2S, initReq},
			{1, H2S, inited},
			{2, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			{3, S2H, initResp},
			{4, S2H, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`},
		}, 10, "3:before-initialize"},
		{"MCP: notifications/initialized sent before initialize itself counts for nothing", TrackerOptions{}, []step{
			{0, H2S, inited},
			{1, H2S, initReq},
			{2, S2H, initResp},
			{3, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			{4, S2H, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`},
		}, 10, "4:before-initialize"},
		{"MCP: the server/discover revision has no handshake", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta26 + `}}`},
			{1, S2H, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`},
			{2, H2S, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta26 + `}}`},
			{3, S2H, `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","tools":[]}}`},
		}, 10, ""},
		{"MCP: a client that falls back from server/discover to initialize is not flagged", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta26 + `}}`},
			{1, S2H, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found: server/discover"}}`},
			{2, H2S, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`},
			{3, S2H, `{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25"}}`},
			{4, H2S, inited},
			{5, H2S, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`},
			{6, S2H, `{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}`},
		}, 10, ""},
		{"MCP: an error with no id during the handshake answers initialize", TrackerOptions{}, []step{
			{0, H2S, initReq},
			{1, S2H, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Unsupported protocol version: 1999-01-01"}}`},
		}, 60000, ""},
		{"MCP: an error with no id answers initialize only when it is the host's one request", TrackerOptions{}, []step{
			{0, H2S, initReq},
			{1, H2S, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
			{2, S2H, `{"jsonrpc":"2.0","error":{"code":-32602,"message":"Unsupported protocol version: 1999-01-01"}}`},
		}, 10, "3:error-names-no-request"},
		{"MCP: an error with no id answers initialize only with \"jsonrpc\": \"2.0\"", TrackerOptions{}, []step{
			{0, H2S, initReq},
			{1, S2H, `{"id":null,"error":{"code":-32602,"message":"Unsupported protocol version: 1999-01-01"}}`},
		}, 10, "2:bad-jsonrpc 2:error-names-no-request 2:null-id-error"},
		{"MCP: an error with no id answers initialize only from the server", TrackerOptions{}, []step{
			{0, H2S, initReq},
			{1, H2S, `{"jsonrpc":"2.0","error":{"code":-32603,"message":"The host could not read something"}}`},
		}, 10, "2:error-names-no-request"},
		{"MCP: the server may notify before answering initialize", TrackerOptions{}, []step{
			{0, H2S, initReq},
			{1, S2H, `{"method":"notifications/tools/list_changed","jsonrpc":"2.0"}`},
			{2, S2H, initResp},
			{3, H2S, inited},
			{4, S2H, `{"method":"roots/list","jsonrpc":"2.0","id":0}`},
		}, 20, ""},
		{"a batch is an error under MCP 2025-11-25 but fine under 2025-03-26", TrackerOptions{}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`},
			{1, S2H, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-03-26"}}`},
			{2, H2S, inited},
			{3, H2S, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`},
			{4, S2H, `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`},
		}, 20, "4:batch 5:batch"},
		{"a full in-flight table drops the oldest and says so", TrackerOptions{MaxInFlight: 2}, []step{
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"a"}`},
			{1, H2S, `{"jsonrpc":"2.0","id":2,"method":"a"}`},
			{2, H2S, `{"jsonrpc":"2.0","id":3,"method":"a"}`},
			{3, S2H, `{"jsonrpc":"2.0","id":1,"result":1}`},
		}, 10, "1:untracked 4:unmatched-response"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := run(t, c.opts, c.steps, c.endMs)
			// Frame findings are part of the picture too.
			tr := NewTracker(c.opts)
			for i, s := range c.steps {
				m := Classify([]byte(s.frame), s.dir, tr.Profile())
				tr.Observe(int64(i+1), time.Duration(s.ms)*time.Millisecond, &m)
				for _, f := range m.Findings {
					got = append(got, fmt.Sprintf("%d:%s", i+1, f.Code))
				}
				for _, mm := range m.Members {
					for _, f := range mm.Findings {
						got = append(got, fmt.Sprintf("%d:%s", i+1, f.Code))
					}
				}
			}
			sort.Strings(got)
			if g := strings.Join(got, " "); g != c.want {
				t.Errorf("findings\n got  %s\n want %s", g, c.want)
			}
		})
	}
}

func TestBatchSeverityFollowsTheNegotiatedMCPRevision(t *testing.T) {
	for _, c := range []struct {
		proposed, version string
		want              Severity
	}{
		{"2025-03-26", "2025-03-26", Info}, {"2025-06-18", "2025-06-18", Error}, {"2025-11-25", "2025-11-25", Error},
		// the server's answer names the revision the session speaks
		{"2025-11-25", "2025-03-26", Info}, {"2025-03-26", "2025-06-18", Error},
	} {
		tr := NewTracker(TrackerOptions{})
		steps := []string{
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + c.proposed + `"}}`,
			`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"` + c.version + `"}}`,
			`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		}
		var m Message
		for i, f := range steps {
			dir := H2S
			if i == 1 {
				dir = S2H
			}
			m = Classify([]byte(f), dir, tr.Profile())
			tr.Observe(int64(i+1), 0, &m)
		}
		if len(m.Findings) != 1 || m.Findings[0].Code != CodeBatch || m.Findings[0].Severity != c.want {
			t.Errorf("revision %s: findings %+v, want batch at %s", c.version, m.Findings, c.want)
		} else if c.want == Info && !strings.Contains(m.Findings[0].Message, c.version) {
			t.Errorf("revision %s: the finding does not name the revision: %q", c.version, m.Findings[0].Message)
		}
	}
}

// The negotiated revision is a peer's value: a finding names it only when it
// is a plain date.
func TestBatchFindingNeverRepeatsThePeersVersionText(t *testing.T) {
	for _, v := range []string{`2024-11-05\u001b[2J<script>`, `2024\u202e-11-05`} {
		tr := NewTracker(TrackerOptions{})
		steps := []string{
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + v + `"}}`,
			`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"` + v + `"}}`,
			`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		}
		var m Message
		for i, f := range steps {
			dir := H2S
			if i == 1 {
				dir = S2H
			}
			m = Classify([]byte(f), dir, tr.Profile())
			tr.Observe(int64(i+1), 0, &m)
		}
		for _, f := range m.Findings {
			if strings.Contains(f.Message, "<script>") || strings.ContainsAny(f.Message, "\x1b\u202e") {
				t.Errorf("version %s: finding %s repeats peer text: %q", v, f.Code, f.Message)
			}
		}
	}
}

func TestTrackerMeasuresLatencyAndNamesTheMethod(t *testing.T) {
	_, pairs := run(t, TrackerOptions{}, []step{
		{100, H2S, `{"jsonrpc":"2.0","id":"a","method":"tools/list"}`},
		{350, S2H, `{"jsonrpc":"2.0","id":"a","result":{}}`},
	}, 400)
	if len(pairs) != 1 || pairs[0].Request != 1 || pairs[0].Response != 2 || pairs[0].Method != "tools/list" || pairs[0].Latency != 250*time.Millisecond {
		t.Fatalf("pairs = %+v", pairs)
	}
}

func TestTrackerResolvesAutoProfile(t *testing.T) {
	tr := NewTracker(TrackerOptions{})
	if tr.Profile() != JSONRPC {
		t.Fatalf("before any traffic: %s", tr.Profile())
	}
	m := Classify([]byte(initReq), H2S, tr.Profile())
	tr.Observe(1, 0, &m)
	if tr.Profile() != MCP || tr.ProtocolVersion() != "2025-11-25" {
		t.Fatalf("after initialize: %s %q", tr.Profile(), tr.ProtocolVersion())
	}
	if p := NewTracker(TrackerOptions{LSPFraming: true}).Profile(); p != LSP {
		t.Fatalf("with LSP framing: %s", p)
	}
	for _, c := range []struct {
		name  string
		opts  TrackerOptions
		frame string
		want  Profile
	}{
		{"server/discover", TrackerOptions{}, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`, MCP},
		{"a request with the protocol version in _meta", TrackerOptions{}, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, MCP},
		{"an initialize without params.protocolVersion (LSP's)", TrackerOptions{}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`, JSONRPC},
		{"an initialize notification", TrackerOptions{}, `{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, JSONRPC},
		{"an explicit profile is kept", TrackerOptions{Profile: JSONRPC}, initReq, JSONRPC},
		{"an explicit profile is kept against server/discover", TrackerOptions{Profile: LSP}, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`, LSP},
	} {
		tr := NewTracker(c.opts)
		m := Classify([]byte(c.frame), H2S, tr.Profile())
		tr.Observe(1, 0, &m)
		if tr.Profile() != c.want {
			t.Errorf("%s: profile %s, want %s", c.name, tr.Profile(), c.want)
		}
	}
}

func TestTrackerMemoryStaysBounded(t *testing.T) {
	tr := NewTracker(TrackerOptions{MaxInFlight: 1000, MaxRemembered: 1000})
	for i := range 200_000 {
		req := Classify([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"a"}`, i)), H2S, JSONRPC)
		tr.Observe(int64(2*i+1), time.Duration(i)*time.Millisecond, &req)
		if i%2 == 0 {
			resp := Classify([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":1}`, i)), S2H, JSONRPC)
			tr.Observe(int64(2*i+2), time.Duration(i)*time.Millisecond, &resp)
		}
	}
	if tr.InFlight() > 1000 || tr.flights.len() > 2000 || len(tr.deadlines) > 8*1000+1024 || len(tr.sent) > 8*1000+1024 {
		t.Errorf("in flight %d, table %d, deadlines %d, sent %d", tr.InFlight(), tr.flights.len(), len(tr.deadlines), len(tr.sent))
	}
	if tr.Evictions() == 0 {
		t.Error("unanswered requests past the cap should have been evicted")
	}
	// Progress tokens are forgotten with their requests.
	tr = NewTracker(TrackerOptions{Profile: MCP, MaxInFlight: 1000, MaxRemembered: 1000})
	for i := range 10_000 {
		req := Classify([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"progressToken":%d}}}`, i, i)), H2S, MCP)
		tr.Observe(int64(2*i+1), time.Duration(i)*time.Millisecond, &req)
		resp := Classify([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i)), S2H, MCP)
		tr.Observe(int64(2*i+2), time.Duration(i)*time.Millisecond, &resp)
	}
	if tr.tokens.len() != 0 || len(tr.sent) > 2048 {
		t.Errorf("%d progress tokens and %d sent requests remembered after every request was answered", tr.tokens.len(), len(tr.sent))
	}
}

// The same frames give the same findings: a full in-flight table always
// drops the request sent first (an info finding), whatever the timeouts.
func TestTrackerDropsTheOldestRequestDeterministically(t *testing.T) {
	req := func(ms, id int, method string) step {
		return step{ms, H2S, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, id, method)}
	}
	cases := []struct {
		name  string
		opts  TrackerOptions
		steps []step
		endMs int
		want  string
	}{
		{"timeouts off", TrackerOptions{Timeout: -1, MaxInFlight: 3},
			[]step{req(0, 1, "a"), req(0, 2, "a"), req(0, 3, "a"), req(0, 4, "a"), req(0, 5, "a"), req(0, 6, "a")}, 10,
			"1:untracked 2:untracked 3:untracked"},
		{"the oldest has timed out", TrackerOptions{Timeout: time.Second, MaxInFlight: 2},
			[]step{req(0, 1, "a"), req(0, 2, "a"), req(2000, 3, "a")}, 2500,
			"1:timeout 1:untracked 2:timeout"},
		{"the oldest has the longer timeout", TrackerOptions{Timeout: time.Second, MethodTimeouts: map[string]time.Duration{"slow": 10 * time.Second}, MaxInFlight: 1},
			[]step{req(0, 1, "slow"), req(1, 2, "fast")}, 5,
			"1:untracked"},
		{"after an id is answered and sent again", TrackerOptions{MaxInFlight: 2},
			[]step{req(0, 1, "a"), {1, S2H, `{"jsonrpc":"2.0","id":1,"result":{}}`}, req(2, 1, "b"), req(3, 2, "c"), req(4, 3, "d")}, 10,
			"3:untracked"},
	}
	for _, c := range cases {
		for range 20 {
			got, _ := run(t, c.opts, c.steps, c.endMs)
			if g := strings.Join(got, " "); g != c.want {
				t.Fatalf("%s: findings\n got  %s\n want %s", c.name, g, c.want)
			}
		}
	}
	tr := NewTracker(TrackerOptions{MaxInFlight: 1})
	for i := range 2 {
		m := Classify([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"a"}`, i)), H2S, JSONRPC)
		for _, f := range tr.Observe(int64(i+1), 0, &m).Findings {
			if f.Code == CodeUntracked && f.Severity != Info {
				t.Errorf("untracked is %s, want info", f.Severity)
			}
		}
	}
}

// Frames owed a strict answer are followed within the same bounds: a flood
// of invalid frames (distinct ids, one id, no id) within one timeout keeps
// the owed table, the unreadable list and the deadline heap small.
func TestTrackerMemoryStaysBoundedUnderInvalidFloods(t *testing.T) {
	floods := map[string]func(i int) string{
		"distinct ids": func(i int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":1}`, i) },
		"one id":       func(i int) string { return `{"jsonrpc":"2.0","id":5,"method":1}` },
		"no id":        func(i int) string { return `not json` },
	}
	for name, frame := range floods {
		tr := NewTracker(TrackerOptions{MaxInFlight: 1000, MaxRemembered: 1000})
		for i := range 20_000 {
			m := Classify([]byte(frame(i)), H2S, JSONRPC)
			tr.Observe(int64(i+1), time.Duration(i)*time.Microsecond, &m)
		}
		if len(tr.owed) > 1000 || len(tr.unreadble[H2S-1]) > 64 || len(tr.deadlines) > 8*1000+1024 {
			t.Errorf("%s: owed %d, unreadable %d, deadlines %d", name, len(tr.owed), len(tr.unreadble[H2S-1]), len(tr.deadlines))
		}
	}
}

func BenchmarkTrackerPairs1KiB(b *testing.B) {
	req, resp := frame1KiB(false), frame1KiB(true)
	tr := NewTracker(TrackerOptions{Profile: MCP})
	rm := Classify(req, H2S, MCP)
	sm := Classify(resp, S2H, MCP)
	b.ReportAllocs()
	var seq int64
	for b.Loop() {
		seq += 2
		tr.Observe(seq, time.Duration(seq), &rm)
		tr.Observe(seq+1, time.Duration(seq), &sm)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/frame")
}

// A request still owed an answer when the session ends is reported
// unanswered-at-end, on the request, once; one already flagged timeout
// is not reported again, and nothing times out after the end.
func TestTrackerReportsRequestsOwedWhenTheSessionEnds(t *testing.T) {
	tr := NewTracker(TrackerOptions{Timeout: time.Second})
	frames := []step{
		{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`},    // times out
		{1500, H2S, `{"jsonrpc":"2.0","id":2,"method":"tools/call"}`}, // owed at the end
		{1600, S2H, `{"jsonrpc":"2.0","id":7,"method":"roots/list"}`}, // the host owes it
		{1700, H2S, `{"jsonrpc":"2.0","id":3,"method":"ping"}`},
		{1800, S2H, `{"jsonrpc":"2.0","id":3,"result":{}}`}, // answered
	}
	var got []string
	for i, s := range frames {
		m := Classify([]byte(s.frame), s.dir, tr.Profile())
		for _, f := range tr.Observe(int64(i+1), time.Duration(s.ms)*time.Millisecond, &m).Findings {
			got = append(got, fmt.Sprintf("%d:%s", f.Seq, f.Code))
		}
	}
	end := tr.End(1900 * time.Millisecond)
	for _, f := range end {
		got = append(got, fmt.Sprintf("%d:%s:%s", f.Seq, f.Code, f.Severity))
		if f.Code == CodeUnansweredAtEnd && !strings.Contains(f.Message, "session ended") {
			t.Errorf("message %q", f.Message)
		}
	}
	if s := strings.Join(got, " "); s != "1:timeout 2:unanswered-at-end:warn 3:unanswered-at-end:warn" {
		t.Errorf("findings %s", s)
	}
	if fs := tr.End(2000 * time.Millisecond); len(fs) != 0 {
		t.Errorf("a second end reported %v again", fs)
	}
	if fs := tr.Advance(time.Hour); len(fs) != 0 {
		t.Errorf("after the end, the clock moved on and reported %v", fs)
	}
}

// The server closing its output leaves the host's requests unanswerable
// (not the server's own, which the host may still answer); the host
// closing the server's input, the server's requests.
func TestTrackerReportsRequestsOwedByASideThatClosedItsOutput(t *testing.T) {
	for _, c := range []struct {
		closed Direction
		want   string
	}{{S2H, "1:unanswered-at-end"}, {H2S, "2:unanswered-at-end"}} {
		tr := NewTracker(TrackerOptions{})
		for i, s := range []step{
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`},
			{1, S2H, `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`},
		} {
			m := Classify([]byte(s.frame), s.dir, tr.Profile())
			tr.Observe(int64(i+1), time.Duration(s.ms)*time.Millisecond, &m)
		}
		var got []string
		for _, f := range tr.OutputClosed(c.closed, 5*time.Millisecond) {
			got = append(got, fmt.Sprintf("%d:%s", f.Seq, f.Code))
		}
		if s := strings.Join(got, " "); s != c.want {
			t.Errorf("%s closed: %s, want %s", c.closed, s, c.want)
		}
		for _, f := range tr.End(10 * time.Millisecond) {
			if f.Seq == 1 && c.closed == S2H || f.Seq == 2 && c.closed == H2S {
				t.Errorf("the end reported #%d again", f.Seq)
			}
		}
	}
}

// What the user dropped or answered in the receiver's place never reached
// the receiver: it is owed nothing, so neither timeout nor
// unanswered-at-end nor unanswered-invalid blames the receiver. A reply
// in place pairs with the request; a dropped request is not followed
// (its id may come again). A dropped response still answers its request.
func TestTrackerOwesNothingForFramesTheUserWithheld(t *testing.T) {
	tr := NewTracker(TrackerOptions{Timeout: time.Second})
	type fr struct {
		ms  int
		dir Direction
		d   Delivery
		s   string
	}
	var got []string
	var pairs []Pair
	for i, s := range []fr{
		{0, H2S, Dropped, `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`},
		{1, H2S, AnsweredInPlace, `{"jsonrpc":"2.0","id":2,"method":"tools/call"}`},
		{2, S2H, Delivered, `{"jsonrpc":"2.0","id":2,"result":{}}`}, // the user's reply
		{3, H2S, Dropped, `{"jsonrpc":"2.0","id":3,"method":1}`},    // invalid, never read
		{4, H2S, Delivered, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{5, H2S, Delivered, `{"jsonrpc":"2.0","id":4,"method":"ping"}`},
		{6, S2H, Dropped, `{"jsonrpc":"2.0","id":4,"result":{}}`},
		{7, S2H, Delivered, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{8, H2S, AnsweredInPlace, `{"jsonrpc":"2.0","id":5,"method":"tools/call"}`}, // no reply came
	} {
		m := Classify([]byte(s.s), s.dir, tr.Profile())
		obs := tr.ObserveDelivery(int64(i+1), time.Duration(s.ms)*time.Millisecond, &m, s.d)
		for _, f := range obs.Findings {
			got = append(got, fmt.Sprintf("%d:%s", f.Seq, f.Code))
		}
		pairs = append(pairs, obs.Pairs...)
	}
	for _, f := range tr.Advance(time.Minute) {
		got = append(got, fmt.Sprintf("%d:%s", f.Seq, f.Code))
	}
	for _, f := range tr.End(time.Minute) {
		got = append(got, fmt.Sprintf("%d:%s", f.Seq, f.Code))
	}
	if len(got) != 0 {
		t.Errorf("findings %v, want none", got)
	}
	var ps []string
	for _, p := range pairs {
		ps = append(ps, fmt.Sprintf("%d-%d", p.Request, p.Response))
	}
	if s := strings.Join(ps, " "); s != "2-3 6-7 5-8" {
		t.Errorf("pairs %s, want 2-3 6-7 5-8", s)
	}
}

// gapStep is a frame, or with gap > 0 a gap record: gap frames of dir
// missing from the record.
type gapStep struct {
	ms  int
	dir Direction
	gap int64
	s   string
}

// runGaps feeds steps through tr and returns its findings as
// "seq:code:severity" (with ">related" when it links to a frame) and
// its pairs as "request-response", then those of End at endMs.
func runGaps(tr *Tracker, steps []gapStep, endMs int) (findings, pairs string) {
	var fs, ps []string
	add := func(list []SessionFinding) {
		for _, f := range list {
			s := fmt.Sprintf("%d:%s:%s", f.Seq, f.Code, f.Severity)
			if f.Related != 0 {
				s += fmt.Sprintf(">%d", f.Related)
			}
			fs = append(fs, s)
		}
	}
	for i, s := range steps {
		at := time.Duration(s.ms) * time.Millisecond
		if s.gap > 0 {
			add(tr.Gap(int64(i+1), s.dir, s.gap, at))
			continue
		}
		m := Classify([]byte(s.s), s.dir, tr.Profile())
		obs := tr.Observe(int64(i+1), at, &m)
		add(obs.Findings)
		for _, p := range obs.Pairs {
			ps = append(ps, fmt.Sprintf("%d-%d", p.Request, p.Response))
		}
	}
	add(tr.End(time.Duration(endMs) * time.Millisecond))
	return strings.Join(fs, " "), strings.Join(ps, " ")
}

// A gap in the record (frames the session file could not hold) is a
// finding of its own, and the tracker judges nothing that its frames
// may have held: a request from the other side still waiting when the
// gap comes (its answer may be among them) is neither timeout nor
// unanswered-at-end, and leaves flight, though an answer that comes
// later still pairs with it; a frame owed an error answer from that side
// is not unanswered-invalid; a response whose request is in no record,
// after a gap in the request's direction, is not unmatched. What came
// after the gap, and what the other direction owes, is judged as ever.
func TestTrackerJudgesNothingThatFramesMissingFromTheRecordMayHaveHeld(t *testing.T) {
	tr := NewTracker(TrackerOptions{Timeout: time.Second})
	findings, pairs := runGaps(tr, []gapStep{
		{0, H2S, 0, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{5, S2H, 1, ""}, // its answer may be here
		{10, H2S, 0, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
		{20, S2H, 0, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{30, H2S, 0, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`},
		{35, S2H, 1, ""},
		{40, S2H, 0, `{"jsonrpc":"2.0","id":3,"result":{}}`}, // not in the gap after all
		{42, H2S, 0, `{"jsonrpc":"2.0","id":5,"method":1}`},  // owed an error answer
		{45, S2H, 1, ""},
		{50, H2S, 0, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`}, // after the gaps: times out
		{60, S2H, 0, `{"jsonrpc":"2.0","id":9,"method":"roots/list"}`}, // the host owes it
		{65, S2H, 0, `{"jsonrpc":"2.0","id":77,"result":{}}`},          // unmatched: no gap toward the server yet
		{70, H2S, 2, ""}, // the host's answer to roots/list may be here
		{80, S2H, 0, `{"jsonrpc":"2.0","id":88,"result":{}}`}, // its request may have been in the gap
	}, 2000)
	want := "2:frames-missing:warn 1:frames-missing:info>2 6:frames-missing:warn 5:frames-missing:info>6 " +
		"9:frames-missing:warn 8:frames-missing:info>9 12:unmatched-response:error " +
		"13:frames-missing:warn 11:frames-missing:info>13 14:frames-missing:info>13 10:timeout:warn"
	if findings != want {
		t.Errorf("findings\n %s\nwant\n %s", findings, want)
	}
	if pairs != "3-4 5-7" {
		t.Errorf("pairs %s, want 3-4 5-7", pairs)
	}
	if n := tr.InFlight(); n != 1 {
		t.Errorf("%d requests in flight; want only the one after the gaps", n)
	}
}

// A gap during the MCP handshake may hold one of its steps (the answer
// to initialize, the host's notifications/initialized, initialize
// itself): the requests after it are not judged before-initialize.
func TestTrackerCountsAHandshakeStepAGapMayHoldAsDone(t *testing.T) {
	for _, c := range []struct {
		name  string
		opts  TrackerOptions
		steps []gapStep
		want  string
	}{
		{"the answer to initialize", TrackerOptions{}, []gapStep{
			{0, H2S, 0, initReq},
			{5, S2H, 1, ""},
			{10, H2S, 0, inited},
			{20, H2S, 0, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			{30, S2H, 0, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`},
		}, "2:frames-missing:warn 1:frames-missing:info>2"},
		{"notifications/initialized", TrackerOptions{}, []gapStep{
			{0, H2S, 0, initReq},
			{5, S2H, 0, initResp},
			{10, H2S, 1, ""},
			{20, H2S, 0, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			{30, S2H, 0, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`},
		}, "3:frames-missing:warn"},
		{"initialize itself", TrackerOptions{Profile: MCP}, []gapStep{
			{0, H2S, 2, ""},
			{5, S2H, 0, initResp},
			{20, H2S, 0, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
			{30, S2H, 0, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`},
		}, "1:frames-missing:warn 2:frames-missing:info>1"},
	} {
		if got, _ := runGaps(NewTracker(c.opts), c.steps, 100); got != c.want {
			t.Errorf("%s: findings %s, want %s", c.name, got, c.want)
		}
	}
}
