package inject

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

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

// Seen collects, from a session's frames, what templates are built from:
// the methods each side sent (with their last params), the tools, prompts
// and resources of the last MCP list results, and the document an LSP
// client opened last. Memory is bounded (maxMethods methods, maxKept
// bytes of params each, maxItems tools, prompts or resources). It is safe
// for concurrent use.
type Seen struct {
	mu      sync.Mutex
	methods map[methodKey][]byte // last params (nil when none)
	order   []methodKey
	asked   map[string]string // id key of a list request in flight → its method
	tools   []Tool
	prompts []Prompt
	res     []Resource
	docURI  string
	// meta is the _meta the host's requests carry on an MCP revision
	// with no handshake (2026-07-28: each request says its protocol
	// version and the client's capabilities there), nil on others.
	meta []byte
}

type methodKey struct {
	dir    classify.Direction
	method string
	notify bool
}

// A Tool is one tool of a tools/list result.
type Tool struct {
	Name   string
	Schema json.RawMessage // its inputSchema
}

// A Prompt is one prompt of a prompts/list result.
type Prompt struct {
	Name string
	Args []PromptArg
}

// A PromptArg is one argument of a prompt.
type PromptArg struct {
	Name     string `json:"name"`
	Required bool   `json:"required"`
}

// A Resource is one resource of a resources/list result.
type Resource struct {
	URI  string
	Name string
}

// Bounds of what Seen keeps.
const (
	maxMethods = 256
	maxKept    = 64 << 10
	maxItems   = 1000
	maxAsked   = 64
)

// NewSeen returns a Seen that has seen nothing.
func NewSeen() *Seen {
	return &Seen{methods: map[methodKey][]byte{}, asked: map[string]string{}}
}

// listMethods are the requests whose results templates are built from.
var listMethods = map[string]bool{"tools/list": true, "prompts/list": true, "resources/list": true}

// See takes in one frame of the session, as classify read it.
func (s *Seen) See(m *classify.Message) {
	if m.Dir != classify.H2S && m.Dir != classify.S2H {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.see(m)
}

func (s *Seen) see(m *classify.Message) {
	for i := range m.Members {
		s.see(&m.Members[i])
	}
	switch m.Kind {
	case classify.KindRequest, classify.KindNotification:
		method := m.Method()
		k := methodKey{dir: m.Dir, method: method, notify: m.Kind == classify.KindNotification}
		if _, ok := s.methods[k]; !ok {
			if len(s.methods) >= maxMethods {
				break
			}
			s.order = append(s.order, k)
		}
		var params []byte
		if p := m.Params(); len(p) <= maxKept {
			params = bytes.Clone(p)
		}
		s.methods[k] = params
		if m.Kind == classify.KindRequest && listMethods[method] && len(s.asked) < maxAsked {
			s.asked[m.Dir.String()+m.ID().Key()] = method
		}
		if uri := docURI(m.Params()); uri != "" {
			s.docURI = uri
		}
		if m.Dir == classify.H2S && m.Kind == classify.KindRequest {
			if method == "initialize" {
				s.meta = nil // a handshake: the session is on an older revision
			} else if meta := requestMeta(m.Params()); meta != nil {
				s.meta = meta
			}
		}
	case classify.KindResponse:
		if !m.HasID() {
			return
		}
		k := m.Dir.Opposite().String() + m.ID().Key()
		method, ok := s.asked[k]
		if !ok {
			return
		}
		delete(s.asked, k)
		if m.HasResult() {
			s.takeList(method, m.Result())
		}
	}
}

// The _meta keys a request carries on revision 2026-07-28, in the order
// written: the protocol version and the client's capabilities are
// required, its info is optional.
const (
	metaVersion = "io.modelcontextprotocol/protocolVersion"
	metaCaps    = "io.modelcontextprotocol/clientCapabilities"
	metaInfo    = "io.modelcontextprotocol/clientInfo"
)

// requestMeta is the per-request _meta of a host's request's params (its
// protocol version, the client's capabilities and info), nil when they
// name no protocol version there.
func requestMeta(params []byte) []byte {
	meta := classify.Member(params, "_meta")
	if v, ok := classify.StringValue(classify.Member(meta, metaVersion)); !ok || v == "" || len(meta) > maxKept {
		return nil
	}
	members := map[string]json.RawMessage{metaCaps: json.RawMessage(`{}`)}
	for _, k := range []string{metaVersion, metaCaps, metaInfo} {
		if v := classify.Member(meta, k); v != nil {
			members[k] = bytes.Clone(v)
		}
	}
	return appendObject(nil, members, []string{metaVersion, metaCaps, metaInfo})
}

// withMeta is a request's params with the session's per-request _meta
// added, when the session has one and the params carry none (an object,
// or none at all; other params are left as they are).
func (s *Seen) withMeta(params []byte) []byte {
	if s.meta == nil {
		return params
	}
	p := bytes.TrimSpace(params)
	switch {
	case len(p) == 0:
		return append(append([]byte(`{"_meta":`), s.meta...), '}')
	case p[0] != '{' || classify.Member(p, "_meta") != nil || !classify.Valid(p):
		return params
	}
	inner := bytes.TrimSpace(p[1 : len(p)-1])
	out := append([]byte(nil), p[:len(p)-1]...)
	if len(inner) > 0 {
		out = append(out, ',')
	}
	return append(append(append(out, `"_meta":`...), s.meta...), '}')
}

// MetaVersion is the protocol version the session's requests carry in
// _meta (revision 2026-07-28 and later, which have no handshake), "" when
// they carry none.
func (s *Seen) MetaVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, _ := classify.StringValue(classify.Member(s.meta, metaVersion))
	return v
}

