package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// watch with no terminal (no controlling terminal: a CI job, a service)
// refuses before it starts anything: no server, no host, no session file.
func TestWatchWithNoTerminalStartsNothing(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "started")
	for _, args := range [][]string{
		{"watch", "--", "sh", "-c", "touch " + mark},
		{"watch", "--host", "touch " + mark + " # {}", "--", "sh", "-c", "touch " + mark},
	} {
		cmd := exec.Command(rpctapBinary(t), args...)
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no controlling terminal
		var errs bytes.Buffer
		cmd.Stderr = &errs
		err := cmd.Run()
		ee, _ := err.(*exec.ExitError)
		if ee == nil || ee.ExitCode() != 2 || !strings.Contains(errs.String(), "needs a terminal") || !strings.Contains(errs.String(), "use: rpctap run -- sh -c") {
			t.Errorf("rpctap %s with no terminal: %v, said %q; want exit 2 and what to use instead", strings.Join(args, " "), err, errs.String())
		}
		if _, err := os.Stat(mark); err == nil {
			t.Errorf("rpctap %s with no terminal started a process", strings.Join(args, " "))
			os.Remove(mark)
		}
		if files, _ := filepath.Glob(filepath.Join(dir, "state", "rpctap", "sessions", "*")); len(files) > 0 {
			t.Errorf("rpctap %s with no terminal recorded %v", strings.Join(args, " "), files)
		}
	}
}

// A server that fails at start-up is not hidden behind "exited with
// status 1": watch says its last stderr lines (masked and escaped, as
// the session file has them) and exits with its status.
func TestWatchSaysWhyAServerFailedAtStartUpAndExitsWithItsStatus(t *testing.T) {
	env := append(watchEnv(t, t.TempDir()), "API_TOKEN=supersecret123")
	for _, c := range []struct {
		script string
		code   int
		lines  string
	}{
		{"echo Error: missing API_KEY >&2; exit 1", 1, "Error: missing API_KEY\n"},
		{`echo starting >&2; printf 'bad token %s \033[2J\n' "$API_TOKEN" >&2; exit 7`, 7, "starting\nbad token ***API_TOKEN*** \\x1b[2J\n"},
	} {
		// The view may attach before the server is gone (it is quit
		// then), or not: either way watch says the same.
		stderr, code := runWatchCmd(t, env, "--", "sh", "-c", c.script)
		status := "rpctap: sh exited with status " + fmt.Sprint(c.code)
		lines := "; the last lines of its stderr:\n" + c.lines
		if code != c.code || !strings.Contains(stderr, status) || !strings.Contains(stderr, lines) || !strings.Contains(stderr, "rpctap: session recorded in ") {
			t.Errorf("watch -- sh -c %q: exit %d, said\n%s\nwant exit %d, %q and %q", c.script, code, stderr, c.code, status, lines)
		}
	}
}

// A server that exits at once may end the tap between its socket coming
// up and the view's attach (about 1 start in 20 here): watch then says
// the server's status and last words all the same, not that the tap is
// gone (exit 2, "no tap listens at … any more").
func TestWatchSaysTheStatusOfAServerThatExitsAsTheViewAttaches(t *testing.T) {
	env := watchEnv(t, t.TempDir())
	const starts = 50
	for i := range starts {
		stderr, code := runWatchCmd(t, env, "--", "sh", "-c", "echo starting >&2; exit 7")
		if code != 7 || !strings.Contains(stderr, "rpctap: sh exited with status 7") || !strings.Contains(stderr, "the last lines of its stderr:\nstarting\n") {
			t.Fatalf("start %d of %d: exit %d, said %q; want exit 7 and the server's last line", i+1, starts, code, stderr)
		}
	}
}

// A real server that fails at start-up: server-everything, given a
// transport it does not know, says so on stderr and exits 1; watch says
// that line among its last ones and exits 1.
func TestWatchSaysWhyServerEverythingFailedAtStartUp(t *testing.T) {
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	stderr, code := runWatchCmd(t, watchEnv(t, t.TempDir()), "--", server, "no-such-transport")
	said := " exited with status 1; the last lines of its stderr:\n"
	if code != 1 || !strings.Contains(stderr, said) || !strings.Contains(stderr[strings.Index(stderr, said)+1:], "\nUnknown transport: no-such-transport\n") {
		t.Errorf("watch -- mcp-server-everything no-such-transport: exit %d, said\n%s\nwant exit 1, %q and the server's line", code, stderr, said)
	}
}

// A server that exits by itself while the view shows it: the header
// says its exit status, and watch, once quit, exits with it and says
// the server's last stderr lines.
func TestWatchShowsAndExitsWithTheStatusOfAServerThatExited(t *testing.T) {
	dir := t.TempDir()
	env := watchEnv(t, dir)
	goOn := filepath.Join(dir, "go-on")
	server := "read line; while [ ! -e " + goOn + " ]; do sleep 0.05; done; echo Error: lost the database >&2; exit 7"
	waitfor, keys, _ := tmuxScreen(t, 80, 24, env[len(env)-3:], "sh", "-c", shellQuote(rpctapBinary(t))+" watch -- sh -c "+shellQuote(server)+"; echo EXIT=$?")
	waitfor("server/discov", "live")
	os.WriteFile(goOn, nil, 0o600)
	waitfor("ended, exit 7")
	keys("q")
	waitfor("rpctap: sh exited with status 7; the last lines of its stderr:", "Error: lost the database", "EXIT=7")
}

// A server that does not exit when rpctap's host ends the session after
// q is stopped by rpctap, which says so; watch then exits 0, since the
// user asked for the stop (rpctap watch … && next goes on). Only a
// server that ended by itself passes its status on.
func TestWatchExitsZeroWhenItHadToStopTheServerAfterQuit(t *testing.T) {
	env := watchEnv(t, t.TempDir())
	stderr, code := runWatchCmd(t, env, "--", "sh", "-c", "cat >/dev/null; exec sleep 100")
	const said = "rpctap: sh did not exit within 3 s of its stdin closing, so rpctap stopped it: it was ended by SIGTERM\n"
	if code != 0 || !strings.Contains(stderr, said) {
		t.Errorf("watch of a server that outlives its stdin, quit: exit %d, said\n%s\nwant exit 0 and %q", code, stderr, said)
	}
}
