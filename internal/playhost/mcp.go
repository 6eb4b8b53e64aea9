// Package playhost is rpctap as the host of a server that has none
// (rpctap watch -- SERVER with no --host): it writes the host's side of
// the conversation on the tap's host pipes, so that its frames are
// ordinary frames in the view and the session file, and the user drives
// the rest from the composer.
package playhost

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/rpctap/rpctap/classify"
)

// ProtocolVersion is the MCP revision rpctap asks for in initialize.
const ProtocolVersion = "2025-11-25"

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

	mu   sync.Mutex
	next int
}

// id is a fresh request id of rpctap's host.
func (h *MCP) id() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	return fmt.Sprintf(`"rpctap-host-%d"`, h.next)
}

func (h *MCP) write(frame string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.W, frame+"\n")
	return err
}

// Run plays the host until the server's output ends or ctx is done.
func (h *MCP) Run(ctx context.Context) error {
	if h.Warn == nil {
		h.Warn = func(string) {}
	}
	answers := map[string]chan classify.Message{}
	var amu sync.Mutex
	ask := func(method, params string) (chan classify.Message, error) {
		id := h.id()
		ch := make(chan classify.Message, 1)
		amu.Lock()
		answers[id] = ch
		amu.Unlock()
		frame := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
		if params != "" {
			frame += `,"params":` + params
		}
		return ch, h.write(frame + "}")
	}
	done := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(h.R, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				m := classify.Classify(line, classify.S2H, classify.MCP)
				switch m.Kind {
				case classify.KindResponse:
					if m.HasID() {
						amu.Lock()
						ch := answers[string(m.ID().Raw)]
						delete(answers, string(m.ID().Raw))
						amu.Unlock()
						if ch != nil {
							m.Frame = append([]byte(nil), m.Frame...)
							ch <- m
						}
					}
				case classify.KindRequest:
					if err := h.write(answerFor(&m)); err != nil {
						done <- err
						return
					}
				}
			}
			if err != nil {
				done <- nil
				return
			}
		}
	}()
	wait := func(ch chan classify.Message) (classify.Message, bool) {
		select {
		case m := <-ch:
			return m, true
		case <-ctx.Done():
		case err := <-done:
			done <- err
		}
		return classify.Message{}, false
	}
	name := h.Name
	if name == "" {
		name = "rpctap"
	}
	init, err := ask("initialize", `{"protocolVersion":"`+ProtocolVersion+`","capabilities":{"roots":{},"sampling":{},"elicitation":{}},"clientInfo":{"name":`+quote(name)+`,"version":"1"}}`)
	if err != nil {
		return err
	}
	m, ok := wait(init)
	if !ok {
		return nil
	}
	if m.HasError() {
		h.Warn("the server refused initialize: " + classify.EscapeString(string(m.Error()), 200))
		return nil
	}
	if err := h.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return err
	}
	var caps struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	json.Unmarshal(m.Result(), &caps)
	for _, list := range []string{"tools", "resources", "prompts"} {
		if _, offered := caps.Capabilities[list]; !offered {
			continue
		}
		ch, err := ask(list+"/list", "")
		if err != nil {
			return err
		}
		if _, ok := wait(ch); !ok {
			return nil
		}
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-done:
		return err
	}
}

// answerFor is the answer rpctap's host gives a server's request: ping is
// answered, and the requests a host must answer get a harmless default (no
// roots, sampling and elicitation declined); any other is not known.
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
	}
	return fail(-32601, "rpctap's host does not know "+strings.ToValidUTF8(m.Method(), "?"))
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
