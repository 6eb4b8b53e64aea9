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
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}`:                                           `{"jsonrpc":"2.0","id":3,"result":{}}`,
	} {
		m := classify.Classify([]byte(frame), classify.S2H, classify.JSONRPC)
		got, err := ReplyTo(&m)
		if err != nil || string(got) != want {
			t.Errorf("%s: %s %v, want %s", frame, got, err, want)
		}
	}
}
