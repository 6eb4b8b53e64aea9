package main

// docs/commands.md is made from the command tree: go generate rewrites it,
// and TestCommandReferenceIsCurrent fails when it is stale.
//go:generate go test -run TestCommandReferenceIsCurrent -update .
