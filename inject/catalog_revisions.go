package inject

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/rpctap/rpctap/classify"
)

// The catalog's entries above the envelope: rules of an MCP revision
// (the revision in force is the session's, Params.Meta) and of a tool's
// inputSchema (the session's tools, Params.Tools).

// rev20260728 is the revision with no handshake: each request names it,
// and the client's capabilities, in params._meta.
const rev20260728 = "2026-07-28"

// meta20260728 is the _meta of a 2026-07-28 request from a host that
// declares no capability: what an entry's frame carries when the session
// shows none of its own.
const meta20260728 = `{"` + metaVersion + `":"` + rev20260728 + `","` + metaCaps + `":{}}`

// inRevision says the session's requests name rev in their _meta.
func (p Params) inRevision(rev string) bool {
	return metaVersionOf(p.Meta) == rev
}

// meta2026 is the session's _meta when it names 2026-07-28, else
// meta20260728.
func (p Params) meta2026() json.RawMessage {
	if p.inRevision(rev20260728) {
		return json.RawMessage(p.Meta)
	}
	return json.RawMessage(meta20260728)
}

// noMeta is a request of 2026-07-28 without the _meta that revision
// requires: in a session of 2026-07-28, a tools/list with none at all;
// in a session of an older revision (where a request without _meta is
// one of that revision), one whose _meta names 2026-07-28 and leaves out
// the client's capabilities.
func noMeta(p Params) ([][]byte, error) {
	if p.inRevision(rev20260728) {
		return [][]byte{[]byte(`{"jsonrpc":"2.0","id":"rpctap-no-meta","method":"tools/list"}`)}, nil
	}
	return [][]byte{[]byte(`{"jsonrpc":"2.0","id":"rpctap-no-meta","method":"tools/list","params":{"_meta":{"` + metaVersion + `":"` + rev20260728 + `"}}}`)}, nil
}

// ping2026 is a ping sent as a 2026-07-28 request: with the session's
// _meta of that revision, or one that names it.
func ping2026(p Params) ([][]byte, error) {
	return [][]byte{request(`"rpctap-ping-2026"`, "ping", map[string]json.RawMessage{"_meta": p.meta2026()}, "_meta")}, nil
}

// ErrNoTools is wrapped by the error of an entry that calls a listed
// tool, in a session that listed none.
var ErrNoTools = errors.New("the session has listed no tools")

// badArguments is a tools/call of a listed tool (p.Tool, or the first
// whose inputSchema some arguments break) with arguments that break its
// inputSchema, as classify judges them; with the session's _meta when
// its requests carry one.
func badArguments(p Params) ([][]byte, error) {
	if len(p.Tools) == 0 {
		return nil, fmt.Errorf("%w yet, and bad-tool-arguments calls one of them: have the host list them, or send a tools/list first (rpctap inject --method tools/list), then try again", ErrNoTools)
	}
	tools := p.Tools
	if p.Tool != "" {
		i := slices.IndexFunc(tools, func(t Tool) bool { return t.Name == p.Tool })
		if i < 0 {
			return nil, fmt.Errorf("the session listed no tool %s%s", classify.EscapeString(p.Tool, 60), toolHint(tools))
		}
		tools = tools[i : i+1]
	}
	for _, t := range tools {
		args, ok := breakingArguments(t)
		if !ok {
			continue
		}
		params := map[string]json.RawMessage{"name": mustJSON(t.Name), "arguments": args}
		order := []string{"name", "arguments"}
		if p.Meta != nil {
			params["_meta"], order = p.Meta, append(order, "_meta")
		}
		return [][]byte{request(`"rpctap-bad-arguments"`, "tools/call", params, order...)}, nil
	}
	if p.Tool != "" {
		return nil, fmt.Errorf("tool %s takes any arguments its inputSchema can be given (no required argument, no typed property, extra ones allowed), so none break it; name another with --tool%s", classify.EscapeString(p.Tool, 60), toolHint(p.Tools))
	}
	return nil, fmt.Errorf("each of the %d tools the session listed takes any arguments (no required argument, no typed property, extra ones allowed), so none break a schema", len(p.Tools))
}

