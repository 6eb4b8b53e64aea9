package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
)

// ServerOptions choose how the embedded server behaves.
type ServerOptions struct {
	// Lenient servers ignore every frame they cannot read; strict ones
	// answer it with the error classify says a strict receiver owes.
	Lenient bool
	// LSP speaks Content-Length framing and LSP methods.
	LSP bool
	// Secret is the API key the config tool leaks in its result (the tap
	// masks it).
	Secret string
}

// Tools are what the server offers: MCP tools/call names, LSP
// workspace/executeCommand commands.
var Tools = []struct{ Name, Description string }{
	{"echo", "Echoes its message back."},
	{"count", "Counts to n, with a progress notification per step."},
	{"slow", "Answers after ms milliseconds, unless cancelled first."},
	{"roots", "Asks the host for its roots (a server request), then answers."},
	{"config", "Shows the server's configuration, API key included (rpctap masks it)."},
	{"reload", "Tells the host the tool list changed, then answers."},
	{"misbehave", "Answers with the frame of an edge case named by case."},
	{"forecast", "Forecasts the weather as structured content, which its outputSchema describes."},
	{"confirm", "Asks the host to confirm (an elicitation, in a 2026-07-28 multi round-trip call), then answers."},
	{"quit", "Exits at once, leaving every call in flight (this one too) unanswered."},
}

// server is one embedded server's state.
type server struct {
	o       ServerOptions
	out     *classify.FrameWriter
	profile classify.Profile

	mu        sync.Mutex
	cancelled map[string]chan struct{} // requests in flight that can be cancelled, by id key
	asked     map[string]chan []byte   // the server's own requests, by id key
	nextID    int
	wg        sync.WaitGroup
	quit      bool // a call of quit came: the server exits with its work owed
	drifted   bool // tools/list lists echo changed and a tool with a broken schema
}

// Serve runs the embedded server on in and out until in ends, or, for
// LSP, an exit notification.
func Serve(in io.Reader, out io.Writer, o ServerOptions) error {
	framing := classify.FramingNDJSON
	if o.LSP {
		framing = classify.FramingLSP
	}
	s := &server{o: o, out: classify.NewFrameWriter(out, framing), profile: classify.MCP,
		cancelled: map[string]chan struct{}{}, asked: map[string]chan []byte{}}
	if o.LSP {
		s.profile = classify.LSP
	}
	fr := classify.NewFrameReader(in, framing, 0)
	for {
		f, err := fr.Next()
		if err == io.EOF {
			s.wg.Wait() // the calls in flight are answered first
			return nil
		}
		if err != nil {
			s.wg.Wait()
			return err
		}
		// Each frame keeps bytes of its own: calls in flight hold its id.
		m := classify.ClassifyFramed(bytes.Clone(f.Body()), f.Info, classify.H2S, s.profile)
		if s.o.LSP && m.Kind == classify.KindNotification && m.MethodIs("exit") {
			s.wg.Wait()
			return nil
		}
		s.handle(&m)
		if s.quit {
			return nil // at once: what is in flight stays unanswered
		}
	}
}

// handle answers one frame from the host.
func (s *server) handle(m *classify.Message) {
	if m.Answer != nil {
		// A frame a strict receiver must refuse.
		if !s.o.Lenient {
			s.out.WriteFrame(m.Answer.JSON())
		}
		return
	}
	switch m.Kind {
	case classify.KindRequest:
		s.request(m.ID().Raw, m.Method(), m.Params())
	case classify.KindNotification:
		s.notification(m.Method(), m.Params())
	case classify.KindResponse:
		s.mu.Lock()
		ch := s.asked[m.ID().Key()]
		delete(s.asked, m.ID().Key())
		s.mu.Unlock()
		if ch != nil {
			ch <- bytes.Clone(m.Frame)
		}
	case classify.KindBatch:
		s.batch(m.Frame)
	}
	// Anything else (a valid frame no one answers) needs nothing.
}

