//go:build !linux

package main

import "testing"

// watchOnTerminal needs a pseudo-terminal, which the tests open on Linux.
func watchOnTerminal(t *testing.T, env []string, args ...string) (string, int) {
	t.Skip("the tests open pseudo-terminals on Linux only")
	return "", 0
}
