// Command rpctap watches and injects JSON-RPC traffic on a process's stdio.
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
