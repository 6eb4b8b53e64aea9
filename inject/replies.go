package inject

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/rpctap/rpctap/classify"
)

// The replies that fit the requests a server sends its host, by method:
// one table for the answers rpctap's own host gives at once (HostReply)
// and for the skeleton the view offers to answer one in the host's place
// (ReplyTo). A reply that does not fit its method breaks the server that
// reads it (gopls refuses an object where it asked for a list).

// A Host is what a reply says of the host that gives it.
type Host struct {
	// Root is the host's working directory (an absolute path), offered
	// as its one root (MCP) or workspace folder (LSP); "" offers none.
	Root string
}

// A fit is the reply that fits one method.
type fit struct {
	// result is the reply's result, as JSON text, for the request's
	// params.
	result func(params []byte, h Host) string
	// refusal, when set, is the error message rpctap's own host answers
	// with instead: what it cannot do for the server (the user can, from
	// the skeleton, in the view).
	refusal string
}

func constant(r string) func([]byte, Host) string { return func([]byte, Host) string { return r } }

var fits = map[string]fit{
	// MCP.
	"ping":       {result: constant(`{}`)},
	"roots/list": {result: roots},
	"sampling/createMessage": {
		result:  constant(`{"role":"assistant","content":{"type":"text","text":""},"model":"rpctap"}`),
		refusal: "rpctap's host does not sample: answer this request from the view instead (:intercept dir:s2h method:sampling/createMessage holds the next one; then H, and a answers it)",
	},
	"elicitation/create": {result: constant(`{"action":"decline"}`)},
	// LSP.
	"workspace/configuration":          {result: configuration},
	"workspace/workspaceFolders":       {result: folders},
	"client/registerCapability":        {result: constant(`null`)},
	"client/unregisterCapability":      {result: constant(`null`)},
	"window/workDoneProgress/create":   {result: constant(`null`)},
	"window/showMessageRequest":        {result: constant(`null`)},
	"window/showDocument":              {result: constant(`{"success":false}`)},
	"workspace/applyEdit":              {result: constant(`{"applied":false,"failureReason":"rpctap's host applies no edits"}`)},
	"workspace/codeLens/refresh":       {result: constant(`null`)},
	"workspace/semanticTokens/refresh": {result: constant(`null`)},
	"workspace/inlayHint/refresh":      {result: constant(`null`)},
	"workspace/inlineValue/refresh":    {result: constant(`null`)},
	"workspace/diagnostic/refresh":     {result: constant(`null`)},
	"workspace/foldingRange/refresh":   {result: constant(`null`)},
}

// folder is the host's root as MCP's Root and LSP's WorkspaceFolder both
// say it: its URI and its name.
func (h Host) folder() string {
	return `{"uri":` + Quote(FileURI(h.Root)) + `,"name":` + Quote(filepath.Base(h.Root)) + `}`
}

// Folders is the host's workspace folders, as LSP's initialize and
// workspace/workspaceFolders give them: its root, or null (no workspace
// open).
func (h Host) Folders() string {
	if h.Root == "" {
		return `null`
	}
	return `[` + h.folder() + `]`
}

// roots is roots/list's result: the host's working directory, or none.
func roots(_ []byte, h Host) string {
	if h.Root == "" {
		return `{"roots":[]}`
	}
	return `{"roots":[` + h.folder() + `]}`
}

// configuration is workspace/configuration's result: no settings, a null
// for each item asked for.
func configuration(params []byte, _ Host) string {
	var p struct {
		Items []json.RawMessage `json:"items"`
	}
	json.Unmarshal(params, &p)
	return "[" + strings.TrimSuffix(strings.Repeat("null,", len(p.Items)), ",") + "]"
}

// folders is workspace/workspaceFolders's result: Folders.
func folders(_ []byte, h Host) string { return h.Folders() }

