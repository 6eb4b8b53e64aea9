package inject

import (
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

func msg(dir classify.Direction, frame string) *classify.Message {
	m := classify.Classify([]byte(frame), dir, classify.MCP)
	return &m
}

// A reply to a request carries its id, a resend keeps its bytes but for a
// fresh id; a notification has no reply and a response is not resent.
func TestReplyToAndResendKeepTheRequest(t *testing.T) {
	req := msg(classify.S2H, `{"jsonrpc":"2.0", "id": 0 ,"method":"roots/list","params":{}}`)
	reply, err := ReplyTo(req)
	if err != nil || string(reply) != `{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}` {
		t.Errorf("reply: %s %v", reply, err)
	}
	again, err := Resend(req, `"rpctap-3"`)
	if err != nil || string(again) != `{"jsonrpc":"2.0", "id": "rpctap-3" ,"method":"roots/list","params":{}}` {
		t.Errorf("resend: %s %v", again, err)
	}
	if _, err := ReplyTo(msg(classify.H2S, `{"jsonrpc":"2.0","method":"x"}`)); err == nil {
		t.Error("a notification was replied to")
	}
	if _, err := Resend(msg(classify.S2H, `{"jsonrpc":"2.0","id":1,"result":{}}`), `"rpctap-1"`); err == nil {
		t.Error("a response was resent")
	}
}

const everythingTools = `{"jsonrpc":"2.0","id":2,"result":{"tools":[` +
	`{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string","description":"x"}},"required":["message"]}},` +
	`{"name":"get-sum","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}},` +
	`{"name":"mixed","inputSchema":{"type":"object","properties":{"opt":{"type":"boolean"},"mode":{"enum":["fast","slow"]},"tags":{"type":"array"},"n":{"type":["integer","null"]},"req":{"type":"string"},"d":{"type":"string","default":"dflt"}},"required":["req","n"]}}]}}`

func seenEverything() *Seen {
	s := NewSeen()
	for _, f := range []struct {
		dir   classify.Direction
		frame string
	}{
		{classify.H2S, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`},
		{classify.H2S, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{classify.H2S, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
		{classify.S2H, `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`}, // the last tools/list answer is the one kept
		{classify.H2S, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`},
		{classify.S2H, strings.Replace(everythingTools, `"id":2`, `"id":3`, 1)},
		{classify.H2S, `{"jsonrpc":"2.0","id":4,"method":"prompts/list"}`},
		{classify.S2H, `{"jsonrpc":"2.0","id":4,"result":{"prompts":[{"name":"greet","arguments":[{"name":"who","required":true},{"name":"style"}]}]}}`},
		{classify.H2S, `{"jsonrpc":"2.0","id":5,"method":"resources/list"}`},
		{classify.S2H, `{"jsonrpc":"2.0","id":5,"result":{"resources":[{"uri":"test://static/resource/1","name":"one"}]}}`},
		{classify.S2H, `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`},
	} {
		s.See(msg(f.dir, f.frame))
	}
	return s
}

// Templates for the methods seen, a tools/call per tool of the last
// tools/list result with its arguments from the inputSchema (required
// first, typed placeholders), prompts/get and resources/read.
func TestTemplatesComeFromWhatTheSessionShowed(t *testing.T) {
	ids := NewIDs()
	got := map[string]Template{}
	for _, tp := range seenEverything().Templates(ids) {
		got[tp.Name] = tp
		if !classify.Valid(tp.Body) {
			t.Errorf("%s: %s is not JSON", tp.Name, tp.Body)
		}
	}
	for name, want := range map[string]string{
		"initialize":                              `{"jsonrpc":"2.0","id":"rpctap-1","method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
		"notifications/initialized":               `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"tools/call echo":                         `"params":{"name":"echo","arguments":{"message":"<string>"}}}`,
		"tools/call get-sum":                      `"arguments":{"a":0,"b":0}`,
		"tools/call mixed":                        `"arguments":{"req":"<string>","n":0,"opt":false,"mode":"fast","tags":[],"d":"dflt"}`,
		"prompts/get greet":                       `"params":{"name":"greet","arguments":{"who":"<string>","style":"<string>"}}`,
		"resources/read test://static/resource/1": `"params":{"uri":"test://static/resource/1"}`,
	} {
		if !strings.Contains(string(got[name].Body), want) {
			t.Errorf("%s: %s, want it to hold %s", name, got[name].Body, want)
		}
	}
	if got["roots/list"].Dir != classify.S2H || !strings.Contains(string(got["roots/list"].Body), `"id":"rpctap-1"`) {
		t.Errorf("the server's roots/list goes to the host with the server's next id: %+v %s", got["roots/list"].Dir, got["roots/list"].Body)
	}
}

// Build fills a method's template from arguments, as
// rpctap inject --method tools/call --tool echo --arg message=hi does:
// each value read as JSON of its schema's type, a missing required
// argument or an unknown tool refused with what to add.
func TestBuildFillsATemplateFromArguments(t *testing.T) {
	s := seenEverything()
	ids := NewIDs()
	for _, c := range []struct {
		method string
		o      BuildOptions
		want   string
		err    string
	}{
		{"tools/call", BuildOptions{Tool: "echo", Args: [][2]string{{"message", "hi"}}},
			`{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, ""},
		{"tools/call", BuildOptions{Tool: "echo", Args: [][2]string{{"message", "42"}}}, `"arguments":{"message":"42"}`, ""},
		{"tools/call", BuildOptions{Tool: "get-sum", Args: [][2]string{{"b", "2"}, {"a", "1.5"}}}, `"arguments":{"a":1.5,"b":2}`, ""},
		{"tools/call", BuildOptions{Tool: "get-sum", Args: [][2]string{{"a", "one"}, {"b", "2"}}}, "", "the argument a is of type number, and one is not JSON of it: write it as in --arg a=3"},
		{"tools/call", BuildOptions{Tool: "get-sum", Args: [][2]string{{"a", "1"}}}, "", "tool get-sum: it requires b: add --arg b=VALUE"},
		{"tools/call", BuildOptions{Tool: "echo", Args: [][2]string{{"message", "x"}, {"extra", `{"k":1}`}}}, `"arguments":{"message":"x","extra":{"k":1}}`, ""},
		{"tools/call", BuildOptions{Tool: "nope"}, "", "has no tool nope (the server lists: echo, get-sum, mixed)"},
		{"tools/call", BuildOptions{}, "", "tools/call needs a tool: add --tool NAME"},
		{"tools/call", BuildOptions{Tool: "echo", ID: `7`, Args: [][2]string{{"message", "hi"}}}, `"id":7,`, ""},
		{"prompts/get", BuildOptions{Tool: "greet", Args: [][2]string{{"who", "me"}}}, `"params":{"name":"greet","arguments":{"who":"me"}}`, ""},
		{"prompts/get", BuildOptions{Tool: "greet"}, "", "requires the argument who: add --arg who=VALUE"},
		{"resources/read", BuildOptions{}, `"params":{"uri":"test://static/resource/1"}`, ""},
		{"initialize", BuildOptions{}, `"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, ""},
		{"notifications/tools/list_changed", BuildOptions{Dir: classify.S2H}, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, ""},
		{"ping", BuildOptions{}, `"method":"ping"}`, ""},
	} {
		got, err := s.Build(c.method, c.o, ids)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %+v: error %v, want %q", c.method, c.o, err, c.err)
			}
			continue
		}
		if err != nil || !strings.Contains(string(got), c.want) || !classify.Valid(got) {
			t.Errorf("%s %+v: %s %v, want it to hold %s", c.method, c.o, got, err, c.want)
		}
	}
}

