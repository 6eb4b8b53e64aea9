// Command pingpong is the bare baseline of the replay benchmark: it spawns
// SERVER once and does what replay --as-host does with the benchmark's
// recordings, with nothing in between: it sends N tools/call requests of
// about 1 KiB, WINDOW at a time in one write, and reads WINDOW answer
// lines before the next requests. It checks each answer's id, and prints
// how long the round trips took.
//
//	pingpong [-n N] [-window W] [-start-file F] -- SERVER [ARGS...]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

func main() {
	n := flag.Int("n", 100_000, "requests")
	window := flag.Int("window", 1, "requests sent before their answers are read")
	startFile := flag.String("start-file", "", "wait for this file to exist before the first request (so observers can attach first); the time counts from then")
	flag.Parse()
	if flag.NArg() == 0 || *window < 1 {
		fmt.Fprintln(os.Stderr, "usage: pingpong [-n N] [-window W] -- SERVER [ARGS...]")
		os.Exit(2)
	}
	if err := run(flag.Args(), *n, *window, *startFile); err != nil {
		fmt.Fprintln(os.Stderr, "pingpong:", err)
		os.Exit(1)
	}
}

func run(argv []string, n, window int, startFile string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	in := bufio.NewReaderSize(stdout, 64<<10)
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)[:880]
	var out []byte
	if startFile != "" {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(startFile); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("no %s after 30 s", startFile)
			}
		}
	}
	start := time.Now()
	for first := 0; first < n; first += window {
		last := min(first+window, n)
		out = out[:0]
		for i := first; i < last; i++ {
			out = append(out, `{"jsonrpc":"2.0","id":`...)
			out = strconv.AppendInt(out, int64(i), 10)
			out = append(out, `,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`...)
			out = append(out, text...)
			out = append(out, `","n":`...)
			out = strconv.AppendInt(out, int64(i), 10)
			out = append(out, "}}}\n"...)
		}
		if _, err := stdin.Write(out); err != nil {
			return err
		}
		for i := first; i < last; i++ {
			line, err := in.ReadSlice('\n')
			if err != nil {
				return fmt.Errorf("request %d: %w", i, err)
			}
			want := `"id":` + strconv.Itoa(i) + ","
			if !bytes.Contains(line[:min(len(line), 64)], []byte(want)) {
				return fmt.Errorf("request %d answered by %.60q", i, line)
			}
		}
	}
	took := time.Since(start)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	fmt.Printf("%d round trips, %d in flight: %.2f s\n", n, window, took.Seconds())
	return nil
}
