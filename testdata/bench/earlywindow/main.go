// Command earlywindow measures how long after its start a program that
// catches SIGTERM still dies of it: it starts each command TRIES times,
// one command after the other, sends it SIGTERM a delay after starting it
// (spread evenly over 0 to MAX, the same delays for every command), waits
// for it, and counts the tries that ended killed by the signal: their
// share of the tries, times MAX, is the window's length. The delay
// counts from when exec has replaced the child's image (os/exec's Start
// returns then), so what it shows includes the kernel's exec and the
// dynamic loader. A command that lets a signal go (it is still running
// 10 s later) is killed and counted as lost.
//
//	earlywindow [-tries N] [-max D] -path NAME=CMD [-path NAME=CMD ...]
//
// CMD is split at spaces, or, written sh:SCRIPT, is /bin/sh -c SCRIPT; its
// stdin is a pipe held open until it ends.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

type path struct {
	name   string
	argv   []string
	killed []time.Duration
	lost   int
}

type paths []*path

func (p *paths) String() string { return "" }

func (p *paths) Set(v string) error {
	name, cmd, ok := strings.Cut(v, "=")
	if !ok || name == "" || len(strings.Fields(cmd)) == 0 {
		return fmt.Errorf("want NAME=CMD, got %q", v)
	}
	argv := strings.Fields(cmd)
	if script, ok := strings.CutPrefix(cmd, "sh:"); ok {
		argv = []string{"/bin/sh", "-c", script}
	}
	*p = append(*p, &path{name: name, argv: argv})
	return nil
}

func main() {
	tries := flag.Int("tries", 200, "tries per command")
	maxDelay := flag.Duration("max", 20*time.Millisecond, "the longest delay")
	var ps paths
	flag.Var(&ps, "path", "NAME=CMD, a command to measure (repeatable)")
	flag.Parse()
	if len(ps) == 0 || *tries < 1 {
		fmt.Fprintln(os.Stderr, "usage: earlywindow [-tries N] [-max D] -path NAME=CMD [-path NAME=CMD ...]")
		os.Exit(2)
	}
	for i := range *tries {
		delay := time.Duration((float64(i) + rand.Float64()) / float64(*tries) * float64(*maxDelay))
		for _, p := range ps {
			killed, err := try(p.argv, delay)
			if err != nil {
				fmt.Fprintf(os.Stderr, "earlywindow: %s: %v\n", p.name, err)
				os.Exit(1)
			}
			switch killed {
			case "killed":
				p.killed = append(p.killed, delay)
			case "lost":
				p.lost++
			}
		}
	}
	// The delays are spread evenly, so the share of tries killed, times
	// MAX, is how long the window is, on average over the tries.
	for _, p := range ps {
		latest := time.Duration(0)
		for _, d := range p.killed {
			latest = max(latest, d)
		}
		share := float64(len(p.killed)) / float64(*tries)
		fmt.Printf("%-10s window %6.2f ms  killed %3d of %d, the latest at %6.2f ms, lost %d\n", p.name,
			share*float64(*maxDelay)/float64(time.Millisecond), len(p.killed), *tries, float64(latest)/float64(time.Millisecond), p.lost)
	}
}

// try starts argv, sends it SIGTERM after delay and says how it ended:
// "killed" by the signal, "lost" (still running 10 s later), or "ended".
func try(argv []string, delay time.Duration) (string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		return "", err
	}
	// Spinning: a sleep is far coarser than these delays.
	for start := time.Now(); time.Since(start) < delay; {
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		return "lost", nil
	}
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() && ws.Signal() == syscall.SIGTERM {
		return "killed", nil
	}
	return "ended", nil
}