// docURI is params.textDocument.uri, when it is a string.
func docURI(params []byte) string {
	td := classify.Member(params, "textDocument")
	uri, _ := classify.StringValue(classify.Member(td, "uri"))
	return uri
}

func (s *Seen) takeList(method string, result []byte) {
	switch method {
	case "tools/list":
		var r struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if json.Unmarshal(result, &r) != nil {
			return
		}
		s.tools = s.tools[:0]
		for _, t := range r.Tools[:min(len(r.Tools), maxItems)] {
			s.tools = append(s.tools, Tool{Name: t.Name, Schema: t.InputSchema})
		}
	case "prompts/list":
		var r struct {
			Prompts []struct {
				Name      string      `json:"name"`
				Arguments []PromptArg `json:"arguments"`
			} `json:"prompts"`
		}
		if json.Unmarshal(result, &r) != nil {
			return
		}
		s.prompts = s.prompts[:0]
		for _, p := range r.Prompts[:min(len(r.Prompts), maxItems)] {
			s.prompts = append(s.prompts, Prompt{Name: p.Name, Args: p.Arguments})
		}
	case "resources/list":
		var r struct {
			Resources []struct {
				URI  string `json:"uri"`
				Name string `json:"name"`
			} `json:"resources"`
		}
		if json.Unmarshal(result, &r) != nil {
			return
		}
		s.res = s.res[:0]
		for _, x := range r.Resources[:min(len(r.Resources), maxItems)] {
			s.res = append(s.res, Resource{URI: x.URI, Name: x.Name})
		}
	}
}

// Tools returns the tools of the last tools/list result.
func (s *Seen) Tools() []Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Tool(nil), s.tools...)
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
		args, _ := Arguments(t.Schema, nil, false)
		out = append(out, Template{Name: "tools/call " + t.Name, Dir: classify.H2S,
			Body: s.request(classify.H2S, ids.Peek(classify.H2S), "tools/call", map[string]json.RawMessage{"name": mustJSON(t.Name), "arguments": args}, "name", "arguments")})
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
			return nil, fmt.Errorf("tools/call needs a tool: add --tool NAME%s", s.toolHint())
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
		return nil, fmt.Errorf("the last tools/list answer has no tool %s%s", classify.EscapeString(o.Tool, 60), s.toolHint())
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

func (s *Seen) toolHint() string {
	if len(s.tools) == 0 {
		return ""
	}
	var names []string
	for _, t := range s.tools[:min(len(s.tools), 20)] {
		names = append(names, classify.EscapeString(t.Name, 40))
	}
	return " (the server lists: " + strings.Join(names, ", ") + ")"
}

func hasArg(args [][2]string, name string) bool {
	for _, a := range args {
		if a[0] == name {
			return true
		}
	}
	return false
}

// StringPlaceholder is the JSON value a template leaves in place of a
// string argument it was not given.
const StringPlaceholder = `"<string>"`

// promptArgs are a prompt's arguments: those given, and unless onlyGiven
// the others as StringPlaceholder (prompt arguments are strings).
func promptArgs(p Prompt, given [][2]string, onlyGiven bool) json.RawMessage {
	m := map[string]json.RawMessage{}
	var order []string
	for _, a := range p.Args {
		if !onlyGiven && !hasArg(given, a.Name) {
			m[a.Name] = json.RawMessage(StringPlaceholder)
			order = append(order, a.Name)
		}
	}
	for _, a := range given {
		if _, ok := m[a[0]]; !ok {
			order = append(order, a[0])
		}
		m[a[0]] = mustJSON(a[1])
	}
	return appendObject(nil, m, order)
}

// A property is one property of an object schema, in schema order.
type property struct {
	name   string
	schema json.RawMessage
}

