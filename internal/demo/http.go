package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// This file is the demo over Streamable HTTP: a server, an http.Handler
// rpctap demo serves behind an HTTP tap, and the steps of a scripted host
// that POSTs to the tap, each step breaking one transport rule.

// demoSession is the Mcp-Session-Id the demo's HTTP server gives.
const demoSession = "demo-session-1"

// HTTPServer is the demo's Streamable HTTP server (revision 2025-11-25
// with a session, and stateless 2026-07-28): correct, but for the tools
// whose name says how it misbehaves (broken: 500; private: 401 with a
// challenge; plain: a text/plain answer; cut: a stream that ends before
// the answer) and a notifications/roots/list_changed it answers 200.
func HTTPServer() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed) // it offers no stream: MCP allows it
			return
		case http.MethodDelete:
			w.WriteHeader(http.StatusOK)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		m := classify.Classify(body, classify.H2S, classify.MCP)
		id := string(m.ID().Raw)
		result := func(res string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":` + res + `}` }
		jsonAnswer := func(ct, frame string) {
			w.Header().Set("Content-Type", ct)
			io.WriteString(w, frame)
		}
		stateless := m.Meta() != nil
		done := `{"content":[{"type":"text","text":"done"}]}`
		if stateless {
			done = `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`
		}
		switch {
		case m.Kind == classify.KindNotification && m.MethodIs("notifications/roots/list_changed"):
			w.WriteHeader(http.StatusOK) // not 202: notification-not-accepted
		case m.Kind != classify.KindRequest:
			w.WriteHeader(http.StatusAccepted)
		case m.MethodIs("initialize"):
			w.Header().Set("Mcp-Session-Id", demoSession)
			jsonAnswer("application/json", result(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"rpctap-demo-http","version":"1"}}`))
		case m.MethodIs("server/discover"):
			jsonAnswer("application/json", result(`{"resultType":"complete","ttlMs":60000,"cacheScope":"public","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}}}`))
		case m.MethodIs("tools/list"):
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+result(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"broken","inputSchema":{"type":"object"}},{"name":"private","inputSchema":{"type":"object"}},{"name":"plain","inputSchema":{"type":"object"}},{"name":"cut","inputSchema":{"type":"object"}}]}`)+"\n\n")
		case m.MethodIs("tools/call"):
			name, _ := classify.StringValue(classify.Member(m.Params(), "name"))
			switch name {
			case "broken":
				http.Error(w, "the tool's backend is down", http.StatusInternalServerError)
			case "private":
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`)
				w.WriteHeader(http.StatusUnauthorized)
			case "plain":
				jsonAnswer("text/plain", result(done))
			case "cut":
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, ": working\n\n") // and the stream ends with no answer
			default:
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, "data: "+result(done)+"\n\n")
			}
		default:
			jsonAnswer("application/json", result(`{}`))
		}
	})
}

// httpPost is one POST of the demo's HTTP host: its body and the headers
// it sends beside the usual ones (a value "" takes a header away).
type httpPost struct {
	body    string
	headers map[string]string
}

// post sends p to the tap the host talks to and notes what came back.
func (h *Host) post(ctx context.Context, p httpPost) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(p.body))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.session != "" {
		req.Header.Set("Mcp-Session-Id", h.session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	for k, v := range p.headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	h.exchange(req)
}

// exchange sends req and notes the answer's status and first bytes.
func (h *Host) exchange(req *http.Request) {
	resp, err := h.client.Do(req)
	if err != nil {
		h.noteGot("no answer: " + classify.EscapeString(err.Error(), 80))
		return
	}
	defer resp.Body.Close()
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" && h.session == "" {
		h.session = s
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	got := strconv.Itoa(resp.StatusCode)
	if b = bytes.TrimSpace(b); len(b) > 0 {
		got += " " + classify.Escape(b, 60)
	}
	h.noteGot(got)
}

func (h *Host) noteGot(s string) {
	h.mu.Lock()
	h.got = append(h.got, s)
	h.mu.Unlock()
}

// NewHTTPHost makes the demo's HTTP host, which POSTs to url (the tap).
func NewHTTPHost(url string) *Host {
	h := &Host{w: io.Discard, profile: classify.MCP, Timeout: classify.DefaultTimeout, Note: func(string) {}, Speed: 1,
		waiting: map[string]chan []byte{}, done: make(chan struct{}), url: url, client: &http.Client{Timeout: 10 * time.Second}}
	h.out = classify.NewFrameWriter(io.Discard, classify.FramingNDJSON)
	return h
}

// rpc is a JSON-RPC request of the demo's HTTP host.
func rpc(id int, method string, params any) string {
	frame := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":` + strconv.Quote(method)
	if params != nil {
		pj, _ := json.Marshal(params)
		frame += `,"params":` + string(pj)
	}
	return frame + "}"
}

// httpMeta26 is the _meta of a stateless 2026-07-28 request of the demo host.
var httpMeta26 = map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{},
	"io.modelcontextprotocol/clientInfo": map[string]any{"name": "rpctap-demo-stateless-host", "version": "1"}}

