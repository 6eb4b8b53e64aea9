package main

// docs/commands.md is made from the command tree, and the table of
// docs/findings.md from the rules check reports by: go generate rewrites
// them, and TestCommandReferenceIsCurrent and TestFindingCodesPageIsCurrent
// fail when they are stale.
//go:generate go test -run TestCommandReferenceIsCurrent|TestFindingCodesPageIsCurrent -update .
