package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// Issue 10 point 19: argument errors are one sentence saying what to type,
// with an example, never cobra's defaults; each exits 2.
func TestArgumentErrorsSayWhatToTypeWithAnExample(t *testing.T) {
	for _, c := range []struct {
		args []string
		says []string
	}{
		{[]string{"run"}, []string{"rpctap run needs the server's command", "as in: rpctap run -- "}},
		{[]string{"watch"}, []string{"rpctap watch needs the server's command", "as in: rpctap watch -- "}},
		{[]string{"check"}, []string{"rpctap check needs one session file", "as in: rpctap check "}},
		{[]string{"check", "a", "b"}, []string{"rpctap check takes one session file", `given 2 arguments ("a" "b")`}},
		{[]string{"ls", "x"}, []string{"rpctap ls takes no arguments", `"x"`, "rpctap ui FILE"}},
		{[]string{"tail", "a", "b"}, []string{"rpctap tail takes one session file or live tap"}},
		{[]string{"demo", "now"}, []string{"rpctap demo takes no arguments"}},
		{[]string{"classify", "x"}, []string{"rpctap classify takes no arguments", "| rpctap classify"}},
		{[]string{"run", "--bogus", "ls"}, []string{"unknown flag: --bogus", "rpctap run --help lists its flags", "as in: rpctap run -- my-server"}},
		{[]string{"ls", "--bogus"}, []string{"unknown flag: --bogus", "rpctap ls --help"}},
		{[]string{"chek"}, []string{`rpctap has no command "chek"`, "did you mean check?", "rpctap --help"}},
	} {
		cmd := exec.Command(rpctapBinary(t), c.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		msg := stderr.String()
		if code != 2 || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "rpctap: ") {
			t.Errorf("rpctap %s: exit %d, said %q; want one line and exit 2", strings.Join(c.args, " "), code, msg)
		}
		for _, s := range c.says {
			if !strings.Contains(msg, s) {
				t.Errorf("rpctap %s said %q, without %q", strings.Join(c.args, " "), msg, s)
			}
		}
		for _, cobra := range []string{"arg(s)", "only received", "unknown shorthand flag", "accepts "} {
			if strings.Contains(msg, cobra) {
				t.Errorf("rpctap %s said %q: cobra's default wording", strings.Join(c.args, " "), msg)
			}
		}
	}
}

// Issue 10 point 19: rpctap run's own flags stop at the server's command,
// so rpctap run ls -la runs ls -la (as env, nice and timeout do) instead of
// refusing -l.
func TestRunTakesFlagsAfterTheServerCommandAsTheServers(t *testing.T) {
	cmd := exec.Command(rpctapBinary(t), "run", "--no-record", "--no-listen", "echo", "-n", "--version")
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "--version" {
		t.Errorf("rpctap run echo -n --version: %v, printed %q; want the server's own --version", err, out)
	}
}
