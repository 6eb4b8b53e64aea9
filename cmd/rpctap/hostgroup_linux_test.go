package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procState is the state letter /proc gives the process pid ("Z" for a
// zombie), or "" when there is no such process.
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return f[0]
}

// watch's host that has exited stays unreaped until watch is done with
// its process group: its pid, and so the group's id, cannot be given to
// another process meanwhile, and stopHost signals no stranger. A group
// left with only its exited leader counts as gone; one with a child of
// the host still running does not, and stopHost ends that child.
func TestAnExitedHostKeepsItsGroupsIDUntilWatchIsDoneWithIt(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 3")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !awaitExit(pid) {
		t.Fatal("awaitExit could not wait for the host")
	}
	if s := procState(pid); s != "Z" {
		t.Errorf("the exited host is in state %q; want Z, unreaped, its pid still taken", s)
	}
	if groupLives(pid) {
		t.Error("a group left with only its exited leader counts as alive")
	}
	stopHost(pid)
	if err := cmd.Wait(); cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("reaping the host: %v; want its exit status 3", err)
	}
	if s := procState(pid); s != "" {
		t.Errorf("the host is still there once reaped, in state %q", s)
	}

	// The host left a child in its group.
	mark := filepath.Join(t.TempDir(), "child")
	cmd = exec.Command("sh", "-c", `sleep 100 & echo $! > `+mark+`; exit 0`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid = cmd.Process.Pid
	defer cmd.Wait()
	if !awaitExit(pid) {
		t.Fatal("awaitExit could not wait for the host")
	}
	b, _ := os.ReadFile(mark)
	child, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("the host's child: %q", b)
	}
	if !groupLives(pid) {
		t.Fatal("a group with the host's child running counts as gone")
	}
	stopHost(pid)
	for deadline := time.Now().Add(5 * time.Second); groupLives(pid) && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
	}
	if s := procState(child); s != "" && s != "Z" {
		t.Errorf("the host's child is still running after stopHost (state %q)", s)
	}
}
