package playhost

import (
	"context"
	"encoding/json"
	"io"
	"strings"

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
