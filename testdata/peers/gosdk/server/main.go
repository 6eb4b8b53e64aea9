// Command server is a small MCP server over stdio, built on the official Go
// SDK, for rpctap's end-to-end tests. Tools:
//
//	echo  {message}            returns the message
//	add   {a, b}               returns a+b (also as structured content)
//	sleep {duration}           waits (e.g. "1.5s"), honouring cancellation
//
// With -mrtr, also two multi round-trip calls (MCP 2026-07-28:
// input_required, asking the host for input, then the retry's answer):
//
//	confirm {action}           asks for an elicitation, returns
//	                           "confirmed ACTION" or "ACTION not confirmed (decline)"
//	summarize {text}           asks for sampling, returns the model's text
//
// It writes one line to stderr when it starts and when it stops.
// -echo-description TEXT lists echo with another description, as a new
// build of the server might.
package main

import (
	"flag"

	"github.com/rpctap/rpctap/testdata/peers/gosdk/tools"
)

func main() {
	describe := flag.String("echo-description", "", "the description echo is listed with (default: its own)")
	mrtr := flag.Bool("mrtr", false, "add the multi round-trip tools: confirm {action} (asks for an elicitation) and summarize {text} (asks for sampling)")
	httpAddr := flag.String("http", "", "serve Streamable HTTP at http://ADDR/mcp instead of stdio (ADDR as in 127.0.0.1:0)")
	flag.Parse()
	tools.Serve(false, *describe, *mrtr, *httpAddr)
}