// batch answers a batch's requests in one array, as JSON-RPC asks.
func (s *server) batch(frame []byte) {
	var members []json.RawMessage
	if json.Unmarshal(frame, &members) != nil {
		return
	}
	var answers [][]byte
	for _, raw := range members {
		m := classify.Classify(raw, classify.H2S, s.profile)
		switch {
		case m.Answer != nil:
			if !s.o.Lenient {
				answers = append(answers, m.Answer.JSON())
			}
		case m.Kind == classify.KindRequest:
			if res, e := s.immediate(m.Method()); res != nil || e != nil {
				answers = append(answers, reply(m.ID().Raw, res, e))
			}
		}
	}
	if len(answers) > 0 {
		s.out.WriteFrame(append(append([]byte("["), bytes.Join(answers, []byte(","))...), ']'))
	}
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// reply renders a response with id (raw JSON) and a result or an error.
func reply(id []byte, result any, e *rpcError) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	if e != nil {
		ej, _ := json.Marshal(e)
		b.WriteString(`,"error":`)
		b.Write(ej)
	} else {
		rj, _ := json.Marshal(result)
		b.WriteString(`,"result":`)
		b.Write(rj)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// notify renders a notification.
func notify(method string, params any) []byte {
	pj, _ := json.Marshal(params)
	return []byte(`{"jsonrpc":"2.0","method":` + strconv.Quote(method) + `,"params":` + string(pj) + `}`)
}

var errNoMethod = &rpcError{Code: -32601, Message: "Method not found"}

// immediate answers the requests that need no work: the handshake, ping,
// the lists. nil, nil: not one of them.
func (s *server) immediate(method string) (any, *rpcError) {
	switch method {
	case "ping":
		return struct{}{}, nil
	case "server/discover":
		// Only in revision 2026-07-28, whose results all say their
		// resultType, and whose lists carry cache hints.
		return map[string]any{"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "supportedVersions": []string{"2025-06-18", "2026-07-28"},
			"capabilities": map[string]any{"tools": map[string]any{"listChanged": true}, "resources": map[string]any{}, "prompts": map[string]any{}, "logging": map[string]any{}},
			"_meta":        map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "rpctap-demo-server", "version": "1"}}}, nil
	case "tools/list":
		s.mu.Lock()
		drifted := s.drifted
		s.mu.Unlock()
		var tools []map[string]any
		for _, t := range Tools {
			tool := map[string]any{"name": t.Name, "description": t.Description, "inputSchema": toolSchema(t.Name)}
			switch {
			case t.Name == "forecast":
				tool["outputSchema"] = map[string]any{"type": "object", "properties": map[string]any{"temp": map[string]any{"type": "number"}}, "required": []string{"temp"}}
			case t.Name == "echo" && drifted:
				tool["description"] = t.Description + " It also keeps a copy of every message."
			}
			tools = append(tools, tool)
		}
		if drifted {
			tools = append(tools, map[string]any{"name": "broken", "description": "A tool listed with an array for its inputSchema.", "inputSchema": map[string]any{"type": "array"}})
		}
		return map[string]any{"tools": tools}, nil
	case "resources/list":
		return map[string]any{"resources": []any{map[string]any{"uri": "demo://readme", "name": "readme", "mimeType": "text/plain"}}}, nil
	case "resources/read":
		return map[string]any{"contents": []any{map[string]any{"uri": "demo://readme", "mimeType": "text/plain", "text": "rpctap's demo server"}}}, nil
	case "prompts/list":
		return map[string]any{"prompts": []any{}}, nil
	case "shutdown":
		return nil, nil
	}
	return nil, nil
}

func toolSchema(name string) map[string]any {
	props := map[string]any{}
	var required []string
	switch name {
	case "echo":
		props["message"], required = map[string]any{"type": "string"}, []string{"message"}
	case "count":
		props["n"] = map[string]any{"type": "integer"}
	case "slow":
		props["ms"] = map[string]any{"type": "integer"}
	case "misbehave":
		props["case"], required = map[string]any{"type": "string"}, []string{"case"}
	}
	schema := map[string]any{"type": "object", "properties": props}
	if required != nil {
		schema["required"] = required
	}
	return schema
}

