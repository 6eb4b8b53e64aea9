// Command client is a small MCP client built on the official Go SDK, for
// rpctap's end-to-end tests. It starts the server command given after "--"
// (mcp.CommandTransport), lists tools, calls tools, prints one JSON line per
// step to stdout and exits 0 (1 on any protocol error).
//
//	client [flags] -- CMD ARGS...
//
// By default it calls echo {"message":"hi"} and add {"a":2,"b":3}; give
// -call NAME=JSON (repeatable) to choose the calls instead, e.g.
// -call 'get-sum={"a":2,"b":3}' or -call 'sleep={"duration":"1s"}'.
// -call-timeout makes a call give up (the SDK then sends
// notifications/cancelled); such a call is reported with "cancelled":true and
// does not make the exit status non-zero. -accept-elicitation declares the
// elicitation capability and accepts every elicitation with
// {"confirmed": true} (the SDK then retries a multi round-trip call with
// the answer by itself, or answers an older server's elicitation/create).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type callFlag []string

func (c *callFlag) String() string     { return strings.Join(*c, " ") }
func (c *callFlag) Set(s string) error { *c = append(*c, s); return nil }

var out = json.NewEncoder(os.Stdout)

func emit(v map[string]any) {
	if err := out.Encode(v); err != nil {
		fmt.Fprintln(os.Stderr, "gosdk-client:", err)
		os.Exit(1)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gosdk-client: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	var calls callFlag
	list := flag.Bool("list", true, "list tools before the calls")
	timeout := flag.Duration("timeout", 60*time.Second, "overall time limit")
	callTimeout := flag.Duration("call-timeout", 0, "time limit per tool call (0: none); on expiry the call is cancelled")
	terminate := flag.Duration("terminate", 2*time.Second, "after closing the server's stdin, wait this long before SIGTERM")
	acceptElicitation := flag.Bool("accept-elicitation", false, "declare elicitation and accept each one with {\"confirmed\": true}")
	httpURL := flag.String("http", "", "talk to a Streamable HTTP server at this URL instead of running CMD")
	flag.Var(&calls, "call", "tool call NAME=JSON-ARGS (repeatable; default echo and add)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: client [flags] -- CMD ARGS...  (or client -http URL [flags])")
		flag.PrintDefaults()
	}
	flag.Parse()
	argv := flag.Args()
	if len(argv) == 0 && *httpURL == "" {
		flag.Usage()
		os.Exit(2)
	}
	if len(calls) == 0 {
		calls = callFlag{`echo={"message":"hi"}`, `add={"a":2,"b":3}`}
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	var transport mcp.Transport
	if *httpURL != "" {
		transport = &mcp.StreamableClientTransport{Endpoint: *httpURL}
	} else {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stderr = os.Stderr
		transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: *terminate}
	}
	var opts *mcp.ClientOptions
	if *acceptElicitation {
		opts = &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			emit(map[string]any{"step": "elicitation", "message": req.Params.Message})
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirmed": true}}, nil
		}}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "rpctap-gosdk-client", Version: "v0.1.0"}, opts)
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		fail("connect: %v", err)
	}
	ir := cs.InitializeResult()
	step := map[string]any{"step": "connect"}
	if ir != nil {
		step["protocolVersion"] = ir.ProtocolVersion
		step["server"] = ir.ServerInfo
	}
	emit(step)

	if *list {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			fail("tools/list: %v", err)
		}
		names := make([]string, 0, len(res.Tools))
		for _, t := range res.Tools {
			names = append(names, t.Name)
		}
		emit(map[string]any{"step": "tools/list", "tools": names})
	}

	for _, c := range calls {
		name, raw, ok := strings.Cut(c, "=")
		if !ok {
			raw = "{}"
		}
		var args map[string]any
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			fail("-call %q: arguments: %v", c, err)
		}
		cctx, ccancel := ctx, context.CancelFunc(func() {})
		if *callTimeout > 0 {
			cctx, ccancel = context.WithTimeout(ctx, *callTimeout)
		}
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: name, Arguments: args})
		timedOut := cctx.Err() != nil && ctx.Err() == nil
		ccancel()
		if err != nil && timedOut {
			// The SDK sent notifications/cancelled for the request.
			emit(map[string]any{"step": "tools/call", "tool": name, "arguments": args, "cancelled": true, "error": err.Error()})
			continue
		}
		if err != nil {
			fail("tools/call %s: %v", name, err)
		}
		emit(map[string]any{
			"step":              "tools/call",
			"tool":              name,
			"arguments":         args,
			"isError":           res.IsError,
			"content":           res.Content,
			"structuredContent": res.StructuredContent,
		})
	}

	if err := cs.Close(); err != nil {
		// A server stopped by SIGTERM after the grace period reports an error
		// here; that is not a protocol failure.
		fmt.Fprintln(os.Stderr, "gosdk-client: close:", err)
	}
}
