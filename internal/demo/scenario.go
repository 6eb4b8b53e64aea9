package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
)

// A Step is one captioned moment of a scenario.
type Step struct {
	Name string
	// Caption says what the step does and what the specs require.
	Caption string
	run     func(ctx context.Context, h *Host)
}

// Scenarios are the demo's named scenarios, for --list.
var Scenarios = []struct{ Name, About string }{
	{"tour", "a normal session, then every edge case (the default)"},
	{"session", "a normal session: handshake, tools, progress, a server request, a cancellation, a masked secret"},
	{"edge-cases", "the handshake, then every edge case of the catalog and the envelope rules"},
	{"revision-2026", "a session of MCP revision 2026-07-28: no handshake, each request names its revision in _meta"},
	{"http", "Streamable HTTP through an HTTP tap: a session of 2025-11-25 and a stateless 2026-07-28 host, each step breaking one transport rule"},
}

// Steps returns the steps of a scenario: one of Scenarios, or the name of
// one step (the handshake, then that step).
func Steps(scenario string, lsp bool) ([]Step, error) {
	session, edges := sessionSteps(lsp), edgeSteps(lsp)
	switch scenario {
	case "", "tour":
		return append(session, edges...), nil
	case "session":
		return session, nil
	case "edge-cases":
		return append(session[:1:1], edges...), nil
	case "revision-2026":
		if lsp {
			return nil, fmt.Errorf("the revision-2026 scenario is an MCP session; run it without --lsp")
		}
		return revision2026Steps(), nil
	case "http":
		if lsp {
			return nil, fmt.Errorf("the http scenario is MCP over Streamable HTTP; run it without --lsp")
		}
		return httpSteps(), nil
	}
	for _, s := range append(append(session[1:], edges...), soloSteps(lsp)...) {
		if s.Name == scenario {
			return []Step{session[0], s}, nil
		}
	}
	return nil, fmt.Errorf("there is no demo scenario or step named %s; rpctap demo --list lists them", classify.EscapeString(scenario, 40))
}

// StepNames lists every step a --scenario may name.
func StepNames(lsp bool) []string {
	var names []string
	for _, s := range append(append(sessionSteps(lsp), edgeSteps(lsp)...), soloSteps(lsp)...) {
		names = append(names, s.Name)
	}
	return names
}

func sessionSteps(lsp bool) []Step {
	if lsp {
		return lspSessionSteps()
	}
	return []Step{
		{Name: "handshake", Caption: "The host opens the session with initialize and, without waiting for its answer, asks for tools/list: MCP lets a host send only ping before the initialize answer (before-initialize). Then it sends notifications/initialized.",
			run: func(ctx context.Context, h *Host) {
				_, init := h.start("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"roots": map[string]any{}},
					"clientInfo": map[string]any{"name": "rpctap-demo-host", "version": "1"}})
				_, list := h.start("tools/list", nil)
				h.await(ctx, init, 10*time.Second)
				h.await(ctx, list, 10*time.Second)
				h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}},
		{Name: "tools", Caption: "The host lists the server's tools, resources and prompts, as a host does once the session is open.",
			run: func(ctx context.Context, h *Host) {
				h.request(ctx, "tools/list", nil)
				h.request(ctx, "resources/list", nil)
				h.request(ctx, "prompts/list", nil)
			}},
		{Name: "echo", Caption: "An ordinary tools/call: the answer carries the request's id, and the view pairs them with the latency.",
			run: func(ctx context.Context, h *Host) {
				h.call(ctx, "echo", map[string]any{"message": "hello through the tap"})
			}},
		progressStep("The server reports progress three times before it answers: each notifications/progress names the request's progressToken and restarts its timeout."),
		{Name: "list-changed", Caption: "The server tells the host that its tool list changed: a notification, never answered; a host lists the tools again.",
			run: func(ctx context.Context, h *Host) { h.call(ctx, "reload", nil); h.request(ctx, "tools/list", nil) }},
		{Name: "server-request", Caption: "A server may ask the host too: roots/list goes the other way, with the server's own id, and the host answers it before the tool's answer comes.",
			run: func(ctx context.Context, h *Host) { h.call(ctx, "roots", nil) }},
		cancelStep(`The host cancels a slow call with notifications/cancelled: the server stops and sends no answer (MCP allows an answer after a cancellation, but needs none).`, false),
		secretStep(),
	}
}

