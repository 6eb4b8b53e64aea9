package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPty opens a pseudo-terminal of 80×24: the master (the terminal
// window's side) and the slave (the program's terminal).
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	// Non-blocking, so that the file is in Go's poller: closing it then
	// ends the read that waits on it, and the pty itself is closed at
	// once (a read blocked in the kernel would hold it open).
	fd, err := syscall.Open("/dev/ptmx", syscall.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	m := os.NewFile(uintptr(fd), "/dev/ptmx")
	ioctl := func(req uintptr, arg unsafe.Pointer) {
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, uintptr(arg)); e != 0 {
			t.Fatalf("ioctl %#x on /dev/ptmx: %v", req, e)
		}
	}
	unlock, n := int32(0), uint32(0)
	ioctl(syscall.TIOCSPTLCK, unsafe.Pointer(&unlock))
	ioctl(syscall.TIOCGPTN, unsafe.Pointer(&n))
	ws := [4]uint16{24, 80, 0, 0} // rows, columns
	ioctl(syscall.TIOCSWINSZ, unsafe.Pointer(&ws))
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// terminalAnswers is what a terminal answers to the queries in out: the
// background (OSC 11) and foreground (OSC 10) colours and the cursor's
// position (DSR), in their order.
func terminalAnswers(out []byte) []byte {
	var a []byte
	for len(out) > 0 {
		i := bytes.IndexByte(out, 0x1b)
		if i < 0 {
			break
		}
		out = out[i:]
		switch {
		case bytes.HasPrefix(out, []byte("\x1b]11;?")):
			a = append(a, "\x1b]11;rgb:0000/0000/0000\x1b\\"...)
		case bytes.HasPrefix(out, []byte("\x1b]10;?")):
			a = append(a, "\x1b]10;rgb:ffff/ffff/ffff\x1b\\"...)
		case bytes.HasPrefix(out, []byte("\x1b[6n")):
			a = append(a, "\x1b[1;1R"...)
		}
		out = out[1:]
	}
	return a
}

// onTerminal starts argv in a session of its own whose controlling
// terminal is a new pty, and returns what the terminal showed so far
// and a function that closes the terminal window (the pty's master).
func onTerminal(t *testing.T, env []string, argv ...string) (cmd *exec.Cmd, screen func() string, closeWindow func()) {
	t.Helper()
	master, slave := openPty(t)
	cmd = exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var mu sync.Mutex
	var out bytes.Buffer
	go func() {
		b := make([]byte, 32<<10)
		for {
			n, err := master.Read(b)
			mu.Lock()
			out.Write(b[:n])
			mu.Unlock()
			// The terminal answers the view's questions about its
			// colours, and where its cursor is, as a terminal window
			// does; each unanswered one waits 5 s.
			master.Write(terminalAnswers(b[:n]))
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		master.Close()
		cmd.Process.Kill()
	})
	screen = func() string {
		mu.Lock()
		defer mu.Unlock()
		return out.String()
	}
	return cmd, screen, func() { master.Close() }
}

// Closing the terminal window ends every view rpctap shows on a terminal,
// as q would, within seconds, whether the process gets SIGHUP (watch and
// demo, whose taps catch it) or ignores it (a shell's trap: then the
// terminal's reads and requests fail). A tap that runs in the view's
// process ends as q ends it: the held frames go, the server's stdin is
// closed, and the session ends with the server's own exit (status 0, no
// signal).
func TestAViewWhoseTerminalGoesAwayEndsAsQuitWould(t *testing.T) {
	bin := rpctapBinary(t)
	open, err := filepath.Abs("../../testdata/sessions/conversations/cancelled.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	// A session with no exit record: tail -f follows it for good.
	unended := filepath.Join(t.TempDir(), "unended.jsonl")
	b, err := os.ReadFile(open)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimRight(string(b), "\n"), "\n")
	os.WriteFile(unended, []byte(strings.Join(lines[:len(lines)-1], "")), 0o600)
	if strings.Contains(lines[len(lines)-2], `"event":"exit"`) || !strings.Contains(lines[len(lines)-1], `"event":"exit"`) {
		t.Fatalf("%s should end with its exit record, alone", open)
	}
	ignoringHUP := func(argv ...string) []string {
		var q []string
		for _, a := range argv {
			q = append(q, shellQuote(a))
		}
		return []string{"sh", "-c", "trap '' HUP; exec " + strings.Join(q, " ")}
	}
	for _, c := range []struct {
		name    string
		argv    []string
		shows   string // on the screen once the view is up
		session bool   // the view's own tap records a session
	}{
		// cat echoes rpctap's server/discover: a request from the
		// server, which rpctap's host answers; and so on, to
		// initialize.
		{"watch", []string{bin, "watch", "--", "cat"}, "initialize", true},
		{"watch ignoring SIGHUP", ignoringHUP(bin, "watch", "--", "cat"), "initialize", true},
		{"demo", []string{bin, "demo", "--speed", "0.2"}, "initialize", true},
		{"ui ignoring SIGHUP", ignoringHUP(bin, "ui", open), "initialize", false},
		{"tail -f on a terminal, ignoring SIGHUP", ignoringHUP(bin, "tail", "-f", unended), "initialize", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			env := watchEnv(t, dir)
			cmd, screen, closeWindow := onTerminal(t, env, c.argv...)
			for deadline := time.Now().Add(30 * time.Second); !strings.Contains(screen(), c.shows); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the terminal never showed %q:\n%q", c.shows, screen())
				}
			}
			time.Sleep(500 * time.Millisecond) // the view is up and drawing
			closeWindow()
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case <-exited:
			case <-time.After(20 * time.Second):
				var st []byte
				if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)); err == nil {
					st = b
				}
				t.Fatalf("rpctap still runs 20 s after its terminal went away (%s)", st)
			}
			if !c.session {
				return
			}
			files, _ := filepath.Glob(filepath.Join(dir, "state", "rpctap", "sessions", "*.jsonl"))
			if len(files) != 1 {
				t.Fatalf("sessions recorded: %v", files)
			}
			b, _ := os.ReadFile(files[0])
			last := strings.TrimSpace(string(b))
			last = last[strings.LastIndexByte(last, '\n')+1:]
			if !strings.Contains(last, `"event":"exit","code":0}`) {
				t.Errorf("the session does not end with the server's own exit (its stdin closed): %s", last)
			}
		})
	}
}
