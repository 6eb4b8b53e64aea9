package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/internal/earlysignal"
	"github.com/rpctap/rpctap/tap"
	"github.com/spf13/cobra"
)

type runOptions struct {
	tapFlags
	otlpFlags
	framing, profile           string
	verbose                    bool
	methodTimeouts             []string
	timeout                    time.Duration
	stdinWait, termWait, drain time.Duration
	intercept                  string
	holdTimeout                time.Duration
}

func newRunCmd() *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [flags] -- CMD [ARGS...]",
		Short: "Run a server behind a transparent tap (what a host launches instead of the server)",
		Long: `Starts CMD and relays the host's stdin to it and its stdout back, byte for
byte, recording the session and serving live views ("rpctap ui", "rpctap ls").
CMD's stderr passes through unchanged. rpctap exits with CMD's exit status
(128+signal when a signal ended it) and prints nothing of its own unless
something goes wrong or --verbose is given.

The host decides when CMD stops, as if it ran CMD itself: when the host
closes stdin, CMD's stdin is closed; SIGINT, SIGTERM and SIGHUP are passed
on to CMD (and its process group); when the host stops reading, CMD's
stdout is closed. rpctap ends when CMD has exited and its stdout has
closed. It never stops CMD, nor cuts its output short, on a timer of its
own, unless --stdin-grace, --term-grace or --drain asks it to.

With --no-record, while no view, tail, OTLP collector or intercept reads
the session, rpctap only relays, as fast as a bare relay (rpctap ls still
counts the frames); the first view or tail that attaches, or the first
injection, begins the record, at the next frame: it starts with a note
that says so, and holds every frame from there on.`,
		Args: takesArgs(1, -1, "the server's command", "rpctap run -- npx -y @modelcontextprotocol/server-everything stdio"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTap(cmd, args, o)
		},
	}
	f := cmd.Flags()
	o.tapFlags.add(f, "the command's base name", "the value of env var NAME")
	f.StringVar(&o.framing, "framing", "auto", "ndjson (MCP), lsp (Content-Length) or auto (decided per direction)")
	f.StringVar(&o.profile, "profile", "auto", "rules to judge by: auto, jsonrpc, mcp or lsp")
	f.DurationVar(&o.timeout, "timeout", classify.DefaultTimeout, "how long a request may wait for its answer before it is flagged")
	methodTimeoutFlag(f, &o.methodTimeouts)
	f.BoolVar(&o.verbose, "verbose", false, "say where the session is recorded and how it ended")
	f.DurationVar(&o.stdinWait, "stdin-grace", 0, "send CMD SIGTERM when it has not exited this long after the host closed stdin (default: never; the host decides when to stop CMD)")
	f.DurationVar(&o.termWait, "term-grace", 0, "send CMD SIGKILL when it has not exited this long after it was signalled to stop, by the host or by --stdin-grace (default: never)")
	o.otlpFlags.add(f)
	f.DurationVar(&o.drain, "drain", 0, "once CMD has exited, stop reading its stdout when it stays silent this long, for a child of CMD that holds it open (default: read until it closes, as a host would)")
	f.StringVar(&o.intercept, "intercept", "", "hold frames that match this filter (as in the view: 'method:tools/call', 'dir:s2h kind:response') until a view forwards, edits, drops or answers them")
	f.DurationVar(&o.holdTimeout, "hold-timeout", tap.DefaultHoldTimeout, "with --intercept, or when a view intercepts: how long a frame is held at most before it goes on as it was")
	return serverCommand(cmd, "rpctap run -- my-server --stdio")
}

func runTap(cmd *cobra.Command, argv []string, o runOptions) error {
	framing, err := classify.ParseFraming(o.framing)
	if err != nil {
		return usageError(err)
	}
	profile, err := classify.ParseProfile(o.profile)
	if err != nil {
		return usageError(err)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// The tap's memory does not grow with the traffic, but a large
		// frame passes through buffers of up to 16 MiB a direction (and
		// its record, one at a time): collect garbage sooner than usual
		// past this size, so that the tap stays small beside the host.
		debug.SetMemoryLimit(runMemoryLimit)
	}
	methodTimeouts, err := parseMethodTimeouts(o.methodTimeouts)
	if err != nil {
		return usageError(err)
	}
	stderr := cmd.ErrOrStderr()
	warn := o.warner(stderr)
	topts := tap.Options{Argv: argv, Name: o.name, Framing: framing, Profile: profile, Timeout: o.timeout, MethodTimeouts: methodTimeouts,
		Record: !o.noRecord, Path: o.record, Overwrite: o.force, Redact: o.redact, NoRedact: o.noRedact, Listen: !o.noListen,
		StdinWait: o.stdinWait, TermWait: o.termWait, Drain: o.drain, Signals: runSignals(), Warn: warn,
		Intercept: o.intercept, HoldTimeout: o.holdTimeout}
	if topts.Calls, err = o.calls(); err != nil {
		return err
	}
	t, err := tap.New(topts)
	if err != nil {
		return usageError(err)
	}
	if topts.Calls != nil {
		service := o.name
		if service == "" {
			service = filepath.Base(argv[0])
		}
		if err := o.start(service, t.ID(), warn); err != nil {
			return err
		}
	}
	// A host that stops reading must not kill the tap before the server
	// has been shut down: writes to a closed stdout return an error.
	signal.Ignore(syscall.SIGPIPE)
	res, err := t.Run(context.Background(), os.Stdin, os.Stdout, stderr)
	o.otlpFlags.close(o.verbose, warn)
	if err != nil {
		return exitError{code: max(res.ExitCode, 1), msg: plainFileError(err)}
	}
	if o.verbose {
		if res.Path != "" {
			warn("session recorded in " + res.Path)
		}
		warn(fmt.Sprintf("%s exited with status %d", argv[0], res.ExitCode))
	}
	if res.ExitCode != 0 {
		return exitError{code: res.ExitCode}
	}
	return nil
}

// runSignals are the signals rpctap run passes on, caught since the
// process started (see earlysignal).
func runSignals() <-chan os.Signal {
	if earlysignal.Run != nil {
		return earlysignal.Run
	}
	c := make(chan os.Signal, 8)
	signal.Notify(c, earlysignal.Passed()...)
	return c
}

// runMemoryLimit is the Go heap size past which rpctap run collects
// garbage eagerly (a soft limit: it never fails an allocation).
const runMemoryLimit = 48 << 20
