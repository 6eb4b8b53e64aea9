package inject

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rpctap/rpctap/classify"
)

// A Template is a frame to start from: a request for a method seen, a
// tools/call for a listed tool, a reply to a request...
type Template struct {
	// Name says what it is, as in "tools/call echo".
	Name string
	// Dir is where it goes: H2S for the host's requests, S2H for the
	// server's.
	Dir  classify.Direction
	Body []byte
}

// Resend builds a copy of the request or notification m with a fresh id
// (JSON text, as from IDs.Next) in place of its own: the frame's bytes
// are kept, but for the id's value. A notification is resent as it is.
func Resend(m *classify.Message, id string) ([]byte, error) {
	switch m.Kind {
	case classify.KindNotification:
		return bytes.Clone(m.Frame), nil
	case classify.KindRequest:
	default:
		return nil, fmt.Errorf("only a request or a notification can be resent, and this frame is %s", m.Kind.Phrase())
	}
	raw := m.ID().Raw
	at := -1
	for i := range m.Frame {
		if &m.Frame[i] == &raw[0] {
			at = i
			break
		}
	}
	if at < 0 {
		return nil, errors.New("the request's id could not be found in its frame")
	}
	out := append(append([]byte(nil), m.Frame[:at]...), id...)
	return append(out, m.Frame[at+len(raw):]...), nil
}

// lspRequests are the common LSP requests about a position in a document.
var lspRequests = []string{"textDocument/hover", "textDocument/definition", "textDocument/references",
	"textDocument/completion", "textDocument/typeDefinition", "textDocument/implementation", "textDocument/documentHighlight"}

// Templates lists a frame to start from for each method seen (with the
// params it last had), for each tool, prompt and resource listed, and,
// for an LSP session, the common requests about the open document. Each
// request shows the next id of its direction (ids.Peek), without taking
// it: one template is sent at a time.
func (s *Seen) Templates(ids *IDs) []Template {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Template
	for _, k := range s.order {
		params := s.methods[k]
		b := []byte(`{"jsonrpc":"2.0",`)
		if !k.notify {
			b = append(append(append(b, `"id":`...), ids.Peek(k.dir)...), ',')
		}
		b = append(append(b, `"method":`...), mustJSON(k.method)...)
		if k.dir == classify.H2S && !k.notify {
			params = s.withMeta(params)
		}
		if params != nil {
			b = append(append(b, `,"params":`...), params...)
		}
		out = append(out, Template{Name: k.method, Dir: k.dir, Body: append(b, '}')})
	}
	for _, t := range s.tools {
		out = append(out, s.toolCall(t, ids))
	}
	for _, p := range s.prompts {
		out = append(out, Template{Name: "prompts/get " + p.Name, Dir: classify.H2S,
			Body: s.request(classify.H2S, ids.Peek(classify.H2S), "prompts/get", map[string]json.RawMessage{"name": mustJSON(p.Name), "arguments": promptArgs(p, nil, false)}, "name", "arguments")})
	}
	for _, r := range s.res {
		out = append(out, Template{Name: "resources/read " + r.URI, Dir: classify.H2S,
			Body: s.request(classify.H2S, ids.Peek(classify.H2S), "resources/read", map[string]json.RawMessage{"uri": mustJSON(r.URI)}, "uri")})
	}
	if s.docURI != "" {
		for _, m := range lspRequests {
			out = append(out, Template{Name: m, Dir: classify.H2S, Body: request(ids.Peek(classify.H2S), m, lspParams(m, s.docURI), "textDocument", "position", "context")})
		}
	}
	return out
}

// ToolCall is the template of a tools/call of tool: its arguments a
// skeleton of its inputSchema (Arguments: each property a placeholder of
// its type; none when the schema is nil), with the session's per-request
// _meta when it has one, and the next id of the host's side (ids.Peek).
func (s *Seen) ToolCall(tool Tool, ids *IDs) Template {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.toolCall(tool, ids)
}

func (s *Seen) toolCall(t Tool, ids *IDs) Template {
	args, _ := Arguments(t.Schema, nil, false)
	return Template{Name: "tools/call " + t.Name, Dir: classify.H2S,
		Body: s.request(classify.H2S, ids.Peek(classify.H2S), "tools/call", map[string]json.RawMessage{"name": mustJSON(t.Name), "arguments": args}, "name", "arguments")}
}

func lspParams(method, uri string) map[string]json.RawMessage {
	p := map[string]json.RawMessage{
		"textDocument": append(append([]byte(`{"uri":`), mustJSON(uri)...), '}'),
		"position":     json.RawMessage(`{"line":0,"character":0}`),
	}
	if method == "textDocument/references" {
		p["context"] = json.RawMessage(`{"includeDeclaration":true}`)
	}
	return p
}

// request is request() for a host's MCP request: with the session's
// per-request _meta, last, when it has one.
func (s *Seen) request(dir classify.Direction, id, method string, params map[string]json.RawMessage, order ...string) []byte {
	if s.meta != nil && dir == classify.H2S {
		params["_meta"] = s.meta
		order = append(order, "_meta")
	}
	return request(id, method, params, order...)
}

// request renders a request with params members in the order given.
func request(id, method string, params map[string]json.RawMessage, order ...string) []byte {
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	b = append(append(b, `,"method":`...), mustJSON(method)...)
	b = append(b, `,"params":`...)
	b = appendObject(b, params, order)
	return append(b, '}')
}