// HostReply is what rpctap's own host answers the request req with, at
// once: the reply that fits its method (or, where rpctap cannot do what
// is asked, an error that says so and what to do), and for a method it
// does not know, -32601.
func HostReply(req *classify.Message, h Host) []byte {
	f, ok := fits[req.Method()]
	switch {
	case !ok:
		return errorReply(req, -32601, "rpctap's host does not know the method "+strings.ToValidUTF8(req.Method(), "?"))
	case f.refusal != "":
		return errorReply(req, -1, f.refusal)
	}
	return resultReply(req, f.result(req.Params(), h))
}

// HostResult is the result rpctap's own host gives a request of the
// method, with params, as HostReply answers it with one; false when it
// gives none (it refuses what it cannot do, and knows no other method).
// A multi round-trip call's input requests are answered with it: their
// answers are results only.
func HostResult(method string, params []byte, h Host) (string, bool) {
	f, ok := fits[method]
	if !ok || f.refusal != "" {
		return "", false
	}
	return f.result(params, h), true
}

// ReplyTo builds a response skeleton to the request req, to send back the
// other way (req.Dir.Opposite()): its id, and the result that fits its
// method (an empty object for a method the table does not know).
func ReplyTo(req *classify.Message) ([]byte, error) {
	if req.Kind != classify.KindRequest {
		return nil, fmt.Errorf("only a request can be replied to, and this frame is %s", req.Kind.Phrase())
	}
	result := `{}`
	if f, ok := fits[req.Method()]; ok {
		result = f.result(req.Params(), Host{})
	} else if r, ok := serverResults[req.Method()]; ok && req.Dir == classify.H2S {
		result = r
	} else if req.Profile == classify.LSP {
		result = `null` // every LSP request of an editor may be answered null
	}
	if req.Dir == classify.H2S && result != `null` && result[0] == '{' && isRevision2026(req) {
		// A 2026-07-28 result says its type, and a list its cache hints.
		extra := `"resultType":"complete"`
		if strings.HasSuffix(req.Method(), "/list") {
			extra += `,"ttlMs":0,"cacheScope":"private"`
		}
		if result == `{}` {
			result = `{` + extra + `}`
		} else {
			result = `{` + extra + `,` + result[1:]
		}
	}
	return resultReply(req, result), nil
}

// serverResults are the empty results that fit the host's requests to
// an MCP server, for answering one in the server's place.
var serverResults = map[string]string{
	"tools/call":               `{"content":[]}`,
	"tools/list":               `{"tools":[]}`,
	"prompts/get":              `{"messages":[]}`,
	"prompts/list":             `{"prompts":[]}`,
	"resources/read":           `{"contents":[]}`,
	"resources/list":           `{"resources":[]}`,
	"resources/templates/list": `{"resourceTemplates":[]}`,
	"completion/complete":      `{"completion":{"values":[]}}`,
}

// isRevision2026 reports whether the request names MCP revision
// 2026-07-28 in its _meta.
func isRevision2026(req *classify.Message) bool {
	v, _ := classify.StringValue(classify.Member(classify.Member(req.Params(), "_meta"), "io.modelcontextprotocol/protocolVersion"))
	return v == "2026-07-28"
}

func resultReply(req *classify.Message, result string) []byte {
	b := append([]byte(`{"jsonrpc":"2.0","id":`), req.ID().Raw...)
	return append(append(append(b, `,"result":`...), result...), '}')
}

func errorReply(req *classify.Message, code int, msg string) []byte {
	b := append([]byte(`{"jsonrpc":"2.0","id":`), req.ID().Raw...)
	return append(b, fmt.Sprintf(`,"error":{"code":%d,"message":%s}}`, code, Quote(msg))...)
}

// Quote is s as a JSON string, with control, bidi and format characters
// escaped (the same string to a JSON reader): the one quoting of the
// frames rpctap builds.
func Quote(s string) string {
	return string(classify.AppendSafeJSON(nil, classify.AppendJSONString(nil, s)))
}

// FileURI is the file: URI of an absolute path.
func FileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}
