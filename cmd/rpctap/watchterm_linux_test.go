package main

import (
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// watchOnTerminal runs rpctap watch ARGS on a terminal of its own (a pty,
// its controlling terminal, answering the view's questions as a terminal
// window does) and quits the view (q) once it shows. It returns what
// watch wrote on stderr, apart from the screen, and its exit status.
func watchOnTerminal(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	master, slave := openPty(t)
	defer master.Close()
	cmd := exec.Command(rpctapBinary(t), append([]string{"watch"}, args...)...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		b := make([]byte, 32<<10)
		quit := false
		for {
			n, err := master.Read(b)
			mu.Lock()
			screen.Write(b[:n])
			shows := strings.Contains(screen.String(), " pending") // the view's header
			mu.Unlock()
			master.Write(terminalAnswers(b[:n]))
			if shows && !quit {
				master.Write([]byte("q"))
				quit = true
			}
			if err != nil {
				return
			}
		}
	}()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("rpctap watch %q did not end within 20 s; stderr: %s\nscreen: %q", args, stderr.String(), screen.String())
	}
	return stderr.String(), cmd.ProcessState.ExitCode()
}