func TestLSPTemplatesUseTheOpenDocument(t *testing.T) {
	s := NewSeen()
	s.See(msg(classify.H2S, `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///w/main.go","languageId":"go","version":1,"text":""}}}`))
	var hover, refs string
	for _, tp := range s.Templates(NewIDs()) {
		switch tp.Name {
		case "textDocument/hover":
			hover = string(tp.Body)
		case "textDocument/references":
			refs = string(tp.Body)
		}
	}
	if !strings.Contains(hover, `"params":{"textDocument":{"uri":"file:///w/main.go"},"position":{"line":0,"character":0}}`) {
		t.Errorf("hover: %s", hover)
	}
	if !strings.Contains(refs, `"context":{"includeDeclaration":true}`) {
		t.Errorf("references: %s", refs)
	}
	b, err := s.Build("textDocument/definition", BuildOptions{}, NewIDs())
	if err != nil || !strings.Contains(string(b), `file:///w/main.go`) {
		t.Errorf("definition: %s %v", b, err)
	}
}

// On revision 2026-07-28 (no handshake) every request carries the protocol
// version and the client's capabilities in _meta. Once the host's requests
// carry them, the templates and Build put the same _meta in each request
// toward the server they make; a session that falls back to initialize, and
// the server's own requests, get none.
func TestRequestsOnRevision20260728CarryTheSessionsMeta(t *testing.T) {
	const meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/clientInfo":{"name":"h","version":"1"}}`
	s := NewSeen()
	for _, f := range []struct {
		dir   classify.Direction
		frame string
	}{
		{classify.H2S, `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":` + meta + `}}`},
		{classify.S2H, `{"jsonrpc":"2.0","id":0,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`},
		{classify.H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + meta + `}}`},
		{classify.S2H, strings.Replace(everythingTools, `"id":2`, `"id":1`, 1)},
		{classify.H2S, `{"jsonrpc":"2.0","id":2,"method":"custom/thing","params":{"x":1}}`},
		{classify.H2S, `{"jsonrpc":"2.0","method":"notifications/note","params":{"x":1}}`},
		{classify.S2H, `{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{}}`},
	} {
		s.See(msg(f.dir, f.frame))
	}
	if v := s.MetaVersion(); v != "2026-07-28" {
		t.Errorf("MetaVersion = %q", v)
	}
	ids := NewIDs()
	got := map[string]string{}
	for _, tp := range s.Templates(ids) {
		got[tp.Name] = string(tp.Body)
		if !classify.Valid(tp.Body) {
			t.Errorf("%s: %s is not JSON", tp.Name, tp.Body)
		}
	}
	for name, want := range map[string]string{
		"tools/call echo":    `"params":{"name":"echo","arguments":{"message":"<string>"},"_meta":` + meta + `}}`,
		"custom/thing":       `"params":{"x":1,"_meta":` + meta + `}}`,
		"tools/list":         `"params":{"_meta":` + meta + `}}`,
		"notifications/note": `"params":{"x":1}}`,
		"elicitation/create": `"params":{}}`,
	} {
		if !strings.HasSuffix(got[name], want) {
			t.Errorf("template %s = %s, want it to end %s", name, got[name], want)
		}
	}
	for method, o := range map[string]BuildOptions{"tools/call": {Tool: "echo", Args: [][2]string{{"message", "hi"}}}, "never/seen": {}} {
		b, err := s.Build(method, o, ids)
		if err != nil || !strings.Contains(string(b), `"_meta":`+meta) {
			t.Errorf("Build(%s) = %s, %v; want the session's _meta", method, b, err)
		}
	}

	// The server answers server/discover -32601; the host falls back to
	// initialize: requests carry no _meta from then on.
	s.See(msg(classify.H2S, `{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`))
	if v := s.MetaVersion(); v != "" {
		t.Errorf("after initialize, MetaVersion = %q", v)
	}
	for _, tp := range s.Templates(ids) {
		if tp.Name != "tools/list" && tp.Name != "server/discover" && strings.Contains(string(tp.Body), "_meta") {
			t.Errorf("after initialize, template %s = %s", tp.Name, tp.Body)
		}
	}
}

