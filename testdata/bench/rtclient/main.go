// Command rtclient measures request→response round trips over stdio. It
// spawns the server once per path and run: directly (pipes) and through
// each -path prefix, alternating paths within a run. In each spawn it does
// the MCP handshake, sends -warmup requests it does not count, then -n
// sequential tools/call requests, one at a time, timing each from just
// before its write to just after its answer's last byte is read.
//
//	rtclient [-n N] [-warmup N] [-runs N] -path NAME=PREFIX... -- SERVER [ARGS...]
//
// PREFIX is a command line split at spaces, put before SERVER; {run} in it
// is replaced by the run number (for session file names). The path
// "direct" (no prefix) is always measured first.
//
// Per-run figures go to stderr; at the end stdout gets one line per path
// with the best (lowest) p50 and p99 over the runs, in microseconds:
//
//	NAME p50_us P50 p99_us P99
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

type path struct {
	name   string
	prefix []string
}

type pathFlag []path

func (p *pathFlag) String() string { return "" }
func (p *pathFlag) Set(v string) error {
	name, prefix, ok := strings.Cut(v, "=")
	if !ok || name == "" || name == "direct" {
		return fmt.Errorf("want NAME=PREFIX (NAME not direct), got %q", v)
	}
	*p = append(*p, path{name: name, prefix: strings.Fields(prefix)})
	return nil
}

func main() {
	n := flag.Int("n", 10000, "measured round trips per run")
	warmup := flag.Int("warmup", 2000, "round trips before measuring, per run")
	runs := flag.Int("runs", 5, "runs (each path once per run)")
	var extra pathFlag
	flag.Var(&extra, "path", "NAME=PREFIX: also measure SERVER run under PREFIX (repeatable)")
	flag.Parse()
	server := flag.Args()
	if len(server) == 0 {
		fmt.Fprintln(os.Stderr, "usage: rtclient [flags] -path NAME=PREFIX... -- SERVER [ARGS...]")
		os.Exit(2)
	}
	paths := append([]path{{name: "direct"}}, extra...)
	best := map[string][2]time.Duration{}
	for run := 1; run <= *runs; run++ {
		for _, p := range paths {
			var argv []string
			for _, w := range p.prefix {
				argv = append(argv, strings.ReplaceAll(w, "{run}", strconv.Itoa(run)))
			}
			argv = append(argv, server...)
			lat, err := measure(argv, *warmup, *n)
			if err != nil {
				fmt.Fprintf(os.Stderr, "rtclient: %s: %v\n", p.name, err)
				os.Exit(1)
			}
			slices.Sort(lat)
			p50, p99 := pct(lat, 50), pct(lat, 99)
			fmt.Fprintf(os.Stderr, "run %d %-8s p50 %6.1f µs  p90 %6.1f µs  p99 %7.1f µs  max %8.1f µs\n",
				run, p.name, us(p50), us(pct(lat, 90)), us(p99), us(lat[len(lat)-1]))
			b, ok := best[p.name]
			if !ok {
				b = [2]time.Duration{p50, p99}
			}
			best[p.name] = [2]time.Duration{min(b[0], p50), min(b[1], p99)}
		}
	}
	for _, p := range paths {
		fmt.Printf("%s p50_us %.1f p99_us %.1f\n", p.name, us(best[p.name][0]), us(best[p.name][1]))
	}
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// pct is the p-th percentile of sorted durations (nearest rank).
func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(i-1, 0)]
}

// measure spawns argv and times n round trips after warmup ones.
func measure(argv []string, warmup, n int) ([]time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	in := bufio.NewReaderSize(stdout, 64<<10)
	// An MCP session starts with the handshake.
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rtclient","version":"1"}}}`+"\n"); err != nil {
		return nil, err
	}
	if _, err := in.ReadSlice('\n'); err != nil {
		return nil, fmt.Errorf("no answer to initialize: %w", err)
	}
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		return nil, err
	}
	lat := make([]time.Duration, 0, n)
	req := make([]byte, 0, 512)
	want := make([]byte, 0, 32)
	for i := 1; i <= warmup+n; i++ {
		req = append(req[:0], `{"jsonrpc":"2.0","id":`...)
		req = strconv.AppendInt(req, int64(i), 10)
		req = append(req, `,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Lisbon","units":"metric","days":3},"_meta":{"progressToken":"p-`...)
		req = strconv.AppendInt(req, int64(i), 10)
		req = append(req, "\"}}}\n"...)
		want = append(append(want[:0], `"id":`...), strconv.Itoa(i)...)
		want = append(want, ',')
		start := time.Now()
		if _, err := stdin.Write(req); err != nil {
			return nil, err
		}
		line, err := in.ReadSlice('\n')
		d := time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("request %d: %w", i, err)
		}
		if !bytes.Contains(line[:min(len(line), 64)], want) {
			return nil, fmt.Errorf("request %d answered by %.60q", i, line)
		}
		if i > warmup {
			lat = append(lat, d)
		}
	}
	stdin.Close()
	io.Copy(io.Discard, in)
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("%s: %w", argv[0], err)
	}
	return lat, nil
}
