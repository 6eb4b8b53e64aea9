package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// What only the view needs is built when a view is made, not when rpctap
// starts: a tap a host launches pays nothing at its start for chroma's
// lexers and styles (chroma's registries build every one they hold in
// their packages' init, which the Go runtime runs at every start).
func TestStartupBuildsNoHighlighterForACommandWithNoView(t *testing.T) {
	bin := rpctapBinary(t)
	cmd := exec.Command(bin, "run", "--no-record", "--no-listen", "--", "true")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rpctap run -- true: %v\n%s", err, out)
	}
	inits := 0
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "init ") {
			continue
		}
		inits++
		pkg, _, _ := strings.Cut(strings.TrimPrefix(line, "init "), " ")
		if strings.HasPrefix(pkg, "github.com/alecthomas/chroma/v2/lexers") || strings.HasPrefix(pkg, "github.com/alecthomas/chroma/v2/styles") {
			t.Errorf("rpctap run initialises %s at its start, for a view it does not show:\n%s", pkg, line)
		}
	}
	if inits == 0 {
		t.Fatalf("GODEBUG=inittrace=1 printed no init line; the test cannot tell what rpctap initialises:\n%s", out)
	}
}
