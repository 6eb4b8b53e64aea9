package classify

import "strings"

// Method names the profiles know. They decide notification-as-request and
// request-as-notification, and let Method return well-known names without
// allocating.

var mcpRequests = []string{
	"initialize", "ping", "server/discover",
	"tools/list", "tools/call",
	"resources/list", "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe",
	"prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
	"sampling/createMessage", "roots/list", "elicitation/create",
	"tasks/get", "tasks/list", "tasks/result", "tasks/cancel",
}

var mcpNotifications = []string{
	"notifications/initialized", "notifications/cancelled", "notifications/progress", "notifications/message",
	"notifications/resources/updated", "notifications/resources/list_changed",
	"notifications/tools/list_changed", "notifications/prompts/list_changed",
	"notifications/roots/list_changed", "notifications/elicitation/complete", "notifications/tasks/status",
}

var lspRequests = []string{
	"initialize", "shutdown",
	"textDocument/completion", "textDocument/hover", "textDocument/signatureHelp", "textDocument/declaration",
	"textDocument/definition", "textDocument/typeDefinition", "textDocument/implementation", "textDocument/references",
	"textDocument/documentHighlight", "textDocument/documentSymbol", "textDocument/codeAction", "textDocument/codeLens",
	"textDocument/documentLink", "textDocument/documentColor", "textDocument/colorPresentation", "textDocument/formatting",
	"textDocument/rangeFormatting", "textDocument/onTypeFormatting", "textDocument/rename", "textDocument/prepareRename",
	"textDocument/foldingRange", "textDocument/selectionRange", "textDocument/semanticTokens/full",
	"textDocument/semanticTokens/full/delta", "textDocument/semanticTokens/range", "textDocument/inlayHint",
	"textDocument/inlineValue", "textDocument/diagnostic", "textDocument/prepareCallHierarchy", "textDocument/moniker",
	"textDocument/linkedEditingRange", "textDocument/willSaveWaitUntil", "textDocument/prepareTypeHierarchy",
	"completionItem/resolve", "codeAction/resolve", "codeLens/resolve", "documentLink/resolve", "inlayHint/resolve",
	"workspace/symbol", "workspace/executeCommand", "workspace/configuration", "workspace/workspaceFolders",
	"workspace/applyEdit", "workspace/willCreateFiles", "workspace/willRenameFiles", "workspace/willDeleteFiles",
	"workspace/diagnostic", "workspace/semanticTokens/refresh", "workspace/codeLens/refresh",
	"workspace/inlayHint/refresh", "workspace/inlineValue/refresh", "workspace/diagnostic/refresh",
	"window/showMessageRequest", "window/showDocument", "window/workDoneProgress/create",
	"client/registerCapability", "client/unregisterCapability",
	"callHierarchy/incomingCalls", "callHierarchy/outgoingCalls", "typeHierarchy/supertypes", "typeHierarchy/subtypes",
}

var lspNotifications = []string{
	"initialized", "exit",
	"textDocument/didOpen", "textDocument/didChange", "textDocument/didClose", "textDocument/didSave",
	"textDocument/willSave", "textDocument/publishDiagnostics",
	"workspace/didChangeConfiguration", "workspace/didChangeWatchedFiles", "workspace/didChangeWorkspaceFolders",
	"workspace/didCreateFiles", "workspace/didRenameFiles", "workspace/didDeleteFiles",
	"window/showMessage", "window/logMessage", "window/workDoneProgress/cancel", "telemetry/event",
	"$/cancelRequest", "$/progress", "$/setTrace", "$/logTrace",
	"notebookDocument/didOpen", "notebookDocument/didChange", "notebookDocument/didSave", "notebookDocument/didClose",
}

type methodSets struct {
	all                    map[string]string
	mcpRequest, lspRequest map[string]bool
	lspNotification        map[string]bool
}

var methods = func() methodSets {
	ms := methodSets{all: map[string]string{}, mcpRequest: map[string]bool{}, lspRequest: map[string]bool{}, lspNotification: map[string]bool{}}
	for _, list := range [][]string{mcpRequests, mcpNotifications, lspRequests, lspNotifications} {
		for _, name := range list {
			ms.all[name] = name
		}
	}
	for _, n := range mcpRequests {
		ms.mcpRequest[n] = true
	}
	for _, n := range lspRequests {
		ms.lspRequest[n] = true
	}
	for _, n := range lspNotifications {
		ms.lspNotification[n] = true
	}
	return ms
}()

// knownMethod returns the interned name for raw when it is well known.
func knownMethod(raw []byte) (string, bool) {
	name, ok := methods.all[string(raw)]
	return name, ok
}

// isNotificationMethod reports whether the message's method names a
// notification: notifications/…, $/…, initialized, exit, and under the lsp
// profile the notifications LSP defines.
func isNotificationMethod(m *Message, p Profile) bool {
	if m.methodHasPrefix("notifications/") || m.methodHasPrefix("$/") || m.MethodIs("initialized") || m.MethodIs("exit") {
		return true
	}
	return p == LSP && methods.lspNotification[string(m.methodName())]
}

// isRequestMethod reports whether the profile knows the method as a request.
func isRequestMethod(m *Message, p Profile) bool {
	switch p {
	case MCP:
		return methods.mcpRequest[string(m.methodName())]
	case LSP:
		return methods.lspRequest[string(m.methodName())]
	}
	return false
}

// IsNotificationName reports whether a method name is one a notification
// uses, by the same rule as finding notification-as-request.
func IsNotificationName(name string, p Profile) bool {
	return strings.HasPrefix(name, "notifications/") || strings.HasPrefix(name, "$/") ||
		name == "initialized" || name == "exit" || (p == LSP && methods.lspNotification[name])
}

// methodName is the method's decoded bytes (aliasing the frame when it has
// no escapes), or nil when the method is not a string.
func (m *Message) methodName() []byte {
	if m.method.typ != valString {
		return nil
	}
	raw := m.method.of(m.Frame)
	raw = raw[1 : len(raw)-1]
	if m.methodEscaped {
		raw, _ = unescape(nil, raw)
	}
	return raw
}