func lspSessionSteps() []Step {
	return []Step{
		{Name: "handshake", Caption: "The editor opens the session: initialize, its answer with the server's capabilities, then the initialized notification. Every frame has a Content-Length header.",
			run: func(ctx context.Context, h *Host) {
				h.request(ctx, "initialize", map[string]any{"processId": nil, "rootUri": "file:///home/demo/project", "capabilities": map[string]any{}})
				h.send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
			}},
		{Name: "hover", Caption: "The editor opens a document and asks for a hover on it: a request with the document's URI and a position.",
			run: func(ctx context.Context, h *Host) {
				h.send(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///home/demo/project/main.go","languageId":"go","version":1,"text":"package main\n\nfunc main() {}\n"}}}`)
				h.request(ctx, "textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///home/demo/project/main.go"}, "position": map[string]any{"line": 2, "character": 5}})
			}},
		progressStep("The server reports work-done progress three times ($/progress with the request's token) before it answers the command."),
		{Name: "server-request", Caption: "A server may ask the editor too: workspace/configuration goes the other way, with the server's own id, and the editor answers it.",
			run: func(ctx context.Context, h *Host) { h.call(ctx, "roots", nil) }},
		cancelStep(`The editor cancels a slow command with $/cancelRequest: the server stops; LSP still wants an answer to a cancelled request, and this server sends none.`, true),
		secretStep(),
	}
}

// revision2026Steps are a session of MCP revision 2026-07-28: the host
// asks server/discover instead of a handshake, and every request carries
// its revision and capabilities in _meta.
func revision2026Steps() []Step {
	return []Step{
		{Name: "discover", Caption: "A 2026-07-28 host opens no session: it asks server/discover what revisions and capabilities the server has, and names its revision and capabilities in each request's _meta.",
			run: func(ctx context.Context, h *Host) {
				h.send(`{"jsonrpc":"2.0","id":"demo-discover","method":"server/discover","params":{` + meta26 + `}}`)
				h.settle(ctx)
			}},
		{Name: "log-without-level", Caption: "The server logs (notifications/message) while a call is in flight that set no io.modelcontextprotocol/logLevel: 2026-07-28 sends log messages only to a request that asked for them.",
			run: func(ctx context.Context, h *Host) {
				h.send(`{"jsonrpc":"2.0","id":"demo-log","method":"tools/call","params":{` + meta26 + `,"name":"misbehave","arguments":{"case":"log-without-level"}}}`)
				h.settle(ctx)
			}},
	}
}

// soloSteps are steps that end the session in a way no step may follow,
// and so are in no scenario: each runs only when --scenario names it.
func soloSteps(lsp bool) []Step {
	if !lsp {
		return nil
	}
	return []Step{{Name: "exit-without-shutdown", Caption: "The editor sends exit without asking for shutdown first: LSP wants shutdown, then exit; a server that exits so ends with code 1, and may lose what shutdown would have saved.",
		run: func(ctx context.Context, h *Host) {
			h.send(`{"jsonrpc":"2.0","method":"exit"}`)
			select {
			case <-h.Done():
			case <-time.After(10 * time.Second):
			case <-ctx.Done():
			}
		}}}
}

func progressStep(caption string) Step {
	return Step{Name: "progress", Caption: caption, run: func(ctx context.Context, h *Host) {
		method, params := h.callParams("count", map[string]any{"n": 3}, "count-"+h.id())
		h.request(ctx, method, params)
	}}
}