// Arguments builds a tool's arguments object from its inputSchema: the
// properties it requires first (in its required order), then the others
// (in schema order), each with the value given in args or a placeholder
// of its type: "<string>", 0, false, [], {}, its default, its first enum
// value. With onlyGiven, optional properties not given are left out and
// a required one not given is an error that says what to add. A value
// given is read by its property's type: a string as it is; anything else
// as JSON (a number, true, an object...), and an argument the schema does
// not name as JSON when it reads as JSON, else as a string.
func Arguments(schema json.RawMessage, args [][2]string, onlyGiven bool) (json.RawMessage, error) {
	props := properties(schema)
	var required []string
	var sch struct {
		Required []string `json:"required"`
	}
	json.Unmarshal(schema, &sch)
	required = sch.Required
	isReq := map[string]bool{}
	for _, r := range required {
		isReq[r] = true
	}
	byName := map[string]json.RawMessage{}
	for _, p := range props {
		byName[p.name] = p.schema
	}
	// Order: required (their order), then the rest (schema order).
	var order []string
	for _, r := range required {
		order = append(order, r)
	}
	for _, p := range props {
		if !isReq[p.name] {
			order = append(order, p.name)
		}
	}
	values := map[string]json.RawMessage{}
	for _, a := range args {
		v, err := argValue(a[0], a[1], byName[a[0]])
		if err != nil {
			return nil, err
		}
		if _, ok := byName[a[0]]; !ok && !isReq[a[0]] {
			if _, dup := values[a[0]]; !dup {
				order = append(order, a[0])
			}
		}
		values[a[0]] = v
	}
	var missing []string
	out := map[string]json.RawMessage{}
	var kept []string
	for _, name := range order {
		if v, ok := values[name]; ok {
			out[name] = v
			kept = append(kept, name)
			continue
		}
		if onlyGiven {
			if isReq[name] {
				missing = append(missing, name)
			}
			continue
		}
		out[name] = placeholder(byName[name])
		kept = append(kept, name)
	}
	if len(missing) > 0 {
		var adds []string
		for _, m := range missing {
			adds = append(adds, "--arg "+classify.EscapeString(m, 40)+"=VALUE")
		}
		return nil, fmt.Errorf("it requires %s: add %s", strings.Join(missing, ", "), strings.Join(adds, " "))
	}
	return appendObject(nil, out, kept), nil
}

// properties reads an object schema's properties in the order written.
func properties(schema json.RawMessage) []property {
	raw := classify.Member(schema, "properties")
	if raw == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []property
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := t.(string)
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return out
		}
		out = append(out, property{name, v})
	}
	return out
}

// schemaType is a schema's type, the first that is not null when it is a
// list.
func schemaType(schema json.RawMessage) string {
	var s struct {
		Type any `json:"type"`
	}
	json.Unmarshal(schema, &s)
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok && x != "null" {
				return x
			}
		}
	}
	return ""
}

// placeholder is a value of a schema's type that says what goes there.
func placeholder(schema json.RawMessage) json.RawMessage {
	if d := classify.Member(schema, "default"); d != nil {
		return d
	}
	if c := classify.Member(schema, "const"); c != nil {
		return c
	}
	var e struct {
		Enum []json.RawMessage `json:"enum"`
	}
	if json.Unmarshal(schema, &e) == nil && len(e.Enum) > 0 {
		return e.Enum[0]
	}
	switch schemaType(schema) {
	case "number", "integer":
		return json.RawMessage(`0`)
	case "boolean":
		return json.RawMessage(`false`)
	case "array":
		return json.RawMessage(`[]`)
	case "object":
		args, _ := Arguments(schema, nil, false)
		return args
	case "null":
		return json.RawMessage(`null`)
	}
	return json.RawMessage(StringPlaceholder)
}

// argValue reads an argument given as text by its schema's type.
func argValue(name, v string, schema json.RawMessage) (json.RawMessage, error) {
	t := schemaType(schema)
	switch {
	case t == "string":
		return mustJSON(v), nil
	case schema == nil:
		if json.Valid([]byte(v)) {
			return json.RawMessage(v), nil
		}
		return mustJSON(v), nil
	case t == "":
		if json.Valid([]byte(v)) {
			return json.RawMessage(v), nil
		}
		return mustJSON(v), nil
	}
	if !json.Valid([]byte(v)) {
		example := map[string]string{"number": "3", "integer": "3", "boolean": "true", "array": `'["a"]'`, "object": `'{"k":"v"}'`}[t]
		if example == "" {
			example = "JSON"
		}
		return nil, fmt.Errorf("the argument %s is of type %s, and %s is not JSON of it: write it as in --arg %s=%s",
			classify.EscapeString(name, 40), t, classify.EscapeString(v, 40), classify.EscapeString(name, 40), example)
	}
	return json.RawMessage(v), nil
}
