// Package playhost is rpctap as the host of a server that has none
// (rpctap watch -- SERVER with no --host): it writes the host's side of
// the conversation on the tap's host pipes, so that its frames are
// ordinary frames in the view and the session file, and the user drives
// the rest from the composer.
package playhost

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/rpctap/rpctap/classify"
)

// ProtocolVersion is the MCP revision rpctap asks for in initialize.
const ProtocolVersion = "2025-11-25"

// DiscoverVersion is the MCP revision rpctap asks for first, with
// server/discover (it has no initialize handshake).
const DiscoverVersion = "2026-07-28"

// HeldRequests is the intercept filter that holds the server's requests
// a host must answer, for the user to answer in the view (the held pane's
// answer in place); one that the user lets go, or whose hold time runs
// out, reaches rpctap, which gives it the default answer (see answerFor).
const HeldRequests = "dir:s2h kind:request !method:ping"

// An MCP host: Run does the handshake, lists what the server offers, and
// answers the server's requests until ctx ends or the server's output
// does.
type MCP struct {
	W    io.Writer // the server's input (the tap's host side)
	R    io.Reader // the server's output
	Name string    // clientInfo.name
	// Warn receives what went wrong (one sentence each).
	Warn func(string)
}

// Run plays the host until the server's output ends or ctx is done.
func (h *MCP) Run(ctx context.Context) error {
	if h.Warn == nil {
		h.Warn = func(string) {}
	}
	c := newConn(h.W, h.R, false, classify.MCP)
	name := h.Name
	if name == "" {
		name = "rpctap"
	}
	// Revision 2026-07-28 has no handshake: server/discover, then every
	// request carries the client's info in _meta. A server on an older
	// revision answers -32601 (any error, here), and gets initialize.
	caps := `{"roots":{},"sampling":{},"elicitation":{}}`
	info := `{"name":` + quote(name) + `,"version":"1"}`
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
	if m.HasError() || !strings.Contains(string(m.Result()), `"`+DiscoverVersion+`"`) {
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

// answerFor is the answer rpctap's host gives a server's request: ping is
// answered, and the requests a host must answer get a harmless default (no
// roots, sampling and elicitation declined; for LSP, no settings and the
// registrations and progress tokens accepted); any other is not known.
func answerFor(m *classify.Message) string {
	id := string(m.ID().Raw)
	result := func(r string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":` + r + `}` }
	fail := func(code int, msg string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":` + fmt.Sprint(code) + `,"message":` + quote(msg) + `}}`
	}
	switch m.Method() {
	case "ping":
		return result(`{}`)
	case "roots/list":
		return result(`{"roots":[]}`)
	case "elicitation/create":
		return result(`{"action":"decline"}`)
	case "sampling/createMessage":
		return fail(-1, "rpctap's host does not sample: answer this request from the view's held pane (H, then a) to give the server a message")
	case "workspace/configuration":
		// LSP: no settings, a null for each item asked for.
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		json.Unmarshal(m.Params(), &p)
		return result("[" + strings.TrimSuffix(strings.Repeat("null,", len(p.Items)), ",") + "]")
	case "client/registerCapability", "client/unregisterCapability", "window/workDoneProgress/create":
		return result("null")
	}
	return fail(-32601, "rpctap's host does not know "+strings.ToValidUTF8(m.Method(), "?"))
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
