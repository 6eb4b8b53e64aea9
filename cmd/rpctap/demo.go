package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/internal/demo"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tap"
	"github.com/rpctap/rpctap/tui"

	"github.com/spf13/cobra"
)

// demoTimeout is the demo tap's pending-request timeout: short, so that
// timeouts and unanswered frames show within the demo.
const demoTimeout = 2 * time.Second

// demoSecretVar names the demo server's API key, which the tap masks.
const demoSecretVar = "RPCTAP_DEMO_API_KEY"

type demoOptions struct {
	list     bool
	scenario string
	speed    float64
	server   string
	lsp      bool
	noUI     bool
	record   string
	force    bool
}

func newDemoCmd() *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo [--scenario NAME] [--server strict|lenient] [--lsp] [--speed F] [--no-ui] [--record FILE]",
		Short: "Watch a live conversation go wrong in every way the envelope rules describe",
		Long: `Runs a real tap between a scripted host and a server, both built into rpctap,
and opens the live view on it. The scenario walks through a normal MCP
session (handshake, tools, progress, a server request, a cancellation, a
masked secret), then through every edge case of the inject catalog and the
envelope rules, each with a caption saying what happened and what the specs
require. The server is strict (it answers every invalid frame with the
error a strict peer owes) or lenient (it ignores what it cannot read, as
many real servers do). Keys: z pauses and resumes, . runs the next step,
, replays the last one; the rest are the live view's.

When stdout is not a terminal (or with --no-ui) the frames are printed as
rpctap tail prints them. The session is recorded like any other, so check,
tail and ui work on it.`,
		Example: `  rpctap demo
  rpctap demo --server lenient --speed 2
  rpctap demo --scenario leaky-error
  rpctap demo --lsp --no-ui --record lsp-demo.jsonl && rpctap check lsp-demo.jsonl`,
		Args: takesArgs(0, 0, "", "rpctap demo (rpctap demo --list names the scenarios)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.list {
				return listScenarios(cmd.OutOrStdout(), o.lsp)
			}
			if o.server != "strict" && o.server != "lenient" {
				return usageError(fmt.Errorf("--server is strict or lenient, not %s", classify.EscapeString(o.server, 20)))
			}
			if !(o.speed > 0) || o.speed > 1000 {
				return usageError(errors.New("--speed is a number above 0 and up to 1000, as in --speed 2"))
			}
			if err := checkRecordPath(o.record, o.force); err != nil {
				return err
			}
			if !isTerminal(os.Stdout) {
				o.noUI = true
			}
			return runDemo(cmd.OutOrStdout(), o)
		}}
	f := cmd.Flags()
	f.BoolVar(&o.list, "list", false, "list the scenarios and steps, and exit")
	f.StringVar(&o.scenario, "scenario", "tour", "a scenario (tour, session, edge-cases) or the name of one step")
	f.Float64Var(&o.speed, "speed", 1, "play faster (2) or slower (0.5)")
	f.StringVar(&o.server, "server", "strict", "strict or lenient")
	f.BoolVar(&o.lsp, "lsp", false, "the same with Content-Length framing and LSP methods")
	f.BoolVar(&o.noUI, "no-ui", false, "print the frames as rpctap tail does, with no live view")
	f.StringVar(&o.record, "record", "", "the session file to write (default: one in the state directory, as for rpctap run); one that is there is refused, unless --force")
	f.BoolVar(&o.force, "force", false, "write over the --record file when it is there")
	return cmd
}

func listScenarios(w io.Writer, lsp bool) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tWHAT IT PLAYS")
	for _, s := range demo.Scenarios {
		fmt.Fprintf(tw, "%s\t%s\n", s.Name, s.About)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nSteps (--scenario STEP plays the handshake, then that step):\n  %s\n", strings.Join(demo.StepNames(lsp), " "))
	return nil
}

