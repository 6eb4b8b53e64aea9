// Command server is a small MCP server over stdio, built on the official Go
// SDK, for rpctap's end-to-end tests. Tools:
//
//	echo  {message}            returns the message
//	add   {a, b}               returns a+b (also as structured content)
//	sleep {duration}           waits (e.g. "1.5s"), honouring cancellation
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
	flag.Parse()
	tools.Serve(false, *describe)
}
