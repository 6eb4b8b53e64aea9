package main

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/tap"
)

// Argument errors are one sentence saying what to type, with an example,
// never cobra's defaults; each exits 2.
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
		{[]string{"run", "--bogus", "ls"}, []string{"rpctap run has no flag --bogus", "rpctap run --help lists its flags", "as in: rpctap run -- my-server"}},
		{[]string{"run", "-l", "ls"}, []string{"rpctap run has no flag -l", "as in: rpctap run -- my-server"}},
		{[]string{"ls", "--bogus"}, []string{"rpctap ls has no flag --bogus", "rpctap ls --help"}},
		{[]string{"--bogus"}, []string{"rpctap has no flag --bogus", "rpctap --help lists its flags"}},
		{[]string{"chek"}, []string{`rpctap has no command "chek"`, "did you mean check?", "rpctap --help"}},
		// The newer commands, flag values and files that are not there.
		{[]string{"check", "--fromat", "json", "x"}, []string{"rpctap check has no flag --fromat (did you mean --format?)"}},
		{[]string{"check", "--timeout", "soon", "x"}, []string{`--timeout takes a duration such as 30s, 2m or 1h30m, not "soon"`, "as in: rpctap check --timeout 30s session.jsonl"}},
		{[]string{"check", "/no/such.jsonl"}, []string{"cannot check: there is no file /no/such.jsonl", "rpctap ls lists recent sessions"}},
		{[]string{"ls", "--recent", "x"}, []string{`--recent takes a whole number such as 10, not "x"`, "as in: rpctap ls --recent 50"}},
		{[]string{"tail", "/no/such.jsonl"}, []string{"there is no file /no/such.jsonl, and no live tap has that name", "rpctap ls"}},
		{[]string{"replay"}, []string{"rpctap replay needs --as-server FILE or --as-host FILE", "as in: rpctap replay --as-server "}},
		{[]string{"replay", "--as-server"}, []string{"--as-server needs a value", "as in: rpctap replay --as-server session.jsonl"}},
		{[]string{"replay", "--bogus"}, []string{"rpctap replay has no flag --bogus", "as in: rpctap replay --as-host SESSION.jsonl -- my-server"}},
		{[]string{"replay", "--as-server", "/no/such.jsonl"}, []string{"there is no file /no/such.jsonl", "rpctap ls lists recent sessions"}},
		{[]string{"replay", "--as-server", "x", "--speed", "fast"}, []string{`--speed takes a number such as 2 or 1.5, not "fast"`, "as in: rpctap replay --speed 2 --as-server "}},
		{[]string{"diff", "a"}, []string{"rpctap diff needs two session files", "as in: rpctap diff before.jsonl after.jsonl"}},
		{[]string{"diff", "/no/such.jsonl", "b"}, []string{"cannot compare: there is no file /no/such.jsonl", "rpctap ls lists recent sessions"}},
		{[]string{"export"}, []string{"rpctap export needs one session file", "as in: rpctap export "}},
		{[]string{"export", "x", "--max-frames"}, []string{"--max-frames needs a value", "as in: rpctap export session.jsonl --format mermaid --max-frames 100"}},
		{[]string{"export", "x", "--max-frames", "-5"}, []string{"--max-frames takes a number of records, or -1 for all, not -5", "--max-frames 2000"}},
		{[]string{"sessions", "rm"}, []string{"rpctap sessions rm needs the session files to remove", "as in: rpctap sessions rm "}},
		{[]string{"sessions", "prune", "--older-than"}, []string{"--older-than needs a value", "as in: rpctap sessions prune --older-than 2w"}},
		{[]string{"wrap"}, []string{"rpctap wrap needs a host and one of its servers", "as in: rpctap wrap claude-desktop everything"}},
		{[]string{"wrap", "--config", "/no/such.json", "claude-desktop", "x"}, []string{"cannot read the config file: there is no file /no/such.json"}},
		{[]string{"inject"}, []string{"give the frame to inject", "as in: rpctap inject "}},
		{[]string{"inject", "--file", "/no/such"}, []string{"cannot read the frame: there is no file /no/such"}},
		{[]string{"inject", "--wait", "x", "{}"}, []string{`--wait takes a duration such as 30s, 2m or 1h30m, not "x"`, "as in: rpctap inject --wait 30s "}},
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
		for _, cobra := range []string{"arg(s)", "only received", "unknown shorthand flag", "accepts ", "unknown flag:", "flag needs an argument",
			"invalid argument", "no such file or directory", "rpctap: rpctap:"} {
			if strings.Contains(msg, cobra) {
				t.Errorf("rpctap %s said %q: cobra's default wording", strings.Join(c.args, " "), msg)
			}
		}
	}
}

// The flags of rpctap run stop at the server's command, so
// rpctap run ls -la runs ls -la (as env, nice and timeout do) instead of
// refusing -l.
func TestRunTakesFlagsAfterTheServerCommandAsTheServers(t *testing.T) {
	cmd := exec.Command(rpctapBinary(t), "run", "--no-record", "--no-listen", "echo", "-n", "--version")
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "--version" {
		t.Errorf("rpctap run echo -n --version: %v, printed %q; want the server's own --version", err, out)
	}
}

// With several live taps to choose from, the error gives the user's own
// command line back with the tap named by its pid.
func TestSeveralLiveTapsAreNamedWithTheCommandToType(t *testing.T) {
	root := newRootCmd()
	amb := &tap.AmbiguousError{Target: "srv", Taps: []tap.Info{{Name: "srv", PID: 41}, {Name: "srv", PID: 42}}}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"inject", "--tap", "srv", "--capture", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
			`2 live taps are named srv (srv with pid 41, srv with pid 42); name one by its pid with --tap, as in: rpctap inject --tap 41 --capture '{"jsonrpc":"2.0","id":1,"method":"ping"}'`},
		{[]string{"inject", "--tap=srv", "--catalog", "null-id-request"}, "as in: rpctap inject --tap 41 --catalog null-id-request"},
		{[]string{"tail", "srv"}, "2 live taps are named srv (srv with pid 41, srv with pid 42); name one by its pid, as in: rpctap tail 41"},
		{[]string{"ui", "srv"}, "as in: rpctap ui 41"},
	} {
		cmd, _, err := root.Find(c.args)
		if err != nil {
			t.Fatal(err)
		}
		var ex exitError
		if err := explain(cmd, c.args, fmt.Errorf("opening: %w", amb)); !errors.As(err, &ex) || ex.code != 2 || !strings.Contains(ex.msg, c.want) {
			t.Errorf("rpctap %s with two taps: %v; want exit 2 saying %q", strings.Join(c.args, " "), err, c.want)
		}
	}
}

// A word that names no command gets one sentence per thought: the
// suggestion ends with its question mark, not with "?.".
func TestAnUnknownCommandIsOneSentenceWithItsQuestionMark(t *testing.T) {
	root := newRootCmd()
	for word, want := range map[string]string{
		"wach":   `rpctap has no command "wach"; did you mean watch? rpctap --help lists the commands; start with: rpctap demo`,
		"zzzzzz": `rpctap has no command "zzzzzz". rpctap --help lists the commands; start with: rpctap demo`,
	} {
		if err := unknownCommand(root, []string{word}); err == nil || err.Error() != want {
			t.Errorf("rpctap %s: %v\nwant %s", word, err, want)
		}
	}
}
