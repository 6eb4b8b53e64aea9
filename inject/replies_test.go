package inject

import (
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

// rpctap's own host answers each request a server sends it with the
// reply that fits the method: one null per workspace/configuration item,
// null for registrations and progress tokens, the working directory as
// the one root, elicitation declined, sampling refused with what to do,
// and -32601 for a method it does not know.
func TestHostRepliesFitTheirMethods(t *testing.T) {
	host := Host{Root: "/work/a b"}
	for method, want := range map[string]string{
		"ping":                           `{"jsonrpc":"2.0","id":7,"result":{}}`,
		"roots/list":                     `{"jsonrpc":"2.0","id":7,"result":{"roots":[{"uri":"file:///work/a%20b","name":"a b"}]}}`,
		"elicitation/create":             `{"jsonrpc":"2.0","id":7,"result":{"action":"decline"}}`,
		"sampling/createMessage":         `{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"rpctap's host does not sample: answer this request from the view instead`,
		"x/\u202e":                       `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"rpctap's host does not know the method x/\u202e"}}`,
		"workspace/configuration":        `{"jsonrpc":"2.0","id":7,"result":[null,null]}`,
		"workspace/workspaceFolders":     `{"jsonrpc":"2.0","id":7,"result":[{"uri":"file:///work/a%20b","name":"a b"}]}`,
		"client/registerCapability":      `{"jsonrpc":"2.0","id":7,"result":null}`,
		"window/workDoneProgress/create": `{"jsonrpc":"2.0","id":7,"result":null}`,
	} {
		m := classify.Classify([]byte(`{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":{"items":[{"section":"gopls"},{}]}}`), classify.S2H, classify.MCP)
		got := string(HostReply(&m, host))
		if !strings.HasPrefix(got, want) || !classify.Valid([]byte(got)) {
			t.Errorf("%s: %s, want %s", method, got, want)
		}
	}
	m := classify.Classify([]byte(`{"jsonrpc":"2.0","id":"r","method":"roots/list"}`), classify.S2H, classify.MCP)
	if got := string(HostReply(&m, Host{})); got != `{"jsonrpc":"2.0","id":"r","result":{"roots":[]}}` {
		t.Errorf("roots/list with no working directory: %s", got)
	}
}

// The view's reply skeleton (R, and a in the held pane) is the reply that
// fits the request's method, from the same table: gopls reads an object
// where it asked for a list as an error. Where rpctap's own host refuses
// (sampling), the skeleton is a result to fill in.
func TestReplySkeletonsFitTheirMethods(t *testing.T) {
	for frame, want := range map[string]string{
		`{"jsonrpc":"2.0","id":3,"method":"workspace/configuration","params":{"items":[{"section":"gopls"}]}}`: `{"jsonrpc":"2.0","id":3,"result":[null]}`,
		`{"jsonrpc":"2.0","id":3,"method":"window/workDoneProgress/create","params":{"token":"t"}}`:            `{"jsonrpc":"2.0","id":3,"result":null}`,
		`{"jsonrpc":"2.0","id":3,"method":"roots/list"}`:                                                       `{"jsonrpc":"2.0","id":3,"result":{"roots":[]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{}}`:                               `{"jsonrpc":"2.0","id":3,"result":{"role":"assistant","content":{"type":"text","text":""},"model":"rpctap"}}`,
	} {
		m := classify.Classify([]byte(frame), classify.S2H, classify.JSONRPC)
		got, err := ReplyTo(&m)
		if err != nil || string(got) != want {
			t.Errorf("%s: %s %v, want %s", frame, got, err, want)
		}
	}
	// A host's request answered in the server's place: the empty result
	// of its method, with a 2026-07-28 request's resultType and cache
	// hints; an editor's, null.
	for _, c := range []struct {
		frame   string
		profile classify.Profile
		want    string
	}{
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo"}}`, classify.MCP, `{"jsonrpc":"2.0","id":4,"result":{"content":[]}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"p"}}`, classify.MCP, `{"jsonrpc":"2.0","id":4,"result":{"messages":[]}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, classify.MCP, `{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":[]}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, classify.MCP, `{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete"}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":{}}`, classify.LSP, `{"jsonrpc":"2.0","id":4,"result":null}`},
	} {
		m := classify.Classify([]byte(c.frame), classify.H2S, c.profile)
		if got, err := ReplyTo(&m); err != nil || string(got) != c.want {
			t.Errorf("%s: %s %v, want %s", c.frame, got, err, c.want)
		}
	}
}
