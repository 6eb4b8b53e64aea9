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

// A tap killed with SIGKILL (no handler runs) takes its server with it,
// however the server treats its stdin: the kernel kills it. A server that
// did not read stdin ran on, with no one left to stop it.
func TestASIGKILLedTapLeavesNoServerBehind(t *testing.T) {
	dir := t.TempDir()
	mark := "RPCTAP_TEST_MARK=" + filepath.Base(dir) + strconv.Itoa(os.Getpid())
	cmd := exec.Command(rpctapBinary(t), "run", "--no-listen", "--no-record", "--", "sleep", "1000")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+dir, mark)
	stdin, err := cmd.StdinPipe() // held open: the server never sees its stdin end
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, pid := range processesWith(mark) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	// The tap and its server.
	for deadline := time.Now().Add(10 * time.Second); len(processesWith(mark)) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not start within 10 s (processes %v)", processesWith(mark))
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		left := processesWith(mark)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server still runs 5 s after its tap was killed (pids %v)", left)
		}
	}
}

// rpctap watch --host with a host that never starts the server: watch
// stopped while it waits for the server (^C, SIGTERM, its terminal
// closed) takes the host with it, a host that ignores SIGTERM too. The
// host ran on after watch had gone.
func TestWatchStoppedBeforeTheHostStartsTheServerTakesTheHostWithIt(t *testing.T) {
	bin := rpctapBinary(t)
	for _, c := range []struct {
		name string
		host string
		stop func(cmd *exec.Cmd, closeWindow func())
	}{
		{"^C", "sleep 1000 # {}", func(cmd *exec.Cmd, _ func()) { cmd.Process.Signal(syscall.SIGINT) }},
		{"SIGTERM, the host ignoring it", "trap '' TERM; sleep 1000 # {}", func(cmd *exec.Cmd, _ func()) { cmd.Process.Signal(syscall.SIGTERM) }},
		{"the terminal closed", "sleep 1000 # {}", func(_ *exec.Cmd, closeWindow func()) { closeWindow() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			mark := "RPCTAP_TEST_MARK=" + filepath.Base(dir) + strconv.Itoa(os.Getpid())
			cmd, screen, closeWindow := onTerminal(t, append(watchEnv(t, dir), mark), bin, "watch", "--host", c.host, "--", "cat")
			defer func() {
				for _, pid := range processesWith(mark) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}()
			// watch, the host's shell and its sleep.
			for deadline := time.Now().Add(10 * time.Second); len(processesWith(mark)) < 3; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the host did not start within 10 s (processes %v); the screen: %q", processesWith(mark), screen())
				}
			}
			// The blank terminal says what watch waits for, and how to stop it.
			for deadline := time.Now().Add(10 * time.Second); !strings.Contains(screen(), "waiting for the host to start the server (up to 15 s); ^C stops the host and watch"); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("watch did not say what it waits for; the screen: %q", screen())
				}
			}
			c.stop(cmd, closeWindow)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("watch did not end within 10 s; the screen: %q", screen())
			}
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				left := processesWith(mark)
				if len(left) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the host still runs 5 s after watch ended (pids %v); the screen: %q", left, screen())
				}
			}
		})
	}
}