func appendObject(b []byte, members map[string]json.RawMessage, order []string) []byte {
	b = append(b, '{')
	first := true
	for _, k := range order {
		v, ok := members[k]
		if !ok {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(append(append(b, mustJSON(k)...), ':'), v...)
	}
	return append(b, '}')
}

func mustJSON(s string) []byte { return classify.AppendJSONString(nil, s) }

// BuildOptions fill a request for one method (rpctap inject --method).
type BuildOptions struct {
	// Dir is where the request goes (H2S by default).
	Dir classify.Direction
	// ID is its id (JSON text), from IDs.Next by default.
	ID string
	// Tool is the tool of a tools/call, the prompt of a prompts/get, the
	// URI of a resources/read.
	Tool string
	// Args are the tool's or prompt's arguments as given (name=value):
	// a value is read by the type the schema gives its argument.
	Args [][2]string
}

// Build makes the request for method, filled from what the session
// showed: a tools/call of Tool with Args checked against its inputSchema
// (an argument the schema requires and Args lack is an error that says
// what to add), a prompts/get of a prompt, a resources/read of a URI, an
// LSP request about the open document, or any other method with the
// params it last had (none when never seen).
func (s *Seen) Build(method string, o BuildOptions, ids *IDs) ([]byte, error) {
	if o.Dir == 0 {
		o.Dir = classify.H2S
	}
	if o.ID == "" {
		o.ID = ids.Next(o.Dir)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch method {
	case "tools/call":
		if o.Tool == "" {
			return nil, fmt.Errorf("tools/call needs a tool: add --tool NAME%s", toolHint(s.tools))
		}
		for _, t := range s.tools {
			if t.Name == o.Tool {
				args, err := Arguments(t.Schema, o.Args, true)
				if err != nil {
					return nil, fmt.Errorf("tool %s: %w", classify.EscapeString(t.Name, 60), err)
				}
				return s.request(o.Dir, o.ID, method, map[string]json.RawMessage{"name": mustJSON(t.Name), "arguments": args}, "name", "arguments"), nil
			}
		}
		if len(s.tools) == 0 {
			// No tools/list answer seen: the arguments go as given.
			args, err := Arguments(nil, o.Args, true)
			if err != nil {
				return nil, err
			}
			return s.request(o.Dir, o.ID, method, map[string]json.RawMessage{"name": mustJSON(o.Tool), "arguments": args}, "name", "arguments"), nil
		}
		return nil, fmt.Errorf("the last tools/list answer has no tool %s%s", classify.EscapeString(o.Tool, 60), toolHint(s.tools))
	case "prompts/get":
		if o.Tool == "" {
			return nil, errors.New("prompts/get needs a prompt: add --tool NAME (the prompt's name)")
		}
		p := Prompt{Name: o.Tool}
		for _, x := range s.prompts {
			if x.Name == o.Tool {
				p = x
			}
		}
		args := promptArgs(p, o.Args, true)
		for _, a := range p.Args {
			if a.Required && !hasArg(o.Args, a.Name) {
				return nil, fmt.Errorf("the prompt %s requires the argument %s: add --arg %s=VALUE", classify.EscapeString(p.Name, 60), classify.EscapeString(a.Name, 60), classify.EscapeString(a.Name, 60))
			}
		}
		return s.request(o.Dir, o.ID, method, map[string]json.RawMessage{"name": mustJSON(p.Name), "arguments": args}, "name", "arguments"), nil
	case "resources/read":
		uri := o.Tool
		if uri == "" && len(s.res) > 0 {
			uri = s.res[0].URI
		}
		if uri == "" {
			return nil, errors.New("resources/read needs a URI: add --tool URI")
		}
		return s.request(o.Dir, o.ID, method, map[string]json.RawMessage{"uri": mustJSON(uri)}, "uri"), nil
	}
	for _, m := range lspRequests {
		if m == method && s.docURI != "" {
			return request(o.ID, method, lspParams(m, s.docURI), "textDocument", "position", "context"), nil
		}
	}
	b := append([]byte(`{"jsonrpc":"2.0","id":`), o.ID...)
	b = append(append(b, `,"method":`...), mustJSON(method)...)
	notify := classify.IsNotificationName(method, classify.Auto)
	if notify {
		b = append([]byte(`{"jsonrpc":"2.0","method":`), mustJSON(method)...)
	}
	params, ok := s.methods[methodKey{dir: o.Dir, method: method, notify: notify}]
	if !ok || params == nil {
		params = nil
		if len(o.Args) > 0 {
			args, err := Arguments(nil, o.Args, true)
			if err != nil {
				return nil, err
			}
			params = args
		}
	}
	if o.Dir == classify.H2S && !notify {
		params = s.withMeta(params)
	}
	if params != nil {
		b = append(append(b, `,"params":`...), params...)
	}
	return append(b, '}'), nil
}

// toolHint names the first tools of a list, for an error: " (the server
// lists: a, b)", "" when the list is empty.
func toolHint(tools []Tool) string {
	if len(tools) == 0 {
		return ""
	}
	var names []string
	for _, t := range tools[:min(len(tools), 20)] {
		names = append(names, classify.EscapeString(t.Name, 40))
	}
	return " (the server lists: " + strings.Join(names, ", ") + ")"
}
