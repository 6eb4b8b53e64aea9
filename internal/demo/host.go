package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// A Host is the demo's scripted host: it writes to the tap as a host
// writes to a server, reads what comes back, answers the server's
// requests (and, as a strict host, refuses invalid ones), and keeps what
// came during a step so the step can say what happened.
type Host struct {
	w       io.Writer // the server's stdin, closed by Close
	out     *classify.FrameWriter
	lsp     bool
	profile classify.Profile
	// Timeout is the tap's pending-request timeout: steps about timeouts
	// wait past it.
	Timeout time.Duration
	// Note records a caption in the session (the tap's Note).
	Note func(string)
	// Speed divides the pauses between and within steps (not the waits
	// for a timeout, which the tap judges in real time).
	Speed float64

	mu      sync.Mutex
	nextID  int
	waiting map[string]chan []byte // answers to the host's requests, by id key
	got     []string               // what came from the server during this step, said briefly
	done    chan struct{}          // closed when the server's output ends
	// The HTTP host's (NewHTTPHost): the tap's URL, its client, and the
	// session the server gave.
	url     string
	client  *http.Client
	session string
}

// NewHost makes a host that writes to w (the tap's stdin) and reads r
// (the tap's stdout) until it ends.
func NewHost(r io.Reader, w io.Writer, lsp bool) *Host {
	framing := classify.FramingNDJSON
	if lsp {
		framing = classify.FramingLSP
	}
	h := &Host{w: w, out: classify.NewFrameWriter(w, framing), lsp: lsp, profile: classify.MCP, Timeout: classify.DefaultTimeout,
		Note: func(string) {}, Speed: 1, waiting: map[string]chan []byte{}, done: make(chan struct{})}
	if lsp {
		h.profile = classify.LSP
	}
	go h.read(classify.NewFrameReader(r, framing, 0))
	return h
}

// read takes the server's frames as they come.
func (h *Host) read(fr *classify.FrameReader) {
	defer close(h.done)
	for {
		f, err := fr.Next()
		if err != nil {
			return
		}
		// Each frame keeps bytes of its own, past the next read.
		m := classify.ClassifyFramed(bytes.Clone(f.Body()), f.Info, classify.S2H, h.profile)
		h.mu.Lock()
		h.got = append(h.got, brief(&m))
		var ch chan []byte
		if m.Kind == classify.KindResponse && m.HasID() {
			ch = h.waiting[m.ID().Key()]
			delete(h.waiting, m.ID().Key())
		}
		h.mu.Unlock()
		switch {
		case ch != nil:
			ch <- bytes.Clone(m.Frame)
		case m.Answer != nil:
			// A strict host refuses an invalid request from the server.
			h.out.WriteFrame(m.Answer.JSON())
		case m.Kind == classify.KindRequest:
			h.answerServer(m.ID().Raw, m.Method())
		}
	}
}

// answerServer answers a request the server sent, as a host would.
func (h *Host) answerServer(id []byte, method string) {
	var result string
	switch method {
	case "roots/list":
		result = `{"roots":[{"uri":"file:///home/demo/project","name":"project"}]}`
	case "workspace/configuration":
		result = `[{"greeting":"hello from the host"}]`
	case "ping":
		result = `{}`
	default:
		h.out.WriteFrame([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32601,"message":"Method not found"}}`))
		return
	}
	h.out.WriteFrame([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`))
}

// brief says in a few words what a frame from the server was.
func brief(m *classify.Message) string {
	switch m.Kind {
	case classify.KindResponse:
		if code, ok := m.ErrorCode(); ok {
			var e struct {
				Message string `json:"message"`
			}
			json.Unmarshal(m.Error(), &e)
			return fmt.Sprintf("error %d %s", code, classify.EscapeString(cut(firstLine(e.Message), 60), 0))
		}
		if m.HasError() {
			return "an error with a malformed error object"
		}
		if m.HasResult() {
			return "a result"
		}
		return "a response with neither result nor error"
	case classify.KindRequest:
		return "a request, " + classify.EscapeString(cut(m.Method(), 40), 0)
	case classify.KindNotification:
		return "a notification, " + classify.EscapeString(cut(m.Method(), 40), 0)
	}
	return m.Kind.Phrase()
}

// cut shortens s to n characters, marking the cut with "…".
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// Done is closed when the server's output ends.
func (h *Host) Done() <-chan struct{} { return h.done }

// Close ends the host's side: the server's stdin closes.
func (h *Host) Close() error {
	if c, ok := h.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// id allocates the next id of the host's own requests.
func (h *Host) id() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextID++
	return strconv.Itoa(h.nextID)
}

// send writes a frame as it is (with its framing).
func (h *Host) send(frame string) { h.out.WriteFrame([]byte(frame)) }

// start sends a request and returns its id and where its answer will come.
func (h *Host) start(method string, params any) (string, chan []byte) {
	id := h.id()
	ch := make(chan []byte, 1)
	h.mu.Lock()
	h.waiting[classify.RawID([]byte(id)).Key()] = ch
	h.mu.Unlock()
	frame := `{"jsonrpc":"2.0","id":` + id + `,"method":` + strconv.Quote(method)
	if params != nil {
		pj, _ := json.Marshal(params)
		frame += `,"params":` + string(pj)
	}
	h.send(frame + "}")
	return id, ch
}

// await waits for an answer, up to d.
func (h *Host) await(ctx context.Context, ch chan []byte, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
	case <-ctx.Done():
	case <-h.done:
	}
	return false
}

// request sends a request and waits for its answer.
func (h *Host) request(ctx context.Context, method string, params any) {
	_, ch := h.start(method, params)
	h.await(ctx, ch, 10*time.Second)
}

// callParams builds a call of a demo server tool: tools/call (MCP) or
// workspace/executeCommand (LSP), with a progress token when given.
func (h *Host) callParams(tool string, args map[string]any, token string) (string, any) {
	if args == nil {
		args = map[string]any{}
	}
	if h.lsp {
		p := map[string]any{"command": tool, "arguments": []any{args}}
		if token != "" {
			p["workDoneToken"] = token
		}
		return "workspace/executeCommand", p
	}
	p := map[string]any{"name": tool, "arguments": args}
	if token != "" {
		p["_meta"] = map[string]any{"progressToken": token}
	}
	return "tools/call", p
}

// call calls a tool and waits for its answer.
func (h *Host) call(ctx context.Context, tool string, args map[string]any) {
	method, params := h.callParams(tool, args, "")
	h.request(ctx, method, params)
}

// pause waits d divided by the speed.
func (h *Host) pause(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(time.Duration(float64(d) / h.Speed)):
	case <-ctx.Done():
	}
}

// settle gives the server time to answer what it was sent.
func (h *Host) settle(ctx context.Context) {
	h.pause(ctx, 400*time.Millisecond)
	// However fast the demo runs, an answer on its way gets a moment.
	select {
	case <-time.After(40 * time.Millisecond):
	case <-ctx.Done():
	}
}

// takeGot returns what came from the server since the last call.
func (h *Host) takeGot() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	got := h.got
	h.got = nil
	return got
}

// End ends the session as a host does: LSP's shutdown and exit, then the
// server's stdin is closed.
func (h *Host) End(ctx context.Context) {
	if h.lsp {
		_, ch := h.start("shutdown", nil)
		h.await(ctx, ch, 5*time.Second)
		h.send(`{"jsonrpc":"2.0","method":"exit"}`)
	}
	h.Close()
}
