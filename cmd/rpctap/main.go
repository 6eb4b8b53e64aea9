// Command rpctap watches and injects JSON-RPC traffic on a process's stdio.
//
// It sits between a host and a server (MCP or LSP), relays every byte
// unchanged, judges each frame by the envelope rules, records the session
// to a file and shows it live:
//
//	rpctap demo               a scripted conversation through a real tap
//	rpctap run -- SERVER      a tap in front of SERVER (what a host launches)
//	rpctap watch -- SERVER    a tap and the live view in one command
//	rpctap ui, tail, ls       the live view, a frame-by-frame print, a list
//	rpctap inject             a frame into a live session
//	rpctap check, diff        findings of a recording, two recordings compared
//	rpctap export, replay     a recording as another format, or played back
//	rpctap wrap, unwrap       a host's config entry through rpctap and back
//
// "rpctap help COMMAND" says the rest.
package main

import (
	"fmt"
	"os"
)

func main() {
	root := newRootCmd()
	if cmd, err := root.ExecuteC(); err != nil {
		err = explain(cmd, os.Args[1:], err)
		var ex exitError
		if asExit(err, &ex) {
			if ex.msg != "" {
				fmt.Fprintln(os.Stderr, "rpctap:", ex.msg)
			}
			os.Exit(ex.code)
		}
		fmt.Fprintln(os.Stderr, "rpctap:", plainFileError(err))
		os.Exit(2)
	}
}
