// Command rpctap watches and injects JSON-RPC traffic on a process's stdio.
package main

import (
	"fmt"
	"os"
)

func main() {
	root := newRootCmd()
	if err := root.Execute(); err != nil {
		var ex exitError
		if asExit(err, &ex) {
			if ex.msg != "" {
				fmt.Fprintln(os.Stderr, "rpctap:", ex.msg)
			}
			os.Exit(ex.code)
		}
		fmt.Fprintln(os.Stderr, "rpctap:", err)
		os.Exit(2)
	}
}