func call26(id int, tool string) string {
	return rpc(id, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}, "_meta": httpMeta26})
}

func httpSteps() []Step {
	step := func(name, caption string, posts ...httpPost) Step {
		return Step{Name: name, Caption: caption, run: func(ctx context.Context, h *Host) {
			for _, p := range posts {
				h.post(ctx, p)
			}
		}}
	}
	callOf := func(id int, tool string) string {
		return rpc(id, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
	}
	noSession := map[string]string{"Mcp-Session-Id": "", "MCP-Protocol-Version": ""}
	return []Step{
		step("http-handshake", "The host POSTs initialize (2025-11-25); the server answers with an Mcp-Session-Id, which every later request carries with MCP-Protocol-Version. Then notifications/initialized, answered 202, and the tools.",
			httpPost{body: rpc(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"roots": map[string]any{"listChanged": true}}, "clientInfo": map[string]any{"name": "rpctap-demo-http-host", "version": "1"}})},
			httpPost{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
			httpPost{body: rpc(2, "tools/list", nil)}),
		step("http-status", "The host calls a tool whose backend is down: the server answers HTTP 500 and no JSON-RPC answer at all (http-status).",
			httpPost{body: callOf(3, "broken")}),
		step("auth-challenge", "The host calls a tool the server guards: 401 with WWW-Authenticate, which names the resource metadata to authenticate with (auth-challenge).",
			httpPost{body: callOf(4, "private")}),
		step("missing-protocol-version-header", "The host forgets MCP-Protocol-Version after the handshake: a server then assumes 2025-03-26 (missing-protocol-version-header).",
			httpPost{body: rpc(5, "tools/list", nil), headers: map[string]string{"MCP-Protocol-Version": ""}}),
		step("bad-content-type", "The host POSTs as text/plain, and the server answers a call as text/plain: MCP's HTTP transport carries JSON-RPC as application/json or text/event-stream only (bad-content-type).",
			httpPost{body: rpc(6, "tools/list", nil), headers: map[string]string{"Content-Type": "text/plain"}},
			httpPost{body: callOf(7, "plain")}),
		step("accept-missing", "The host's Accept lists application/json only: a client must accept text/event-stream too (accept-missing).",
			httpPost{body: callOf(8, "echo"), headers: map[string]string{"Accept": "application/json"}}),
		step("notification-not-accepted", "The server answers a notification with 200 and a body: a POST of notifications only is answered 202 (notification-not-accepted).",
			httpPost{body: `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`}),
		step("stream-broken", "The server opens an SSE stream for a call and closes it before the answer: the host must send the request again with a new id (stream-broken).",
			httpPost{body: callOf(9, "cut")}),
		step("http-2026", "A second host, stateless (2026-07-28), through the same tap: its own conversation. Its server/discover names another method in Mcp-Method (header-mismatch); its call has no Mcp-Name (missing-mcp-headers) and sends an Mcp-Session-Id, which that revision does not have (session-header).",
			httpPost{body: rpc(1, "server/discover", map[string]any{"_meta": httpMeta26}), headers: map[string]string{"Mcp-Session-Id": "", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}},
			httpPost{body: call26(2, "echo"), headers: map[string]string{"Mcp-Session-Id": "", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"}},
			httpPost{body: call26(3, "echo"), headers: map[string]string{"Mcp-Session-Id": "stale-1", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}},
			httpPost{body: call26(4, "echo"), headers: merge(noSession, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"})}),
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
