// Command drifted is the gosdk test server with one answer changed: echo
// answers in upper case. Everything else (tools, schemas, server info) is
// what server answers, so that replay --as-host of a session recorded with
// server reports exactly that one difference.
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
	tools.Serve(true, *describe, *mrtr, *httpAddr)
}
