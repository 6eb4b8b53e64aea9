package classify

// This file is the one table of which MCP method each protocol revision
// has, and for which sender. Its source is the MCP specification
// repository (github.com/modelcontextprotocol/modelcontextprotocol):
// the ClientRequest, ServerRequest, ClientNotification and
// ServerNotification unions of schema/<revision>/schema.ts, and each
// revision's docs/specification/<revision>/changelog.mdx for what moved
// out of the core (the tasks methods of 2025-11-25 became the
// io.modelcontextprotocol/tasks extension in 2026-07-28).

// revision is an MCP protocol revision the tracker knows; revUnknown
// means no revision rule applies (never guess).
type revision uint8

const (
	revUnknown revision = iota
	rev20241105
	rev20250326
	rev20250618
	rev20251125
	rev20260728
	revLast = rev20260728
)

var revisionNames = [...]string{
	rev20241105: "2024-11-05",
	rev20250326: "2025-03-26",
	rev20250618: "2025-06-18",
	rev20251125: "2025-11-25",
	rev20260728: "2026-07-28",
}

func (r revision) String() string {
	if r == revUnknown || int(r) >= len(revisionNames) {
		return "unknown"
	}
	return revisionNames[r]
}

// parseRevision reads a protocol version string (raw JSON or decoded);
// anything but a known revision is revUnknown.
func parseRevision(v []byte) revision {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	for r := rev20241105; r <= revLast; r++ {
		if string(v) == revisionNames[r] {
			return r
		}
	}
	return revUnknown
}

// span of revisions, from and to inclusive; the zero span is none.
type revSpan struct{ from, to revision }

func (s revSpan) has(r revision) bool { return s.from != revUnknown && s.from <= r && r <= s.to }

// mcpMethod says in which revisions each sender may send a method.
type mcpMethod struct {
	name         string
	client       revSpan // sent by the client (h2s)
	server       revSpan // sent by the server (s2h)
	notification bool
	// extension: from the revision after the span on, the method lives in
	// an extension, not the core: its absence is no removal.
	extension bool
	// gone says, from the changelog of the revision that removed the
	// method, what took its place.
	gone string
	// need is the capability the method needs (from mcpCapNeeds), or nil.
	need *capNeed
}

var (
	allRevs   = revSpan{rev20241105, revLast}
	untilHS   = revSpan{rev20241105, rev20251125} // the revisions with the initialize handshake
	only1125  = revSpan{rev20251125, rev20251125}
	stateless = revSpan{rev20260728, revLast}
)

// mcpMethodTable is written from the schema unions of each revision.
var mcpMethodTable = []mcpMethod{
	// ClientRequest
	{name: "initialize", client: untilHS, gone: "2026-07-28 has no handshake: each request carries its revision and capabilities in _meta"},
	{name: "ping", client: untilHS, server: untilHS, gone: "the changelog of 2026-07-28 removes ping"},
	{name: "completion/complete", client: allRevs},
	{name: "logging/setLevel", client: untilHS, gone: "a request sets its own log level with io.modelcontextprotocol/logLevel in _meta"},
	{name: "prompts/get", client: allRevs},
	{name: "prompts/list", client: allRevs},
	{name: "resources/list", client: allRevs},
	{name: "resources/templates/list", client: allRevs},
	{name: "resources/read", client: allRevs},
	{name: "resources/subscribe", client: untilHS, gone: "subscriptions/listen replaces it"},
	{name: "resources/unsubscribe", client: untilHS, gone: "subscriptions/listen replaces it"},
	{name: "tools/call", client: allRevs},
	{name: "tools/list", client: allRevs},
	{name: "server/discover", client: stateless},
	{name: "subscriptions/listen", client: stateless},
	// 2025-11-25 tasks: both sides; tasks/get and tasks/cancel go on in
	// the tasks extension, tasks/list and tasks/result are gone.
	{name: "tasks/get", client: only1125, server: only1125, extension: true},
	{name: "tasks/cancel", client: only1125, server: only1125, extension: true},
	{name: "tasks/list", client: only1125, server: only1125, gone: "the tasks extension removes it"},
	{name: "tasks/result", client: only1125, server: only1125, gone: "the tasks extension polls with tasks/get instead"},
	// ServerRequest: in 2026-07-28 these are input requests of an
	// input_required result (multi round-trip requests), never requests.
	{name: "sampling/createMessage", server: untilHS, gone: "a server asks for it in an input_required result instead, a multi round-trip request"},
	{name: "roots/list", server: untilHS, gone: "a server asks for it in an input_required result instead, a multi round-trip request"},
	{name: "elicitation/create", server: revSpan{rev20250618, rev20251125}, gone: "a server asks for it in an input_required result instead, a multi round-trip request"},
	// ClientNotification and ServerNotification
	{name: "notifications/cancelled", client: allRevs, server: allRevs, notification: true},
	{name: "notifications/progress", client: untilHS, server: allRevs, notification: true, gone: "a client sends no progress: servers send it no requests"},
	{name: "notifications/initialized", client: untilHS, notification: true, gone: "2026-07-28 has no handshake"},
	{name: "notifications/roots/list_changed", client: untilHS, notification: true, gone: "the changelog of 2026-07-28 removes it"},
	{name: "notifications/tasks/status", client: only1125, server: only1125, notification: true, extension: true},
	{name: "notifications/message", server: allRevs, notification: true},
	{name: "notifications/resources/updated", server: allRevs, notification: true},
	{name: "notifications/resources/list_changed", server: allRevs, notification: true},
	{name: "notifications/tools/list_changed", server: allRevs, notification: true},
	{name: "notifications/prompts/list_changed", server: allRevs, notification: true},
	{name: "notifications/elicitation/complete", server: only1125, notification: true, gone: "the client learns the outcome by retrying its request"},
	{name: "notifications/subscriptions/acknowledged", server: stateless, notification: true},
}

