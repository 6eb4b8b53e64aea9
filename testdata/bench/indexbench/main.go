// Command indexbench opens a session file the way the terminal UI does: it
// indexes it in the background while another goroutine, polling every
// millisecond as a UI's tick would, waits for the first screen of entries
// and reads the first record back for the detail pane. It prints when the
// first screen was ready, how long the whole file took, and the memory:
//
//	indexbench [-first N] [-cpuprofile FILE] SESSION-FILE
//
// .ci/bench/index runs it on a generated session of a million frames.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/rpctap/rpctap/sessions"
)

func main() {
	first := flag.Int("first", 50, "entries that make the first screen")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: indexbench [-first N] [-cpuprofile FILE] SESSION-FILE")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *first, *cpuprofile); err != nil {
		fmt.Fprintln(os.Stderr, "indexbench:", err)
		os.Exit(1)
	}
}

func run(path string, first int, cpuprofile string) error {
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	file, err := os.Open(path)
	if err != nil {
		return err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return err
	}

	start := time.Now()
	x := sessions.NewIndex(sessions.IndexOptions{})
	done := make(chan error, 1)
	go func() { done <- x.ReadFile(context.Background(), path, nil) }()

	// The UI's side: wait for a screenful, draw it, open the first record.
	var firstScreen time.Duration
	var rows []sessions.Entry
	finished := false
	tick := time.NewTicker(time.Millisecond)
	for firstScreen == 0 {
		select {
		case err := <-done:
			if err != nil {
				return err
			}
			finished = true
		case <-tick.C:
		}
		if x.Len() >= first || finished {
			rows = x.Entries(rows[:0], 0, first)
			if len(rows) > 0 {
				if _, err := sessions.ReadRecord(file, rows[0]); err != nil {
					return err
				}
			}
			firstScreen = time.Since(start)
		}
	}
	tick.Stop()
	if !finished {
		if err := <-done; err != nil {
			return err
		}
	}
	elapsed := time.Since(start)

	c := x.Counts()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	fmt.Printf("entries %d (h2s %d, s2h %d, errors %d, warnings %d, pending %d)\n", c.Entries, c.H2S, c.S2H, c.Errors, c.Warnings, c.Pending)
	fmt.Printf("first screen (%d entries) %.3f s; whole file %.3f s, %.0f MB/s, %.0f ns/entry\n",
		first, firstScreen.Seconds(), elapsed.Seconds(), float64(st.Size())/1e6/elapsed.Seconds(), float64(elapsed.Nanoseconds())/float64(c.Entries))
	fmt.Printf("heap in use after GC %d MB, %.0f bytes/entry; peak RSS %d MB; CPU %.2f s user, %.2f s system\n",
		ms.HeapInuse>>20, float64(ms.HeapInuse)/float64(max(c.Entries, 1)), ru.Maxrss/1024,
		time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds())
	runtime.KeepAlive(x)
	return nil
}