// ToolCall builds the tools/call of the tool it is given (the tools pane
// names its tools from the tracker's list, not Seen's): arguments a
// skeleton of the schema, required first, each of its type; none when
// there is no schema; and on revision 2026-07-28 the session's _meta.
func TestToolCallIsATemplateOfTheToolGivenWithTheSessionsMeta(t *testing.T) {
	const meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	s := NewSeen()
	s.See(msg(classify.H2S, `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":`+meta+`}}`))
	ids := NewIDs()
	tp := s.ToolCall(Tool{Name: "add\u202e", Schema: []byte(`{"type":"object","properties":{"note":{"type":"string"},"n":{"type":"integer"},"on":{"type":"boolean"}},"required":["on","n"]}`)}, ids)
	want := `{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"add` + "\u202e" + `","arguments":{"on":false,"n":0,"note":"<string>"},"_meta":` + meta + `}}`
	if tp.Name != "tools/call add\u202e" || tp.Dir != classify.H2S || string(tp.Body) != want {
		t.Errorf("got %s %v %s\nwant %s", tp.Name, tp.Dir, tp.Body, want)
	}
	if tp := s.ToolCall(Tool{Name: "ghost"}, ids); !strings.Contains(string(tp.Body), `"arguments":{},"_meta"`) {
		t.Errorf("a tool with no schema: %s", tp.Body)
	}
	if ids.Peek(classify.H2S) != `"rpctap-1"` {
		t.Errorf("a template took an id: the next is %s", ids.Peek(classify.H2S))
	}
}
