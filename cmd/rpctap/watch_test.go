package main

import (
	"bytes"
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
