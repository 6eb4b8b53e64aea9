// Command cpuof runs CMD with its stdio and says how much CPU CMD itself
// used, apart from the processes it ran (a tap's server), and its wall
// time and peak RSS: it waits for CMD to exit without reaping it, reads
// the exited process's own CPU times from /proc (they are in clock
// ticks, usually 10 ms), then reaps it and exits with its status. The
// line goes to FILE:
//
//	self_s 0.21 children_s 0.35 wall_s 0.41 rss_kib 12345
//
//	cpuof -o FILE CMD [ARGS...]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	out := flag.String("o", "", "write the figures to this file")
	flag.Parse()
	if flag.NArg() == 0 || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: cpuof -o FILE CMD [ARGS...]")
		os.Exit(2)
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "cpuof:", err)
		os.Exit(127)
	}
	pid := cmd.Process.Pid
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != syscall.EINTR {
			if err != nil {
				fmt.Fprintln(os.Stderr, "cpuof:", err)
				os.Exit(1)
			}
			break
		}
	}
	wall := time.Since(start)
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpuof:", err)
		os.Exit(1)
	}
	// The fields after the command's name, which is in parentheses.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	tick := func(i int) float64 { // field i of stat(5), counted from 1
		n, _ := strconv.ParseFloat(f[i-3], 64)
		return n / 100 // USER_HZ
	}
	self, children := tick(14)+tick(15), tick(16)+tick(17)
	state, _ := cmd.Process.Wait()
	var rss int64
	if ru, ok := state.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	line := fmt.Sprintf("self_s %.2f children_s %.2f wall_s %.4f rss_kib %d\n", self, children, wall.Seconds(), rss)
	if err := os.WriteFile(*out, []byte(line), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "cpuof:", err)
		os.Exit(1)
	}
	os.Exit(state.ExitCode())
}
