package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/sessions/replay"
	"github.com/rpctap/rpctap/tap"
	"github.com/spf13/cobra"
)

type replayOptions struct {
	asServer, asHost         string
	match, unmatched         string
	ignore                   []string
	speed                    float64
	noDelay, strictVersion   bool
	verbose, quiet           bool
	record                   string
	noRecord, force          bool
	exitCode, json           bool
	notifications            bool
	redact                   []string
	timeout, grace, termWait time.Duration
	http, target             string
}

func newReplayCmd() *cobra.Command {
	var o replayOptions
	cmd := &cobra.Command{
		Use:   "replay (--as-server FILE [--http ADDR] | --as-host FILE (--target URL | [--] CMD [ARGS...])) [flags]",
		Short: "Play a recording back: as the server for a live host, or as the host against a fresh server",
		Long: `rpctap replay --as-server FILE plays the recorded server on stdio: put it in a
host's configuration in place of the real server. Each request the host
sends is answered with the recorded answer of a recorded request of the
same call, its id rewritten to the host's: the same method and what it
names (tools/call and prompts/get: the name; resources/read: the uri;
completion/complete: the ref; textDocument/*: the document, and the
position when there is one), the same arguments (tools/call, prompts/get,
completion/complete), then the closest params, compared structurally
(ids, "_meta", LSP progress tokens and --ignore paths do not count). A
secret the recording masked compares equal to any value. The server's
notifications and requests are played after the frame they came after in
the recording, with their recorded delays. A request with no match gets a
JSON-RPC error that names the nearest recorded request and every path
that differs from it. The retry of a multi round-trip call (MCP
2026-07-28: a new id, with inputResponses and requestState) is answered
only from the recorded retry of the call replay answered input_required,
when it sends back the requestState replay handed out and the recorded
inputResponses. Nothing but protocol frames is written to stdout;
--verbose says on stderr what replay does, and the replay is recorded in
a session file of its own.

rpctap replay --as-host FILE -- CMD plays the recorded host against a fresh
server CMD: it sends the host's frames in order, waits for each answer
where the recording did, answers the server's requests as the host did,
records a new session, and compares every answer with the recorded one
(a list of named items, such as tools, item by item by name; a secret the
recording masked equal to any value). A multi round-trip call is retried
with the live server's requestState and reported once, from its first
request to its final answer, with its rounds. It prints a report;
--exit-code exits 1 on any difference.

With --http ADDR, --as-server serves the recording as a Streamable HTTP
server on ADDR and prints the URL to give the host (the recorded path;
/mcp for a stdio recording), until it is interrupted. Each POST is
answered as a frame on stdio, on the response its recorded answer came
on: the recorded status, JSON or an event stream, and Mcp-Session-Id; a
notification gets the recorded 202. The server's notifications and
requests go out on the live response of the exchange they were recorded
in, or on an open GET stream. A GET and a DELETE are answered as the
recording's were (405 when it has none). The replay records an HTTP
session of its own.

With --target URL, --as-host plays the recorded host against the
Streamable HTTP server at URL: each message in a POST of its own with its
recorded headers, the live server's Mcp-Session-Id in place of the
recorded one, and the recorded GETs and DELETEs, through an HTTP tap that
records the run as rpctap http does; it reports as with a command. An LSP
recording has no HTTP transport.

Both modes mask what the recording masked (its header names the
secrets: their values are taken from the environment), the environment's
secrets and what --redact names, in everything they write and show.`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.asServer == "" && o.asHost == "":
				return usageError(errors.New("rpctap replay needs --as-server FILE or --as-host FILE, as in: rpctap replay --as-server SESSION.jsonl (rpctap ls lists recent sessions)"))
			case o.asServer != "" && o.asHost != "":
				return usageError(errors.New("rpctap replay plays one side: give --as-server FILE or --as-host FILE, not both"))
			case o.unmatched != "error" && o.unmatched != "forward":
				return usageError(fmt.Errorf("unknown --unmatched %q: use error or forward", o.unmatched))
			case o.http != "" && o.unmatched == "forward":
				return usageError(errors.New("--unmatched forward is not supported over HTTP yet: leave it out to answer what the recording cannot with an error, or replay on stdio"))
			case o.asServer != "" && o.unmatched == "forward" && len(args) == 0:
				return usageError(errors.New("rpctap replay --unmatched forward needs the real server's command, as in: rpctap replay --as-server SESSION.jsonl --unmatched forward -- my-server"))
			case o.asServer != "" && o.unmatched != "forward" && len(args) > 0:
				return usageError(fmt.Errorf("rpctap replay --as-server is the server itself and runs no command, but was given %s; to send what the recording cannot answer to a real server, add --unmatched forward; to play the host against a server, use: rpctap replay --as-host FILE -- CMD", quoteArgs(args)))
			case o.http != "" && o.asServer == "":
				return usageError(errors.New("--http serves a recording: give it with --as-server FILE; to play a recorded host against a Streamable HTTP server, use --as-host FILE --target URL"))
			case o.target != "" && o.asHost == "":
				return usageError(errors.New("--target names the server a recorded host is played against: give it with --as-host FILE; to serve a recording over HTTP, use --as-server FILE --http ADDR"))
			case o.http != "" && len(args) > 0:
				return usageError(fmt.Errorf("rpctap replay --as-server --http serves the recording itself and runs no command, but was given %s (--unmatched forward is not supported over HTTP yet)", quoteArgs(args)))
			case o.target != "" && len(args) > 0:
				return usageError(fmt.Errorf("rpctap replay --as-host --target plays the host against the server at the URL and runs no command, but was given %s; give the URL or the command, not both", quoteArgs(args)))
			case o.asHost != "" && o.target == "" && len(args) == 0:
				return usageError(errors.New("rpctap replay --as-host needs the server's command, as in: rpctap replay --as-host SESSION.jsonl -- npx -y @modelcontextprotocol/server-everything stdio"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkReplayRecord(o.record, o.asServer+o.asHost, o.force, o.asHost != ""); err != nil {
				return err
			}
			switch {
			case o.http != "":
				return runReplayHTTPServer(cmd, o)
			case o.target != "":
				return runReplayHTTPHost(cmd, o)
			case o.asServer != "":
				return runReplayServer(cmd, args, o)
			}
			return runReplayHost(cmd, args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.asServer, "as-server", "", "play the recorded server of this session file on stdio")
	f.StringVar(&o.asHost, "as-host", "", "play the recorded host of this session file against CMD, or the server at --target")
	f.StringVar(&o.http, "http", "", "serve the recording as a Streamable HTTP server on this address, as in 127.0.0.1:8080 (127.0.0.1:0: a free port); it prints the URL to give the host (--as-server)")
	f.StringVar(&o.target, "target", "", "play the recorded host against the Streamable HTTP server at this URL, as in http://127.0.0.1:3001/mcp (--as-host)")
	f.StringVar(&o.unmatched, "unmatched", "error", "what --as-server does with a request the recording cannot answer: error (a JSON-RPC error saying why) or forward (to the real server CMD, behind a tap that records it)")
	f.StringVar(&o.match, "match", replay.MatchBest, "how host requests find their recorded answer among those of the same call: best (the same arguments, then the closest params), sequential (in the recorded order, whatever the params) or strict (equal params) (--as-server)")
	f.StringArrayVar(&o.ignore, "ignore", nil, "a JSON pointer from the message's root to leave out of comparisons, as in /result/content/0/text (a segment * matches anything); repeatable")
	f.Float64Var(&o.speed, "speed", 1, "play the recorded delays this many times faster (--as-server)")
	f.BoolVar(&o.noDelay, "no-delay", false, "send recorded frames as soon as they are due, with no recorded delays (--as-server)")
	f.BoolVar(&o.strictVersion, "strict-version", false, "answer initialize only when the host asks for the recorded protocol version, and a request only from one of the revision its params._meta names (MCP 2026-07-28) (--as-server)")
	f.BoolVar(&o.verbose, "verbose", false, "say on stderr what replay does")
	f.BoolVar(&o.quiet, "quiet", false, "print nothing of rpctap's own on stderr, not even warnings")
	f.StringVar(&o.record, "record", "", "write the replayed session to this file (default: a new file in the state directory)")
	f.BoolVar(&o.noRecord, "no-record", false, "do not write a session file of the replay")
	f.BoolVar(&o.force, "force", false, "write over the --record file when it is there (default: --as-host refuses it; --as-server, which a host starts, records beside it under a new name)")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit 1 when an answer differs from the recording (--as-host)")
	f.BoolVar(&o.json, "json", false, "print the report as one JSON document (--as-host)")
	f.BoolVar(&o.notifications, "notifications", false, "also compare the order of the server's notifications (--as-host)")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "how long to wait for each answer before it counts as missing (--as-host)")
	f.DurationVar(&o.grace, "stdin-grace", 2*time.Second, "once the recorded host is done, SIGTERM the server when it has not exited this long after its stdin was closed (--as-host)")
	f.DurationVar(&o.termWait, "term-grace", 2*time.Second, "SIGKILL the server when it has not exited this long after SIGTERM (--as-host)")
	f.StringArrayVar(&o.redact, "redact", nil, "also mask the value of environment variable NAME, or VALUE with --redact NAME=VALUE, in what replay writes and shows, as rpctap run --redact does (what the recording masked is masked too); repeatable")
	return serverCommand(cmd, "rpctap replay --as-host SESSION.jsonl -- my-server --stdio")
}

func (o replayOptions) parseIgnore() (sessions.Ignore, error) {
	ig, err := sessions.ParseIgnore(o.ignore)
	if err != nil {
		return ig, usageError(err)
	}
	return ig, nil
}

// replaySignals ends ctx on SIGINT, SIGTERM or SIGHUP (caught since the
// process started, see earlysignal), with a replay.Stopped cause, and
// passes each signal on to pass (for a tap's server) without waiting.
func replaySignals(pass chan<- os.Signal) (context.Context, func()) {
	in := runSignals()
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-in:
				s, _ := sig.(syscall.Signal)
				cancel(replay.Stopped{Code: 128 + int(s), Signal: tap.SignalName(s)})
				select {
				case pass <- sig:
				default:
				}
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}

// stoppedBy is the exit of a replay a signal stopped, or nil.
func stoppedBy(ctx context.Context) error {
	var st replay.Stopped
	if errors.As(context.Cause(ctx), &st) {
		return exitError{code: st.Code}
	}
	return nil
}

// serveFlags checks the flags of a replay as the server, and reads
// --ignore.
func (o replayOptions) serveFlags() (sessions.Ignore, error) {
	switch o.match {
	case replay.MatchBest, replay.MatchSequential, replay.MatchStrict:
	default:
		return sessions.Ignore{}, usageError(fmt.Errorf("unknown --match %q: use best, sequential or strict", o.match))
	}
	if o.speed <= 0 {
		return sessions.Ignore{}, usageError(fmt.Errorf("--speed must be more than 0 (2 plays twice as fast), not %g", o.speed))
	}
	return o.parseIgnore()
}

func runReplayServer(cmd *cobra.Command, argv []string, o replayOptions) error {
	ig, err := o.serveFlags()
	if err != nil {
		return err
	}
	framing, err := replay.FramingOf(o.asServer)
	if err != nil {
		return exitError{code: 2, msg: plainFileError(err)}
	}
	stderr := cmd.ErrOrStderr()
	red, err := o.redaction(o.asServer, stderr)
	if err != nil {
		return err
	}
	opts := o.serveOptions(ig, stderr)
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := replaySignals(nil)
	defer stop()
	var realTap *tap.Running
	if len(argv) > 0 {
		// The real server behind a tap of its own, which records what is
		// forwarded; its stderr is replay's. Replay is its host.
		toServer, hostIn := io.Pipe()
		fromServer, hostOut := io.Pipe()
		realTap, err = tap.Start(ctx, tap.Options{Argv: argv, Framing: framing, Record: !o.noRecord, Redact: red.Flags, Signals: make(chan os.Signal), Warn: o.warner(stderr)}, tap.Pipes{In: toServer, Out: hostOut, Err: stderr, After: func() {
			hostOut.Close()
			toServer.Close()
		}})
		if err != nil {
			return usageError(err)
		}
		// The replay masks its own session as the tap masks the real
		// server's.
		opts.Redactor = realTap.Tap().Redactor()
		opts.Forward = &replay.Forward{To: hostIn, From: replay.Bodies(classify.NewFrameReader(fromServer, framing, 0)), Close: hostIn.Close}
	} else if opts.Redactor, err = sessions.NewRedactor(os.Environ(), red.Flags); err != nil {
		return usageError(err)
	}
	st, err := replay.Serve(ctx, o.asServer, replay.Bodies(classify.NewFrameReader(cmd.InOrStdin(), framing, 0)), cmd.OutOrStdout(), opts)
	if realTap != nil {
		realTap.Wait() // the real server has its stdin closed, and exits
	}
	if err := stoppedBy(ctx); err != nil {
		return err
	}
	if err != nil {
		return exitError{code: 2, msg: plainFileError(err)}
	}
	o.summary(stderr, st)
	return nil
}

// serveOptions are the options of a replay as the server.
func (o replayOptions) serveOptions(ig sessions.Ignore, stderr io.Writer) replay.ServeOptions {
	opts := replay.ServeOptions{Match: o.match, Ignore: ig, Speed: o.speed, NoDelay: o.noDelay, StrictVersion: o.strictVersion,
		Record: !o.noRecord, RecordPath: o.record, Argv: append([]string{"rpctap", "replay", "--as-server"}, o.asServer)}
	if o.http != "" {
		opts.Argv = append(opts.Argv, "--http", o.http)
	}
	opts.Overwrite, opts.Warn, opts.Log = o.force, o.warner(stderr), o.logger(stderr)
	return opts
}

// warner says a warning of replay's on stderr, unless --quiet.
func (o replayOptions) warner(stderr io.Writer) func(string) {
	return func(msg string) {
		if !o.quiet {
			fmt.Fprintln(stderr, "rpctap replay:", msg)
		}
	}
}

// logger says on stderr what replay does, with --verbose (nil without).
func (o replayOptions) logger(stderr io.Writer) func(string) {
	if !o.verbose || o.quiet {
		return nil
	}
	return func(msg string) { fmt.Fprintln(stderr, "rpctap replay:", msg) }
}

// summary says with --verbose what a replay as the server did.
func (o replayOptions) summary(stderr io.Writer, st replay.Stats) {
	if !o.verbose || o.quiet {
		return
	}
	retries := ""
	switch {
	case st.Retries == 1:
		retries = " (1 the retry of a multi round-trip call)"
	case st.Retries > 1:
		retries = fmt.Sprintf(" (%d retries of multi round-trip calls)", st.Retries)
	}
	fmt.Fprintf(stderr, "rpctap replay: %s answered from the recording%s, %d forwarded, %d without a match; %s sent\n", plural(st.Answered, "request"), retries, st.Forwarded, st.Unmatched, plural(st.Sent, "frame"))
	if st.Path != "" {
		fmt.Fprintln(stderr, "rpctap replay: session recorded in", st.Path)
	}
}

// redaction is what a replay of the recording at path masks: what the
// recording masked, what --redact names (the config file's redact
// included) and the environment's secrets. It warns of the names the
// recording lists to mask that the environment does not set (a name is
// listed whether or not a frame held its value).
func (o replayOptions) redaction(path string, stderr io.Writer) (replay.Redaction, error) {
	red, err := replay.RedactionOf(path, os.Environ(), o.redact)
	if err != nil {
		return red, exitError{code: 2, msg: plainFileError(err)}
	}
	if len(red.Unset) > 0 && !o.quiet {
		names := strings.Join(red.Unset, ", ")
		fmt.Fprintf(stderr, "rpctap replay: the recording names %s among the secrets to mask, which this environment does not set: a value the recording masked still compares equal to any value, but replay cannot mask that secret in what it writes; set %s, or add --redact %s=VALUE\n",
			classify.EscapeString(names, 200), classify.EscapeString(red.Unset[0], 80), classify.EscapeString(red.Unset[0], 80))
	}
	return red, nil
}

func runReplayHost(cmd *cobra.Command, argv []string, o replayOptions) error {
	ig, err := o.parseIgnore()
	if err != nil {
		return err
	}
	framing, err := replay.FramingOf(o.asHost)
	if err != nil {
		return exitError{code: 2, msg: plainFileError(err)}
	}
	stderr := cmd.ErrOrStderr()
	warn := o.warner(stderr)
	red, err := o.redaction(o.asHost, stderr)
	if err != nil {
		return err
	}
	// A signal stops the player and goes on to the server, which the tap
	// then sees out as rpctap run does.
	pass := make(chan os.Signal, 8)
	ctx, stop := replaySignals(pass)
	defer stop()
	t, err := tap.New(tap.Options{Argv: argv, Framing: framing, Record: !o.noRecord, Path: o.record, Overwrite: o.force, Redact: red.Flags,
		StdinWait: o.grace, TermWait: o.termWait, Warn: warn, Signals: pass})
	if err != nil {
		return usageError(err)
	}
	// The tap masks in its recording what the recording masked and the
	// secrets of the environment; the comparison, the report and the
	// server's stderr mask the same, with its redactor.
	redact := t.Redactor()
	opts := replay.HostOptions{Ignore: ig, Timeout: o.timeout, Notifications: o.notifications, Redactor: redact, Log: o.logger(stderr)}
	conn, err := replay.NewHostConn(o.asHost, framing, opts)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	signal.Ignore(syscall.SIGPIPE)
	// rpctap is the server's host here, and shows the server's stderr
	// to the user: masked and escaped, a line at a time, as every text
	// rpctap shows from a peer (run passes it on unchanged instead: there
	// it is the host's).
	serverErr := &lineEscaper{w: stderr}
	errOut := t.MaskingWriter(serverErr)
	running := t.Start(context.Background(), tap.Pipes{In: conn.ServerInput(), Out: conn.ServerOutput(), Err: errOut, After: func() {
		errOut.Close()
		serverErr.Close()
		conn.ServerOutput().Close()
		conn.ServerInput().Close()
	}})
	rep, err := conn.Play(ctx)
	res, runErr := running.Wait()
	if err := stoppedBy(ctx); err != nil {
		return err
	}
	if err != nil {
		return exitError{code: 2, msg: plainFileError(err)}
	}
	if runErr != nil {
		return exitError{code: 2, msg: runErr.Error()}
	}
	out := cmd.OutOrStdout()
	// The server's command line is masked as the tap masks it in the
	// session's header (a --token=SECRET argument).
	run := replay.HostRun{File: o.asHost, Argv: redact.MaskStrings(argv), Session: res.Path, ExitCode: res.ExitCode}
	if o.json {
		replay.WriteHostJSON(out, run, rep)
	} else {
		replay.WriteHostText(out, run, rep)
	}
	if o.exitCode && rep.Differs() {
		return exitError{code: 1}
	}
	return nil
}