// request answers a request from the host.
func (s *server) request(id []byte, method string, params []byte) {
	id = bytes.Clone(id)
	switch method {
	case "initialize":
		s.out.WriteFrame(reply(id, s.initResult(params), nil))
		return
	case "shutdown":
		s.out.WriteFrame([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":null}`))
		return
	case "textDocument/hover":
		s.out.WriteFrame(reply(id, map[string]any{"contents": map[string]any{"kind": "markdown", "value": "**demo** — rpctap's demo server answers every hover"}}, nil))
		return
	case "tools/call", "workspace/executeCommand":
		name, args, token := s.callParams(method, params)
		if name == "quit" {
			s.quit = true
			return
		}
		if name == "confirm" {
			s.confirm(id, params)
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.call(id, name, args, token)
		}()
		return
	}
	if res, e := s.immediate(method); res != nil || e != nil {
		s.out.WriteFrame(reply(id, res, e))
		return
	}
	s.out.WriteFrame(reply(id, nil, errNoMethod))
}

func (s *server) initResult(params []byte) any {
	if s.o.LSP {
		return map[string]any{"capabilities": map[string]any{"hoverProvider": true, "executeCommandProvider": map[string]any{"commands": toolNames()}},
			"serverInfo": map[string]any{"name": "rpctap-demo-server", "version": "1"}}
	}
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	json.Unmarshal(params, &p)
	switch {
	case s.o.Lenient:
		// The lenient server answers with the latest revision it has,
		// even one later than the host asked for (unsupported-version).
		p.ProtocolVersion = "2025-11-25"
	case p.ProtocolVersion == "":
		p.ProtocolVersion = "2025-06-18"
	}
	return map[string]any{"protocolVersion": p.ProtocolVersion,
		"capabilities": map[string]any{"tools": map[string]any{"listChanged": true}, "resources": map[string]any{}, "prompts": map[string]any{}},
		"serverInfo":   map[string]any{"name": "rpctap-demo-server", "version": "1"}}
}

func toolNames() []string {
	var names []string
	for _, t := range Tools {
		names = append(names, t.Name)
	}
	return names
}

// callParams reads a call's tool, arguments and progress token, from MCP's
// tools/call or LSP's workspace/executeCommand.
func (s *server) callParams(method string, params []byte) (name string, args map[string]json.RawMessage, token json.RawMessage) {
	if method == "tools/call" {
		var p struct {
			Name      string                     `json:"name"`
			Arguments map[string]json.RawMessage `json:"arguments"`
			Meta      struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		}
		json.Unmarshal(params, &p)
		return p.Name, p.Arguments, p.Meta.ProgressToken
	}
	var p struct {
		Command       string                       `json:"command"`
		Arguments     []map[string]json.RawMessage `json:"arguments"`
		WorkDoneToken json.RawMessage              `json:"workDoneToken"`
	}
	json.Unmarshal(params, &p)
	if len(p.Arguments) > 0 {
		args = p.Arguments[0]
	}
	return p.Command, args, p.WorkDoneToken
}

// result wraps a tool's text as the protocol's call result.
func (s *server) result(text string) any {
	if s.o.LSP {
		return text
	}
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
}

// call runs a tool and answers id.
func (s *server) call(id []byte, name string, args map[string]json.RawMessage, token json.RawMessage) {
	str := func(k string) string {
		var v string
		json.Unmarshal(args[k], &v)
		return v
	}
	num := func(k string, def int) int {
		v := def
		json.Unmarshal(args[k], &v)
		return v
	}
	switch name {
	case "echo":
		s.out.WriteFrame(reply(id, s.result(str("message")), nil))
	case "count":
		n := min(max(num("n", 3), 1), 20)
		for i := 1; i <= n; i++ {
			if token != nil {
				s.out.WriteFrame(s.progress(token, i, n))
			}
			time.Sleep(120 * time.Millisecond)
		}
		s.out.WriteFrame(reply(id, s.result(fmt.Sprintf("counted to %d", n)), nil))
	case "slow":
		stop := make(chan struct{})
		key := classify.RawID(id).Key()
		s.mu.Lock()
		s.cancelled[key] = stop
		s.mu.Unlock()
		select {
		case <-time.After(time.Duration(min(max(num("ms", 1000), 0), 60_000)) * time.Millisecond):
			s.out.WriteFrame(reply(id, s.result("done at last"), nil))
		case <-stop:
			// MCP: a cancelled request needs no answer.
		}
		s.mu.Lock()
		delete(s.cancelled, key)
		s.mu.Unlock()
	case "roots":
		s.out.WriteFrame(reply(id, s.result(s.askRoots()), nil))
	case "config":
		s.out.WriteFrame(reply(id, s.result("endpoint=https://api.example.com api_key="+s.o.Secret), nil))
	case "reload":
		if s.o.LSP {
			s.out.WriteFrame(notify("window/showMessage", map[string]any{"type": 3, "message": "the demo server reloaded its commands"}))
		} else {
			s.out.WriteFrame(notify("notifications/tools/list_changed", struct{}{}))
		}
		s.out.WriteFrame(reply(id, s.result("reloaded"), nil))
	case "misbehave":
		s.misbehave(id, str("case"), token)
	case "forecast":
		// Its structuredContent breaks the outputSchema it was listed with.
		s.out.WriteFrame(reply(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": "warm"}}, "structuredContent": map[string]any{"temp": "warm"}}, nil))
	default:
		s.out.WriteFrame(reply(id, nil, &rpcError{Code: -32602, Message: "Unknown tool: " + name}))
	}
}

func (s *server) progress(token json.RawMessage, i, n int) []byte {
	if s.o.LSP {
		return notify("$/progress", map[string]any{"token": token, "value": map[string]any{"kind": "report", "message": fmt.Sprintf("%d of %d", i, n), "percentage": 100 * i / n}})
	}
	return notify("notifications/progress", map[string]any{"progressToken": token, "progress": i, "total": n})
}

// askRoots sends the host a request (roots/list; LSP:
// workspace/configuration) and says what came back.
func (s *server) askRoots() string {
	s.mu.Lock()
	s.nextID++
	id := fmt.Sprintf(`"server-%d"`, s.nextID)
	ch := make(chan []byte, 1)
	s.asked[classify.RawID([]byte(id)).Key()] = ch
	s.mu.Unlock()
	if s.o.LSP {
		s.out.WriteFrame([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"workspace/configuration","params":{"items":[{"section":"demo"}]}}`))
	} else {
		s.out.WriteFrame([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"roots/list"}`))
	}
	select {
	case ans := <-ch:
		return "the host answered: " + string(ans)
	case <-time.After(10 * time.Second):
		return "the host did not answer within 10 s"
	}
}

// notification handles a notification from the host.
func (s *server) notification(method string, params []byte) {
	var key string
	switch method {
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		json.Unmarshal(params, &p)
		key = classify.RawID(p.RequestID).Key()
	case "$/cancelRequest":
		var p struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(params, &p)
		key = classify.RawID(p.ID).Key()
	default:
		return
	}
	s.mu.Lock()
	if stop := s.cancelled[key]; stop != nil {
		close(stop)
		delete(s.cancelled, key)
	}
	s.mu.Unlock()
}

// misbehave answers the call id with an edge case: a frame of the inject
// catalog meant for a host (its fixed id replaced by the call's), or one
// of the session-level mistakes the catalog does not build.
func (s *server) misbehave(id []byte, name string, token json.RawMessage) {
	switch name {
	case "tool-error":
		s.out.WriteFrame(reply(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": "the tool failed"}}, "isError": true}, nil))
		return
	case "log-without-level":
		// A 2026-07-28 call that set no io.modelcontextprotocol/logLevel.
		s.out.WriteFrame(notify("notifications/message", map[string]any{"level": "info", "data": "the demo server logs while it works"}))
		s.out.WriteFrame(reply(id, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "logged"}}}, nil))
		return
	case "tool-drift":
		s.mu.Lock()
		s.drifted = true
		s.mu.Unlock()
		s.out.WriteFrame(notify("notifications/tools/list_changed", struct{}{}))
		s.out.WriteFrame(reply(id, s.result("the tools changed"), nil))
		return
	case "progress-not-increasing":
		if token != nil {
			s.out.WriteFrame(s.progress(token, 2, 3))
			s.out.WriteFrame(s.progress(token, 1, 3))
		}
		s.out.WriteFrame(reply(id, s.result("answered after progress that went back"), nil))
		return
	case "no-result-or-error":
		s.out.WriteFrame([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `}`))
		return
	case "unmatched-response":
		s.out.WriteFrame([]byte(`{"jsonrpc":"2.0","id":"never-asked","result":{}}`))
		s.out.WriteFrame(reply(id, s.result("answered after an unmatched response"), nil))
		return
	case "duplicate-response":
		s.out.WriteFrame(reply(id, s.result("the first answer"), nil))
		s.out.WriteFrame(reply(id, s.result("the same answer again"), nil))
		return
	case "stdout-log-null-id":
		e, _ := inject.Lookup(name)
		frames, _ := e.Frames(inject.Params{})
		for _, f := range frames {
			s.out.WriteFrame(f)
		}
		s.out.WriteFrame(reply(id, s.result("answered after a log line on stdout"), nil))
		return
	}
	e, ok := inject.Lookup(name)
	if !ok {
		s.out.WriteFrame(reply(id, nil, &rpcError{Code: -32602, Message: "no such edge case"}))
		return
	}
	frames, err := e.Frames(inject.Params{ID: string(id)})
	if err != nil {
		s.out.WriteFrame(reply(id, nil, &rpcError{Code: -32602, Message: "the edge case cannot be built"}))
		return
	}
	answered := false
	for _, f := range frames {
		f = withCallID(f, id)
		m := classify.Classify(f, classify.S2H, classify.MCP)
		answered = answered || m.Kind != classify.KindNotification && m.Kind != classify.KindRequest
		s.out.WriteFrame(f)
	}
	if !answered {
		// A notification about the call (progress), or a request of the
		// server's own: the call still gets its answer.
		s.out.WriteFrame(reply(id, s.result("answered after "+name), nil))
	}
}

// confirm answers a call of confirm as a 2026-07-28 server does in a
// multi round-trip call: input_required, asking the host to confirm
// (key "go", requestState "demo-state-1"), then, on the retry that
// carries a requestState, the tool's result.
func (s *server) confirm(id []byte, params []byte) {
	var p struct {
		RequestState *string `json:"requestState"`
	}
	json.Unmarshal(params, &p)
	if p.RequestState == nil {
		s.out.WriteFrame(reply(id, map[string]any{"resultType": "input_required", "requestState": "demo-state-1",
			"inputRequests": map[string]any{"go": map[string]any{"method": "elicitation/create",
				"params": map[string]any{"mode": "form", "message": "Deploy now?", "requestedSchema": map[string]any{"type": "object", "properties": map[string]any{}}}}}}, nil))
		return
	}
	s.out.WriteFrame(reply(id, map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "confirmed"}}}, nil))
}

// withCallID gives a catalog response the call's id in place of its own
// "rpctap-…" id, so that it answers the call.
func withCallID(frame, id []byte) []byte {
	m := classify.Classify(frame, classify.S2H, classify.MCP)
	if m.Kind == classify.KindNotification || m.Kind == classify.KindRequest || !m.HasID() {
		return frame
	}
	raw := m.ID().Raw
	if !bytes.HasPrefix(raw, []byte(`"rpctap-`)) {
		return frame
	}
	return bytes.Replace(frame, raw, id, 1)
}