// runDemo runs the demo's tap, with the demo server behind it and the
// scripted host in front, and shows it.
func runDemo(stdout io.Writer, o demoOptions) error {
	steps, err := demo.Steps(o.scenario, o.lsp)
	if err != nil {
		return usageError(err)
	}
	if o.scenario == "http" {
		return runDemoHTTP(stdout, o, steps)
	}
	opts, err := demoTapOptions(o)
	if err != nil {
		return err
	}
	var sigs <-chan os.Signal // nil: the tap catches them all
	if !o.noUI {
		hangup() // from now on, SIGHUP ends the view, and the view the demo
		sigs = viewSignals()
	}
	opts.Signals = sigs
	t, err := tap.New(opts)
	if err != nil {
		return usageError(err)
	}
	// The host's pipes: real ones, as a host's would be.
	hostR, tapOut, err := os.Pipe()
	if err != nil {
		return err
	}
	tapIn, hostW, err := os.Pipe()
	if err != nil {
		return err
	}
	host := demo.NewHost(hostR, hostW, o.lsp)
	host.Timeout, host.Speed, host.Note = demoTimeout, o.speed, t.Note
	runner := demo.NewRunner(steps, host)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := t.Start(ctx, tap.Pipes{In: tapIn, Out: tapOut, Err: io.Discard, After: func() { tapOut.Close() }})
	src, ended, err := ownSession(run, demoTimeout)
	if err != nil {
		host.Close()
		return fmt.Errorf("the demo could not start: %w", err)
	}
	playCtx, stopPlaying := context.WithCancel(ctx)
	defer stopPlaying()
	if ended {
		host.Close() // nothing is left to play: the view shows the session as it was
	} else {
		go playDemo(playCtx, ctx, runner, host, o.noUI)
	}
	if o.noUI {
		err = runTail(stdout, src, nil, false, src.Yield)
		src.Close()
	} else {
		err = runUI([]*source.Source{src}, tui.WithDemo(runner, demoStates(runner)))
		// The demo's host ends its session as a host does (LSP: shutdown
		// and exit), and closes the server's stdin; the tap signals a
		// server that has not exited within 3 s.
		stopPlaying()
		endCtx, endNow := context.WithTimeout(ctx, 5*time.Second)
		host.End(endCtx)
		endNow()
		run.WaitFor(3 * time.Second)
		cancel()
	}
	if endHere(run) && err == nil {
		_, err = run.Wait()
	}
	return err
}

// ownSession is the session of the tap this process runs (run), for a
// view: live, or, when the tap ended before the view could attach (see
// attachOwnTap), read from its session file, as it was recorded. ended
// says which.
func ownSession(run *tap.Running, timeout time.Duration) (src *source.Source, ended bool, err error) {
	src, ended, err = attachOwnTap(run)
	if !ended {
		return src, false, err
	}
	res, err := run.Wait()
	switch {
	case err != nil:
		return nil, true, err
	case res.Path == "":
		return nil, true, errors.New("the session ended before the view could attach, and it recorded no file to show it from")
	}
	src, err = source.OpenFile(res.Path, timeout)
	return src, true, err
}

// demoTapOptions are the options of the demo's tap: this binary's demo
// server behind it, strict or lenient, MCP or LSP, with an API key in its
// environment for the tap to mask.
func demoTapOptions(o demoOptions) (tap.Options, error) {
	self, err := os.Executable()
	if err != nil {
		return tap.Options{}, err
	}
	argv := []string{self, "demo-server", "--server", o.server}
	framing, profile, name := classify.FramingNDJSON, classify.MCP, "demo-"+o.server
	if o.lsp {
		argv = append(argv, "--lsp")
		framing, profile, name = classify.FramingLSP, classify.LSP, "demo-lsp-"+o.server
	}
	secret := make([]byte, 12)
	rand.Read(secret)
	env := append(os.Environ(), demoSecretVar+"=sk-demo-"+hex.EncodeToString(secret))
	return tap.Options{Argv: argv, Name: name, Framing: framing, Profile: profile, Timeout: demoTimeout,
		Record: true, Path: o.record, Overwrite: o.force, Listen: true, Env: env, TermWait: 3 * time.Second}, nil
}

// playDemo plays runner's steps until playCtx ends. With no view, it
// then lets what is still in flight time out and ends the session as a
// host does, unless ctx has ended.
func playDemo(playCtx, ctx context.Context, runner *demo.Runner, host *demo.Host, noUI bool) {
	if runner.Run(playCtx) != nil {
		return
	}
	if noUI {
		// Let what is still in flight time out, then end the
		// session as a host does: close the server's stdin.
		select {
		case <-time.After(demoTimeout + 500*time.Millisecond):
		case <-ctx.Done():
		}
		host.End(ctx)
	}
}

// demoStates passes runner's states on to the view as tui.DemoStates,
// up to the last.
func demoStates(runner *demo.Runner) <-chan tui.DemoState {
	states := make(chan tui.DemoState, 1)
	go func() {
		defer close(states)
		for st := range runner.States() {
			states <- tui.DemoState{Step: st.Step, Steps: st.Steps, Name: st.Name, Caption: st.Caption, Outcome: st.Outcome, Paused: st.Paused, Done: st.Done}
			if st.Done {
				return
			}
		}
	}()
	return states
}
