// Command server is a small MCP server over stdio, built on the official Go
// SDK, for rpctap's end-to-end tests. Tools:
//
//	echo  {message}            returns the message
//	add   {a, b}               returns a+b (also as structured content)
//	sleep {duration}           waits (e.g. "1.5s"), honouring cancellation
//
// With -confirm, also:
//
//	confirm {action}           asks the host to confirm (a multi round-trip
//	                           call: input_required with an elicitation,
//	                           then the retry's answer), returns
//	                           "confirmed ACTION" or "ACTION not confirmed (decline)"
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
	withConfirm := flag.Bool("confirm", false, "add the tool confirm {action}, a multi round-trip call that asks the host to confirm (elicitation)")
	flag.Parse()
	tools.Serve(false, *describe, *withConfirm)
}
