package classify

// This file holds the LSP rules above the envelope (the project's
// mcp-revisions design note, from the LSP 3.17 specification): the
// lifecycle (initialize, shutdown, exit), the server capabilities the
// initialize result and dynamic registrations offer, and the documents
// the client opened.

// lspState is what the tracker keeps of an LSP session.
type lspState struct {
	caps     []byte // the initialize result's capabilities
	capsSeen bool
	shutdown bool // the client sent shutdown
	// open holds the URIs of the documents open; past maxOpen the
	// documents are not judged.
	open     map[string]struct{}
	openFull bool
}

const (
	maxOpen       = 100_000
	maxRegistered = 1024
)

// lspEarly lists what a server may send during the initialize request
// (LSP 3.17, initialize: "the server is allowed to send the
// notifications window/showMessage, window/logMessage and telemetry/event
// as well as the window/showMessageRequest request"), with the
// $/progress of the work-done token the client gave it.
var lspEarly = map[string]bool{
	"window/showMessage": true, "window/logMessage": true, "telemetry/event": true,
	"window/showMessageRequest": true, "$/progress": true,
}

// lspMessage applies the LSP rules to a request or notification.
func (t *Tracker) lspMessage(seq int64, m *Message) {
	name := m.methodName()
	if m.Dir == H2S {
		t.lspFromClient(seq, m, name)
		return
	}
	if t.initState < 2 && t.initState != 0 && !lspEarly[string(name)] {
		t.emit(seq, CodeBeforeInitialize, Error, "The server sent this before it answered initialize; LSP allows it only window/showMessage, window/logMessage, telemetry/event, window/showMessageRequest and $/progress until then.", t.initSeq)
	}
	switch {
	case m.Kind != KindRequest:
	case m.MethodIs("client/registerCapability"):
		t.lspRegistered(seq, m)
	case m.MethodIs("client/unregisterCapability"):
		t.lspUnregistered(m)
	}
}

func (t *Tracker) lspFromClient(seq int64, m *Message, name []byte) {
	if seq == t.initSeq && m.MethodIs("initialize") {
		params := m.Params()
		if caps := Member(params, "capabilities"); caps != nil && len(caps) <= maxCaps {
			t.caps.lspClientCaps = append(t.caps.lspClientCaps[:0], caps...)
			t.caps.lspClientCapsSeq = seq
		}
		t.clientInfo(seq, Member(params, "clientInfo"), "initialize request")
	}
	exit := m.MethodIs("exit")
	switch {
	case exit && !t.lsp.shutdown:
		t.emit(seq, CodeExitWithoutShutdown, Warn, "The client sent exit with no shutdown request before it; LSP: the server then exits with code 1, as after a crash.", 0)
	case exit:
	case t.lsp.shutdown:
		t.emit(seq, CodeAfterShutdown, Error, "The client sent this after its shutdown request; LSP: after shutdown a client sends nothing but exit, and a server answers requests with InvalidRequest.", 0)
	case m.MethodIs("initialize"):
	case t.initState < 2:
		t.emit(seq, CodeBeforeInitialize, Error, "The client sent this before the server answered initialize; LSP: until the InitializeResult, a client sends no other request or notification.", t.initSeq)
	}
	if m.MethodIs("shutdown") && m.Kind == KindRequest {
		t.lsp.shutdown = true
	}
	if m.Kind == KindNotification {
		switch {
		case m.MethodIs("textDocument/didOpen"):
			t.opened(Member(m.Params(), "textDocument"), true)
		case m.MethodIs("textDocument/didClose"):
			t.opened(Member(m.Params(), "textDocument"), false)
		}
		return
	}
	if provider, ok := lspProviders[string(name)]; ok && t.lsp.capsSeen && !present(Member(t.lsp.caps, provider)) {
		if !t.registeredMethod(name) {
			t.emit(seq, CodeCapabilityNotAdvertised, Warn, "The client sends "+m.Method()+", but the server's capabilities (its initialize result) have no "+provider+", and it did not register the method (client/registerCapability); LSP: a client sends only the requests the server offers.", 0)
		}
	}
	if t.initState != 0 && !t.lsp.openFull && m.methodHasPrefix("textDocument/") {
		uri, ok := rawText(Member(Member(m.Params(), "textDocument"), "uri"))
		if _, open := t.lsp.open[string(uri)]; ok && !open {
			t.emit(seq, CodeUnknownDocument, Warn, "The request names a document that no textDocument/didOpen opened (or that didClose closed); LSP: a server knows the text of the documents the client opened, and reads any other from disk, if at all.", 0)
		}
	}
}

// opened notes a document opened (didOpen) or closed (didClose).
func (t *Tracker) opened(doc []byte, open bool) {
	uri, ok := StringValue(Member(doc, "uri"))
	if !ok || t.lsp.openFull {
		return
	}
	if t.lsp.open == nil {
		t.lsp.open = map[string]struct{}{}
	}
	if !open {
		delete(t.lsp.open, uri)
		return
	}
	if len(t.lsp.open) >= maxOpen {
		t.lsp.openFull, t.lsp.open = true, nil
		return
	}
	t.lsp.open[uri] = struct{}{}
}

// registeredMethod reports whether a registration of the method name
// (client/registerCapability) remains that no client/unregisterCapability
// took back.
func (t *Tracker) registeredMethod(name []byte) bool {
	for _, r := range t.caps.registrations {
		if r.Method == string(name) {
			return true
		}
	}
	return false
}

// lspAnswer takes the server's answer to initialize: its capabilities.
func (t *Tracker) lspAnswer(seq int64, m *Message, f *flight) {
	if f.seq != t.initSeq || f.dir != H2S {
		return
	}
	if caps := Member(m.Result(), "capabilities"); caps != nil && len(caps) <= maxCaps {
		t.lsp.caps = append(t.lsp.caps[:0], caps...)
		t.lsp.capsSeen, t.caps.lspCapsSeq = true, seq
	}
	t.serverIdentity(seq, Member(m.Result(), "serverInfo"), "initialize result")
}
