// Package tools holds the tools of the gosdk test servers: server serves
// them as they are; drifted serves them with one answer changed, as a new
// build of a server might, for replay's regression tests.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Message string `json:"message" jsonschema:"the text to echo back"`
}

type addIn struct {
	A float64 `json:"a" jsonschema:"first addend"`
	B float64 `json:"b" jsonschema:"second addend"`
}

type addOut struct {
	Sum float64 `json:"sum" jsonschema:"a+b"`
}

type sleepIn struct {
	Duration string `json:"duration" jsonschema:"how long to sleep, as a Go duration such as 500ms or 2s"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func echo(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
	return text(in.Message), nil, nil
}

// echoUpper is echo as the drifted server answers it: in upper case.
func echoUpper(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
	return text(strings.ToUpper(in.Message)), nil, nil
}

func add(ctx context.Context, req *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
	sum := in.A + in.B
	return text(fmt.Sprint(sum)), addOut{Sum: sum}, nil
}

func sleep(ctx context.Context, req *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, any, error) {
	d, err := time.ParseDuration(in.Duration)
	if err != nil {
		return nil, nil, fmt.Errorf("bad duration %q: %v", in.Duration, err)
	}
	if d < 0 || d > 10*time.Minute {
		return nil, nil, fmt.Errorf("duration %v out of range [0, 10m]", d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return text("slept " + d.String()), nil, nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

type confirmIn struct {
	Action string `json:"action"`
}

// confirmSchema is confirm's inputSchema.
var confirmSchema = json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","description":"what to confirm"}},"required":["action"]}`)

// confirmState is the requestState of confirm's input_required result:
// what it asks the user to confirm, so that the retry is judged against
// the action it asked about.
func confirmState(action string) string { return "confirm:" + action }

// confirm is a multi round-trip call (MCP 2026-07-28): the first call of
// confirm {action} answers input_required, asking the host to elicit a
// confirmation under the key "confirm"; the retry that carries the
// elicitation's result and the requestState answers with what was
// confirmed, or declined. The SDK's server asks an older client with an
// elicitation/create request of its own instead, and calls again with
// the answer.
func confirm(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in confirmIn
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.Action == "" {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: `confirm takes {"action": TEXT}`}}}, nil
	}
	answer, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult)
	if !ok {
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{
				Mode:            "form",
				Message:         "Confirm " + in.Action + "?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"confirmed":{"type":"boolean","description":"yes to go ahead"}},"required":["confirmed"]}`),
			}},
			RequestState: confirmState(in.Action),
		}, nil
	}
	if req.Params.RequestState != confirmState(in.Action) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("the retry's requestState %q is not the one confirm gave", req.Params.RequestState)}}}, nil
	}
	if answer.Action == "accept" && answer.Content["confirmed"] == true {
		return text("confirmed " + in.Action), nil
	}
	return text(in.Action + " not confirmed (" + answer.Action + ")"), nil
}

type summarizeIn struct {
	Text string `json:"text"`
}

// summarizeSchema is summarize's inputSchema.
var summarizeSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"the text to summarize"}},"required":["text"]}`)

// summarize is a multi round-trip call that asks the host for sampling:
// the first call answers input_required with a sampling/createMessage
// under the key "summary"; the retry that carries the model's message
// answers with its text.
func summarize(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in summarizeIn
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.Text == "" {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: `summarize takes {"text": TEXT}`}}}, nil
	}
	switch answer := req.Params.InputResponses["summary"].(type) {
	case *mcp.CreateMessageWithToolsResult:
		for _, c := range answer.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				return text(t.Text), nil
			}
		}
		return text("(the model gave no text)"), nil
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{"summary": &mcp.CreateMessageParams{
			MaxTokens: 100,
			Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Summarize in one line: " + in.Text}}},
		}},
		RequestState: "summarize",
	}, nil
}

// Serve runs the server on stdio until stdin closes; drifted makes echo
// answer in upper case, every other answer (tools, schemas, server info)
// being the same. echoDescription is the description echo is listed with
// ("" for its own), as a new build of the server might list it. mrtr adds
// the multi round-trip tools confirm and summarize.
func Serve(drifted bool, echoDescription string, mrtr bool, httpAddr string) {
	if echoDescription == "" {
		echoDescription = "Echoes back the message"
	}
	log.SetFlags(0)
	log.SetPrefix("gosdk-server: ")
	s := mcp.NewServer(&mcp.Implementation{Name: "rpctap-gosdk-server", Version: "v0.1.0"}, nil)
	if drifted {
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: echoDescription}, echoUpper)
	} else {
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: echoDescription}, echo)
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers"}, add)
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Sleeps for a duration, then answers"}, sleep)
	if mrtr {
		s.AddTool(&mcp.Tool{Name: "confirm", Description: "Asks the host to confirm an action (elicitation), then answers what was confirmed", InputSchema: confirmSchema}, confirm)
		s.AddTool(&mcp.Tool{Name: "summarize", Description: "Asks the host's model to summarize a text (sampling), then answers the summary", InputSchema: summarizeSchema}, summarize)
	}
	if httpAddr != "" {
		// Streamable HTTP at /mcp, for the HTTP tap's tests; the line
		// it logs names the address (a free port with :0).
		ln, err := net.Listen("tcp", httpAddr)
		if err != nil {
			log.Fatalf("listen: %v", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		log.Printf("listening on http://%s/mcp", ln.Addr())
		log.Fatal(http.Serve(ln, mux))
	}
	log.Print("running on stdio")
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Printf("stopped: %v", err)
		os.Exit(1)
	}
	log.Print("stopped")
}