var mcpMethodByName = func() map[string]*mcpMethod {
	m := make(map[string]*mcpMethod, len(mcpMethodTable))
	for i := range mcpMethodTable {
		spec := &mcpMethodTable[i]
		if need, ok := mcpCapNeeds[spec.name]; ok {
			spec.need = &need
		}
		m[spec.name] = spec
	}
	return m
}()

// lspProviders names, for each LSP 3.17 client request that a server
// capability gates, the member of ServerCapabilities that offers it
// (LSP 3.17, "Server Capabilities" and each request's "Server
// Capability" section).
var lspProviders = map[string]string{
	"textDocument/completion":                "completionProvider",
	"textDocument/hover":                     "hoverProvider",
	"textDocument/signatureHelp":             "signatureHelpProvider",
	"textDocument/declaration":               "declarationProvider",
	"textDocument/definition":                "definitionProvider",
	"textDocument/typeDefinition":            "typeDefinitionProvider",
	"textDocument/implementation":            "implementationProvider",
	"textDocument/references":                "referencesProvider",
	"textDocument/documentHighlight":         "documentHighlightProvider",
	"textDocument/documentSymbol":            "documentSymbolProvider",
	"textDocument/codeAction":                "codeActionProvider",
	"textDocument/codeLens":                  "codeLensProvider",
	"textDocument/documentLink":              "documentLinkProvider",
	"textDocument/documentColor":             "colorProvider",
	"textDocument/colorPresentation":         "colorProvider",
	"textDocument/formatting":                "documentFormattingProvider",
	"textDocument/rangeFormatting":           "documentRangeFormattingProvider",
	"textDocument/onTypeFormatting":          "documentOnTypeFormattingProvider",
	"textDocument/rename":                    "renameProvider",
	"textDocument/prepareRename":             "renameProvider",
	"textDocument/foldingRange":              "foldingRangeProvider",
	"textDocument/selectionRange":            "selectionRangeProvider",
	"textDocument/semanticTokens/full":       "semanticTokensProvider",
	"textDocument/semanticTokens/full/delta": "semanticTokensProvider",
	"textDocument/semanticTokens/range":      "semanticTokensProvider",
	"textDocument/inlayHint":                 "inlayHintProvider",
	"textDocument/inlineValue":               "inlineValueProvider",
	"textDocument/diagnostic":                "diagnosticProvider",
	"textDocument/prepareCallHierarchy":      "callHierarchyProvider",
	"textDocument/moniker":                   "monikerProvider",
	"textDocument/linkedEditingRange":        "linkedEditingRangeProvider",
	"textDocument/prepareTypeHierarchy":      "typeHierarchyProvider",
	"workspace/symbol":                       "workspaceSymbolProvider",
	"workspace/executeCommand":               "executeCommandProvider",
	"workspace/diagnostic":                   "diagnosticProvider",
}
