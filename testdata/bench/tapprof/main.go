// Command tapprof runs a tap the way "rpctap run" does (same defaults:
// auto framing and profile, recording, live socket, redaction), for
// profiling only: it is a bench helper, not the product. Usage:
//
//	tapprof [-record FILE|-no-record] [-no-listen] [-no-redact] -- CMD ARGS...
//
// Environment:
//
//	RPCTAP_CPUPROFILE=FILE  write a CPU profile (go tool pprof)
//	RPCTAP_MEMPROFILE=FILE  write a heap profile at the end
//	RPCTAP_TRACE=FILE       write an execution trace (go tool trace)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"syscall"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/tap"
)

func main() {
	record := flag.String("record", "", "session file")
	noRecord := flag.Bool("no-record", false, "do not record")
	noListen := flag.Bool("no-listen", false, "no live socket")
	noRedact := flag.Bool("no-redact", false, "no redaction")
	stdinWait := flag.Duration("stdin-grace", 0, "as rpctap run --stdin-grace (0: never)")
	flag.Parse()
	if p := os.Getenv("RPCTAP_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		must(err)
		must(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	if p := os.Getenv("RPCTAP_TRACE"); p != "" {
		f, err := os.Create(p)
		must(err)
		must(trace.Start(f))
		defer trace.Stop()
	}
	framing, _ := classify.ParseFraming("auto")
	profile, _ := classify.ParseProfile("auto")
	t, err := tap.New(tap.Options{Argv: flag.Args(), Framing: framing, Profile: profile, Timeout: classify.DefaultTimeout,
		Record: !*noRecord, Path: *record, NoRedact: *noRedact, Listen: !*noListen, StdinWait: *stdinWait,
		Warn: func(s string) { fmt.Fprintln(os.Stderr, "tapprof:", s) }})
	must(err)
	signal.Ignore(syscall.SIGPIPE)
	res, err := t.Run(context.Background(), os.Stdin, os.Stdout, os.Stderr)
	must(err)
	if p := os.Getenv("RPCTAP_MEMPROFILE"); p != "" {
		f, err := os.Create(p)
		must(err)
		runtime.GC()
		must(pprof.Lookup("heap").WriteTo(f, 0))
		f.Close()
	}
	if res.ExitCode != 0 {
		fmt.Fprintln(os.Stderr, "tapprof: server exit", res.ExitCode)
	}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "tapprof:", err)
		os.Exit(1)
	}
}