func cancelStep(caption string, lsp bool) Step {
	return Step{Name: "cancel", Caption: caption, run: func(ctx context.Context, h *Host) {
		method, params := h.callParams("slow", map[string]any{"ms": 8000}, "")
		id, _ := h.start(method, params)
		h.pause(ctx, 300*time.Millisecond)
		if lsp {
			h.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":` + id + `}}`)
		} else {
			h.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"the user pressed stop"}}`)
		}
		h.settle(ctx)
	}}
}

func secretStep() Step {
	return Step{Name: "secret", Caption: "The server puts an API key in its answer. The host still gets it (the tap never changes the wire); the session file and this view show it masked (redacted).",
		run: func(ctx context.Context, h *Host) { h.call(ctx, "config", nil) }}
}

// edgeSteps are every catalog entry, then the envelope rules the catalog
// does not reach.
func edgeSteps(lsp bool) []Step {
	var steps []Step
	for _, e := range inject.Catalog() {
		if lsp && e.FromSession() {
			continue // an MCP revision's rule, or an MCP tool's
		}
		who := "The host sends"
		if e.Dir == classify.S2H {
			who = "The server answers a call with"
		}
		steps = append(steps, Step{Name: e.Name, Caption: fmt.Sprintf("%s %s. %s", who, strings.ReplaceAll(e.Name, "-", " "), e.Rule),
			run: func(ctx context.Context, h *Host) { h.edge(ctx, e) }})
	}
	raw := func(name, frame, caption string) Step {
		return Step{Name: name, Caption: caption, run: func(ctx context.Context, h *Host) { h.send(frame); h.settle(ctx) }}
	}
	misbehave := func(name, caption string) Step {
		return Step{Name: name, Caption: caption, run: func(ctx context.Context, h *Host) {
			method, params := h.callParams("misbehave", map[string]any{"case": name}, "")
			h.start(method, params)
			h.settle(ctx)
		}}
	}
	if lsp {
		steps = append(steps, Step{Name: "bad-header", Caption: "The editor sends a header block with no Content-Length: the receiver cannot tell where a body ends. A strict server answers -32700 Parse error and reads on from the next header.",
			run: func(ctx context.Context, h *Host) {
				h.out.WriteRaw([]byte("Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"))
				h.settle(ctx)
			}})
	} else {
		steps = append(steps, Step{Name: "blank-line", Caption: "The host sends an empty line: no frame at all. A reader skips it; rpctap warns, since MCP's stdio transport carries only messages.",
			run: func(ctx context.Context, h *Host) { h.out.WriteRaw([]byte("\n")); h.settle(ctx) }})
	}
	if lsp {
		steps = append(steps, Step{Name: "unknown-document", Caption: "The editor asks for a hover in a document it never opened: the server knows only the text of the documents opened with textDocument/didOpen, and reads any other from disk, if at all.",
			run: func(ctx context.Context, h *Host) {
				h.request(ctx, "textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///home/demo/project/never-opened.go"}, "position": map[string]any{"line": 0, "character": 0}})
			}})
	} else {
		steps = append(steps, revisionSteps(raw, misbehave)...)
	}
	steps = append(steps,
		raw("bad-jsonrpc", `{"jsonrpc":"1.0","id":"demo-v1","method":"ping"}`, `The host sends a request with "jsonrpc": "1.0": only "2.0" is JSON-RPC 2.0. A strict server answers -32600 Invalid Request.`),
		raw("reserved-method", `{"jsonrpc":"2.0","id":"demo-rpc","method":"rpc.discover"}`, `The host calls rpc.discover: methods beginning with "rpc." are reserved for JSON-RPC itself. A server that has no such method answers -32601.`),
		misbehave("no-result-or-error", `The server answers with neither result nor error: JSON-RPC requires exactly one of them, so the host cannot tell success from failure.`),
		misbehave("unmatched-response", `The server sends an answer to an id the host never used: a host drops it (or fails); the tracker flags it unmatched.`),
		misbehave("duplicate-response", `The server answers the same request twice: a request gets one answer; the second matches nothing in flight.`),
		Step{Name: "late-response", Caption: "The server answers after the request's timeout: rpctap flags the request timed out while it waits, then pairs the late answer with it.",
			run: func(ctx context.Context, h *Host) {
				method, params := h.callParams("slow", map[string]any{"ms": int((h.Timeout + time.Second) / time.Millisecond)}, "")
				_, ch := h.start(method, params)
				h.await(ctx, ch, h.Timeout+10*time.Second)
			}},
	)
	if lsp {
		// Next to last: nothing but exit may follow shutdown.
		steps = append(steps, Step{Name: "after-shutdown", Caption: "The editor sends shutdown, then one more request: after shutdown an editor sends nothing but exit, and a server refuses any request with InvalidRequest.",
			run: func(ctx context.Context, h *Host) {
				h.request(ctx, "shutdown", nil)
				h.request(ctx, "textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": "file:///home/demo/project/main.go"}, "position": map[string]any{"line": 2, "character": 5}})
			}})
	}
	steps = append(steps,
		// Last: the session ends here.
		Step{Name: "exit-with-work-owed", Caption: "The host calls a tool and the server exits before it answers: the session ends with the call owed (unanswered-at-end). A host would wait on it until its own timeout; nothing can answer it any more.",
			run: func(ctx context.Context, h *Host) {
				method, params := h.callParams("quit", nil, "")
				h.start(method, params)
				select {
				case <-h.Done():
				case <-time.After(10 * time.Second):
				case <-ctx.Done():
				}
			}},
	)
	return steps
}

// listedTools are the tools the demo server lists, as a host that listed
// them knows them.
func listedTools() []inject.Tool {
	var tools []inject.Tool
	for _, t := range Tools {
		schema, _ := json.Marshal(toolSchema(t.Name))
		tools = append(tools, inject.Tool{Name: t.Name, Schema: schema})
	}
	return tools
}

// edge runs a catalog entry: the host sends its frames, or has the server
// send them (an entry meant for a host), with a request in flight for the
// entries that name one.
func (h *Host) edge(ctx context.Context, e inject.Entry) {
	if e.Dir == classify.S2H {
		method, params := h.callParams("misbehave", map[string]any{"case": e.Name}, "")
		h.start(method, params)
		h.settle(ctx)
		return
	}
	p := inject.Params{Tools: listedTools()} // the session is of 2025-06-18: no _meta
	var inFlight chan []byte
	if e.NeedsID {
		method, params := h.callParams("slow", map[string]any{"ms": 1500}, "")
		p.ID, inFlight = h.start(method, params)
		h.pause(ctx, 200*time.Millisecond)
	}
	frames, err := e.Frames(p)
	if err != nil {
		return
	}
	for _, f := range frames {
		h.out.WriteFrame(f)
	}
	h.settle(ctx)
	if inFlight != nil && e.Name != "cancel-in-flight" {
		h.await(ctx, inFlight, 5*time.Second)
	}
}

// meta26 is the _meta of a request of MCP revision 2026-07-28.
const meta26 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// revisionSteps are the rules of MCP revisions above the envelope: each
// 2026-07-28 request names its own revision in _meta, so it is judged by
// it inside this 2025-06-18 session.
func revisionSteps(raw func(name, frame, caption string) Step, misbehave func(name, caption string) Step) []Step {
	return []Step{
		raw("deprecated-feature", `{"jsonrpc":"2.0","id":"demo-log-2026","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"info"},"name":"echo","arguments":{"message":"with logs"}}}`, `The host asks for log messages with io.modelcontextprotocol/logLevel: 2026-07-28 deprecates logging (log to stderr or OpenTelemetry instead).`),
		raw("method-not-in-revision", `{"jsonrpc":"2.0","id":"demo-listen","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`, `The host sends subscriptions/listen in a 2025-06-18 session: the method came in 2026-07-28, and a server of this revision does not know it.`),
		raw("cancel-unknown", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"demo-nothing-in-flight"}}`, `The host cancels a request that is not in flight: the server ignores the cancellation.`),
		{Name: "unknown-tool", Caption: "The host calls a tool the server never listed: the server answers with an error.",
			run: func(ctx context.Context, h *Host) { h.call(ctx, "no-such-tool", nil) }},
		misbehave("tool-error", `The tool fails: its result has isError true, a failure the model reads, not a protocol error.`),
		{Name: "progress-not-increasing", Caption: "The server reports progress that goes back: MCP wants each progress value greater than the one before for its token.",
			run: func(ctx context.Context, h *Host) {
				method, params := h.callParams("misbehave", map[string]any{"case": "progress-not-increasing"}, "back-"+h.id())
				h.request(ctx, method, params)
			}},
		{Name: "tool-result-invalid", Caption: "The host calls forecast, listed with an outputSchema that wants a number for temp: the server's structuredContent has a string there, and a host that validates refuses the result.",
			run: func(ctx context.Context, h *Host) { h.call(ctx, "forecast", nil) }},
		{Name: "mrtr-mismatch", Caption: "A 2026-07-28 call asks the host to confirm (input_required, with a requestState): the host's retry answers no input request and sends back another requestState, so the server cannot finish the call.",
			run: func(ctx context.Context, h *Host) {
				h.send(`{"jsonrpc":"2.0","id":"demo-confirm","method":"tools/call","params":{` + meta26Elicit + `,"name":"confirm","arguments":{}}}`)
				h.settle(ctx)
				h.send(`{"jsonrpc":"2.0","id":"demo-confirm-retry","method":"tools/call","params":{` + meta26Elicit + `,"name":"confirm","arguments":{},"inputResponses":{},"requestState":"demo-state-0"}}`)
				h.settle(ctx)
			}},
		{Name: "tool-drift", Caption: "The server's tool list changes: echo's description now says more, which a host that approved echo never saw (tool-drift), and a new tool has an array for its inputSchema, where arguments are always an object (bad-tool-schema).",
			run: func(ctx context.Context, h *Host) {
				h.call(ctx, "misbehave", map[string]any{"case": "tool-drift"})
				h.request(ctx, "tools/list", nil)
			}},
	}
}

// meta26Elicit is the _meta of a 2026-07-28 request from a host that can
// answer elicitations.
const meta26Elicit = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