// breakingArguments are arguments that t's inputSchema refuses, as
// classify validates them: none of the required ones, a property of the
// wrong type, or a property the schema does not allow; false when the
// schema refuses none of them (or does not compile).
func breakingArguments(t Tool) (json.RawMessage, bool) {
	var schema struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
		Additional json.RawMessage            `json:"additionalProperties"`
	}
	if json.Unmarshal(t.Schema, &schema) != nil {
		return nil, false
	}
	var tries []json.RawMessage
	if len(schema.Required) > 0 {
		tries = append(tries, json.RawMessage(`{}`))
	}
	for _, name := range slices.Sorted(maps.Keys(schema.Properties)) {
		var prop struct {
			Type json.RawMessage `json:"type"`
		}
		json.Unmarshal(schema.Properties[name], &prop)
		wrong := json.RawMessage(`42`)
		if string(prop.Type) != `"string"` {
			wrong = json.RawMessage(`"rpctap: a value of the wrong type"`)
		}
		tries = append(tries, appendObject(nil, map[string]json.RawMessage{name: wrong}, []string{name}))
	}
	tries = append(tries, json.RawMessage(`{"rpctap-unexpected":true}`))
	var listed classify.Tools
	list := append(append([]byte(`{"tools":[{"name":`), mustJSON(t.Name)...), `,"inputSchema":`...)
	list = append(append(list, t.Schema...), `}]}`...)
	if len(listed.SetList(list)) > 0 {
		return nil, false // the schema does not compile: nothing is judged against it
	}
	for _, args := range tries {
		if _, bad := listed.CheckCall(t.Name, args); bad {
			return args, true
		}
	}
	return nil, false
}

// revisionEntries are the catalog's entries for the rules of MCP
// revisions and of tools' schemas.
var revisionEntries = []Entry{
	{Name: "no-meta-2026", Dir: classify.H2S, Revision: rev20260728, build: noMeta,
		Rule:       `Revision 2026-07-28 has no handshake: every request names its revision and the client's capabilities in params._meta, and a server of that revision refuses one that lacks them (-32602 Invalid params) or reads it as a request of an older revision. In a 2026-07-28 session the frame is a tools/list with no _meta; in a session of an older revision, one whose _meta names 2026-07-28 without the client's capabilities, which a server that does not speak 2026-07-28 answers as a request of its own.`,
		Codes:      []classify.Code{classify.CodeMissingMeta},
		OlderCodes: []classify.Code{classify.CodeMissingMeta}},
	{Name: "no-result-type-2026", Dir: classify.S2H, Revision: rev20260728, NeedsID: true,
		build: withID(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"rpctap: a result with no resultType"}]}}`),
		Rule:  `A response is never answered; under 2026-07-28 every result says its resultType ("complete" or "input_required"), and a host of that revision reads a result without one as an older server's. In a session of an older revision a result needs no resultType: the host takes it as the answer.`,
		Codes: []classify.Code{classify.CodeMissingResultType}},
	{Name: "ping-2026", Dir: classify.H2S, Revision: rev20260728, build: ping2026,
		Rule:       `Revision 2026-07-28 removed ping (with logging/setLevel, resources/subscribe and notifications/initialized): a server of that revision answers -32601 Method not found. The frame carries the session's 2026-07-28 _meta, or, in a session of an older revision, one that names 2026-07-28, which a server that does not speak it ignores, answering the ping.`,
		Codes:      []classify.Code{classify.CodeRemovedMethod},
		OlderCodes: []classify.Code{classify.CodeRemovedMethod}},
	{Name: "server-request-2026", Dir: classify.S2H, Revision: rev20260728, build: one(`{"jsonrpc":"2.0","id":"rpctap-roots-2026","method":"roots/list"}`),
		Rule:  `Revision 2026-07-28 removed every server request (roots/list, sampling/createMessage, elicitation/create): a server asks for input with an input_required result instead, and a host of that revision answers a server's request -32601 Method not found. In a session of an older revision roots/list is the server's to send, and a host that declared roots answers it with them.`,
		Codes: []classify.Code{classify.CodeRemovedMethod}},
	{Name: "bad-tool-arguments", Dir: classify.H2S, NeedsTools: true, build: badArguments,
		Rule:  `A tools/call of a tool the session listed, with arguments its inputSchema refuses (a required one left out, a value of the wrong type, or one it does not allow): a server validates arguments against inputSchema and answers a tool error (isError: true) or -32602 Invalid params, never calls the tool with them.`,
		Codes: []classify.Code{classify.CodeToolArgumentsInvalid}},
}
