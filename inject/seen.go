package inject

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/rpctap/rpctap/classify"
)

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
	if metaVersionOf(meta) == "" || len(meta) > maxKept {
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

// CatalogParams are what the catalog's entries of a revision's rule and
// of a tool's schema are built from (Entry.FromSession): the _meta of the
// host's requests, and the tools listed.
func (s *Seen) CatalogParams() Params {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Params{Meta: bytes.Clone(s.meta), Tools: append([]Tool(nil), s.tools...)}
}

// MetaVersion is the protocol version the session's requests carry in
// _meta (revision 2026-07-28 and later, which have no handshake), "" when
// they carry none.
func (s *Seen) MetaVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return metaVersionOf(s.meta)
}

// metaVersionOf is the protocol version a request's _meta names, "" when
// it names none.
func metaVersionOf(meta []byte) string {
	v, _ := classify.StringValue(classify.Member(meta, metaVersion))
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
