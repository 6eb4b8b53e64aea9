package playhost

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
)

// ProtocolVersion is the MCP revision rpctap asks for in initialize.
const ProtocolVersion = "2025-11-25"

// DiscoverVersion is the MCP revision rpctap asks for first, with
// server/discover (it has no initialize handshake).
const DiscoverVersion = "2026-07-28"

// An MCP host: Run does the handshake, lists what the server offers, and
// answers the server's requests, each at once, until ctx ends or the
// server's output does.
type MCP struct {
	W    io.Writer // the server's input (the tap's host side)
	R    io.Reader // the server's output
	Root string    // the host's one root (absolute), as roots/list says; "" none
	Name string    // clientInfo.name
	// Warn receives what went wrong (one sentence each).
	Warn func(string)

	mu       sync.Mutex
	speaking *session // set once the server speaks revision 2026-07-28
}

// A session is what a retry of rpctap's host needs: the connection, the
// _meta every request of revision 2026-07-28 carries, and the host's
// context.
type session struct {
	ctx  context.Context
	c    *conn
	meta json.RawMessage
	host inject.Host
}

// Run plays the host until the server's output ends or ctx is done.
func (h *MCP) Run(ctx context.Context) error {
	if h.Warn == nil {
		h.Warn = func(string) {}
	}
	c := newConn(h.W, h.R, false, classify.MCP, inject.Host{Root: h.Root})
	name := h.Name
	if name == "" {
		name = "rpctap"
	}
	// Revision 2026-07-28 has no handshake: server/discover, then every
	// request carries the client's info in _meta. A server on an older
	// revision answers -32601 (any error, here), and gets initialize.
	caps := `{"roots":{},"sampling":{},"elicitation":{}}`
	info := `{"name":` + inject.Quote(name) + `,"version":"1"}`
	meta := `{"_meta":{"io.modelcontextprotocol/clientCapabilities":` + caps + `,"io.modelcontextprotocol/clientInfo":` + info + `,"io.modelcontextprotocol/protocolVersion":"` + DiscoverVersion + `"}}`
	disc, err := c.ask("server/discover", meta)
	if err != nil {
		return err
	}
	m, ok := c.wait(ctx, disc)
	if !ok {
		return nil
	}
	listParams := meta
	if !m.HasError() && strings.Contains(string(m.Result()), `"`+DiscoverVersion+`"`) {
		h.mu.Lock()
		h.speaking = &session{ctx: ctx, c: c, meta: json.RawMessage(classify.Member([]byte(meta), "_meta")), host: inject.Host{Root: h.Root}}
		h.mu.Unlock()
	} else {
		listParams = ""
		init, err := c.ask("initialize", `{"protocolVersion":"`+ProtocolVersion+`","capabilities":`+caps+`,"clientInfo":`+info+`}`)
		if err != nil {
			return err
		}
		if m, ok = c.wait(ctx, init); !ok {
			return nil
		}
		if m.HasError() {
			h.Warn("the server refused initialize: " + classify.EscapeString(string(m.Error()), 200))
			return nil
		}
		if err := c.notify("notifications/initialized", ""); err != nil {
			return err
		}
	}
	var offers struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	json.Unmarshal(m.Result(), &offers)
	for _, list := range []string{"tools", "resources", "prompts"} {
		if _, offered := offers.Capabilities[list]; !offered {
			continue
		}
		ch, err := c.ask(list+"/list", listParams)
		if err != nil {
			return err
		}
		if _, ok := c.wait(ctx, ch); !ok {
			return nil
		}
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-c.done:
		return err
	}
}

// maxRounds bounds the rounds of one multi round-trip call that rpctap's
// host answers: a server that asks again and again is left asking.
const maxRounds = 10

// Answers carries on a call the user composed (tap.Options.Answers): when
// the server answers a tools/call, prompts/get or resources/read of
// revision 2026-07-28 with input_required, rpctap's host answers each of
// the input requests as it answers the server's own requests (roots/list
// with its root, elicitation/create declined), and retries the call with
// them (params.inputResponses) and the result's requestState, as a host
// does, until the server gives the call's result. A call asking for what
// rpctap's host does not give (sampling, a method it does not know) is
// left as the server answered it, and Warn says so.
func (h *MCP) Answers(request, answer []byte) {
	h.mu.Lock()
	s := h.speaking
	h.mu.Unlock()
	if s == nil {
		return
	}
	req := classify.Classify(request, classify.H2S, classify.MCP)
	method := req.Method()
	if req.Kind != classify.KindRequest || (method != "tools/call" && method != "prompts/get" && method != "resources/read") {
		return
	}
	ans := classify.Classify(answer, classify.S2H, classify.MCP)
	result := ans.Result()
	for round := 1; inputRequired(result); round++ {
		if round > maxRounds {
			h.Warn(fmt.Sprintf("the server answered %s input_required %d times; rpctap's host retried it no more", classify.EscapeString(method, 200), maxRounds))
			return
		}
		retry, err := retryParams(req.Params(), result, s)
		if err != nil {
			h.Warn(fmt.Sprintf("the server answered %s input_required, and rpctap's host did not retry it: %v; answer it from the composer, sending the call again with params.inputResponses (an answer by each input request's key) and params.requestState as the result gave it", classify.EscapeString(method, 200), err))
			return
		}
		ch, err := s.c.ask(method, retry)
		if err != nil {
			return
		}
		m, ok := s.c.wait(s.ctx, ch)
		if !ok {
			return
		}
		result = m.Result()
	}
}

// inputRequired reports whether result is an input_required result.
func inputRequired(result []byte) bool {
	rt, ok := classify.StringValue(classify.Member(result, "resultType"))
	return ok && rt == "input_required"
}

// retryParams are the params of the retry of the call whose params were
// params and whose answer was the input_required result: the call's own,
// with an answer to each input request by its key (inputResponses), the
// result's requestState (none when it gave none), and the host's _meta
// when the call carried none (every request of revision 2026-07-28 does).
func retryParams(params, result []byte, s *session) (string, error) {
	p := map[string]json.RawMessage{}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil || p == nil {
			return "", fmt.Errorf("the call's params are not an object")
		}
	}
	var r struct {
		InputRequests map[string]struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"inputRequests"`
		RequestState json.RawMessage `json:"requestState"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return "", fmt.Errorf("its inputRequests cannot be read (%s)", classify.EscapeString(err.Error(), 200))
	}
	keys := make([]string, 0, len(r.InputRequests))
	for k := range r.InputRequests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	responses := make(map[string]json.RawMessage, len(keys))
	for _, k := range keys {
		ir := r.InputRequests[k]
		res, ok := inject.HostResult(ir.Method, ir.Params, s.host)
		if !ok {
			return "", fmt.Errorf("input request %s asks for %s, which rpctap's host does not answer", inject.Quote(k), inject.Quote(ir.Method))
		}
		responses[k] = json.RawMessage(res)
	}
	p["inputResponses"] = marshal(responses)
	delete(p, "requestState")
	if len(r.RequestState) > 0 && string(r.RequestState) != "null" {
		p["requestState"] = r.RequestState
	}
	if _, ok := p["_meta"]; !ok {
		p["_meta"] = s.meta
	}
	return string(marshal(p)), nil
}

// marshal is v as JSON, with its raw values as they were written (no
// HTML escapes added: a requestState goes back byte for byte).
func marshal(v map[string]json.RawMessage) json.RawMessage {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return json.RawMessage(strings.TrimSuffix(b.String(), "\n"))
}
