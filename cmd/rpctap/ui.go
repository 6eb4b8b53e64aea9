package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/filter"
	"github.com/rpctap/rpctap/internal/hostconfig"
	"github.com/rpctap/rpctap/internal/playhost"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
	"github.com/rpctap/rpctap/tui"
	"github.com/spf13/cobra"
)

func newUICmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ui [TARGET...]",
		Short: "Open the live view: live taps and recorded sessions",
		Long: `With no TARGET, lists live taps and recent sessions to open. A TARGET is a
session file (opened read-only, also while a tap still writes it) or a live
tap (its name, pid or socket). q quits the view; live taps keep running.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var srcs []*tui.Source
			for _, a := range args {
				src, err := tui.OpenTarget(a)
				if err != nil {
					return err
				}
				srcs = append(srcs, src)
			}
			return runUI(srcs)
		},
	}
}

// runUI runs the program on the terminal device: keys come from it, never
// from a protocol pipe.
func runUI(srcs []*tui.Source, opts ...tui.Option) error { return runUIUntil(nil, srcs, opts...) }

// runUIUntil is runUI that also ends, as q ends it, when quit closes.
func runUIUntil(quit <-chan struct{}, srcs []*tui.Source, opts ...tui.Option) error {
	c, err := loadUserConfig() // its theme
	if err != nil {
		return usageError(err)
	}
	tty, err := openTerminal()
	if err != nil {
		return fmt.Errorf("the live view needs a terminal: %w (use rpctap tail or rpctap check instead)", err)
	}
	defer tty.Close()
	r := uiRenderer(tty, c.Theme)
	m := tui.New(r, srcs, append(opts, tui.WithTerminal(tty))...)
	// The view ends as q ends it when its terminal goes away (see
	// ttyInput): SIGHUP, or a read that finds the terminal hung up.
	gone := make(chan struct{})
	in := &ttyInput{File: tty, gone: func() { close(gone) }}
	p := tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(tty), tea.WithAltScreen(), tea.WithMouseCellMotion())
	ended := make(chan struct{})
	defer close(ended)
	go func() {
		select {
		case <-gone:
		case <-hangup():
		case <-quit:
		case <-ended:
			return
		}
		p.Quit()
	}()
	_, err = p.Run()
	for _, s := range srcs {
		s.Close()
	}
	return err
}

// openTerminal opens the terminal the live view draws on and reads keys
// from: the process's controlling terminal, whatever stdio is.
func openTerminal() (*os.File, error) { return os.OpenFile("/dev/tty", os.O_RDWR, 0) }

func newWatchCmd() *cobra.Command {
	var host, framing, profile, open, record string
	var force bool
	cmd := &cobra.Command{
		Use:   "watch [--host 'HOST CMD' | --open FILE] [--record FILE] -- SERVER [ARGS...]",
		Short: "Run a server behind a tap and watch it here, in one command",
		Long: `Starts SERVER behind a tap, records the session, and opens the live view on
this terminal. With no --host, rpctap is the host of an MCP server: it sends
server/discover, or initialize when the server refuses that, lists tools,
resources and prompts, and answers each of the server's requests at once
with a reply that fits it (roots/list: the working directory; elicitation
declined; sampling refused). With --framing lsp, --profile lsp or --open
FILE, rpctap is the host of a language server: initialize (rootUri the
working directory) and initialized, FILE opened, the server's requests
answered at once (workspace/configuration: no settings;
client/registerCapability and window/workDoneProgress/create: null), and
shutdown and exit when you quit. To answer a server's request yourself,
hold it first (:intercept dir:s2h method:roots/list in the view), then H
and a. With --host, rpctap also starts the host (a shell command
that launches a server, as MCP hosts do): {} in it stands for the server
command, run behind a tap; without {}, " -- SERVER" is appended. The whole
conversation then shows; the host's output goes to a log file beside the
session file (its name, ending .host.log).

--record FILE records the session there: a FILE that is there already is
refused before anything starts, unless --force writes over it.

  rpctap watch --host 'npx @modelcontextprotocol/inspector --cli --method tools/list' -- my-server`,
		Args: takesArgs(1, -1, "the server's command", "rpctap watch -- my-server --stdio (add --host 'HOST CMD' to start a host too)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			fr, err := classify.ParseFraming(framing)
			if err != nil {
				return usageError(err)
			}
			pr, err := classify.ParseProfile(profile)
			if err != nil {
				return usageError(err)
			}
			if open != "" && host != "" {
				return usageError(fmt.Errorf("--open opens a file as rpctap's own host; with --host, the host opens files: drop one of them"))
			}
			if open != "" {
				if st, err := os.Stat(open); err != nil || st.IsDir() {
					return usageError(fmt.Errorf("--open %s: no such file here; give the path of a file for the language server to open", classify.EscapeString(open, 200)))
				}
			}
			if err := checkRecordPath(record, force); err != nil {
				return err
			}
			// The view is what watch is for: with no terminal to show it
			// on, nothing is started (no server, no host, no session).
			tty, err := openTerminal()
			if err != nil {
				quoted := make([]string, len(args))
				for i, a := range args {
					quoted[i] = shellQuote(a)
				}
				return usageError(fmt.Errorf("rpctap watch shows the live view, which needs a terminal, and this process has none (/dev/tty cannot be opened), so it started nothing; to run the server behind a tap with no terminal, use: rpctap run -- %s (and rpctap tail to follow it)",
					classify.EscapeString(strings.Join(quoted, " "), 200)))
			}
			tty.Close()
			return runWatch(host, args, fr, pr, open, record, force)
		},
	}
	cmd.Flags().StringVar(&record, "record", "", "record the session to this file (default: a new file in the state directory); one that is there is refused, unless --force")
	cmd.Flags().BoolVar(&force, "force", false, "write over the --record file when it is there")
	cmd.Flags().StringVar(&open, "open", "", "with no --host, a file rpctap opens in the language server (implies --framing lsp)")
	cmd.Flags().StringVar(&host, "host", "", "a host command to start and connect to the server (run with sh -c)")
	cmd.Flags().StringVar(&framing, "framing", "auto", "ndjson, lsp or auto")
	cmd.Flags().StringVar(&profile, "profile", "auto", "auto, jsonrpc, mcp or lsp")
	return serverCommand(cmd, "rpctap watch -- my-server --stdio")
}

func runWatch(host string, argv []string, framing classify.Framing, profile classify.Profile, open, record string, force bool) error {
	if host != "" {
		var tapFlags []string // the tap the host starts records where watch was told
		if record != "" {
			abs, err := filepath.Abs(record)
			if err != nil {
				return err
			}
			tapFlags = append(tapFlags, "--record", abs)
			if force {
				tapFlags = append(tapFlags, "--force")
			}
		}
		return runWatchHost(host, argv, framing, profile, tapFlags...)
	}
	// No host: the tap runs here, and rpctap plays the host of an MCP
	// server (playhost: the handshake, the lists, an answer to each of the
	// server's requests at once; the tap holds none unless the user sets
	// an intercept filter in the view); the
	// server's stdin stays open for injected frames. Quitting the view
	// stops the server, with SIGKILL if SIGTERM does not. A language
	// server (--framing lsp, --profile lsp or --open) gets an LSP host
	// instead, which ends the session with shutdown and exit on quit.
	var wmu sync.Mutex
	var warnings []string
	warn := func(s string) { wmu.Lock(); warnings = append(warnings, s); wmu.Unlock() }
	lsp := framing == classify.FramingLSP || profile == classify.LSP || open != ""
	hangup() // from now on, SIGHUP ends the view, and the view the tap
	opts := playhost.TapOptions(argv, framing, profile, lsp, record, force)
	opts.Warn, opts.Signals = warn, viewSignals()
	t, err := tap.New(opts)
	if err != nil {
		return usageError(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var res tap.Result
	var runErr error
	ran := make(chan struct{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	hostCtx, quitHost := context.WithCancel(ctx)
	defer quitHost()
	hostDone := make(chan struct{})
	go func() {
		wd, _ := os.Getwd()
		if lsp {
			(&playhost.LSP{W: inW, R: outR, Root: wd, Open: open, Name: "rpctap", Warn: warn}).Run(hostCtx)
		} else {
			(&playhost.MCP{W: inW, R: outR, Root: wd, Name: "rpctap", Warn: warn}).Run(hostCtx)
		}
		close(hostDone)
		io.Copy(io.Discard, outR) // the server's output is read to its end
	}()
	// The view shows the server's stderr; its last lines are kept, masked
	// as the session file masks them, to be said when the server fails.
	errTail := &tailBuffer{max: 16 << 10}
	errOut := t.MaskingWriter(errTail)
	go func() {
		res, runErr = t.Run(ctx, inR, outW, errOut)
		errOut.Close()
		close(ran)
	}()
	src, err := attachWhenUp(fmt.Sprint(os.Getpid()), ran)
	if errors.Is(err, errGone) {
		// The tap ended before its socket came up: the server could not
		// start, or exited at once.
		if runErr != nil {
			return exitError{code: max(res.ExitCode, 1), msg: runErr.Error()}
		}
		msg := fmt.Sprintf("%s %s before the view could attach", classify.EscapeString(argv[0], 200), exitWords(res)) + errTail.said()
		if res.Path != "" {
			msg += "\nrpctap: session recorded in " + res.Path
		}
		return exitError{code: max(res.ExitCode, 1), msg: msg}
	}
	if err != nil {
		cancel()
		return err
	}
	uiErr := runUI([]*tui.Source{src})
	// rpctap's host ends its session, and the frames the user's filter
	// holds go on (the host's answers to them would wait behind them,
	// and so would the end of the server's output). An LSP host sends
	// shutdown, then exit, and the server exits by itself; an MCP host
	// closes the server's stdin and gives it the time to exit. The
	// tap's end then signals a server that has not.
	t.EndHolding()
	quitHost()
	wait := 2 * time.Second
	if lsp {
		wait = 7 * time.Second
	}
	select {
	case <-hostDone:
	case <-time.After(wait):
	}
	if !lsp {
		inW.Close()
	}
	byItself := true // the server exited without rpctap signalling it
	select {
	case <-ran:
	case <-time.After(3 * time.Second):
		byItself = false
	}
	cancel()
	if !endHere(ran, t, &warnings) || uiErr != nil {
		return uiErr
	}
	// watch exits as a server that ended by itself did, as run does:
	// what a host would see of it, said on stderr with its last words
	// there. One that rpctap had to stop ended because the user quit:
	// that is said, and watch exits 0.
	name := classify.EscapeString(argv[0], 200)
	switch {
	case !byItself:
		after := "its stdin closing"
		if lsp {
			after = "shutdown and exit"
		}
		fmt.Fprintf(os.Stderr, "rpctap: %s did not exit within 3 s of %s, so rpctap stopped it: it %s\n", name, after, exitWords(res))
	case res.ExitCode != 0:
		fmt.Fprintf(os.Stderr, "rpctap: %s %s%s\n", name, exitWords(res), errTail.said())
		return exitError{code: res.ExitCode}
	}
	return nil
}

// exitWords says how the server ended: "exited with status 7", "was
// ended by SIGTERM".
func exitWords(res tap.Result) string {
	if res.Signal != "" {
		return "was ended by " + res.Signal
	}
	return fmt.Sprintf("exited with status %d", res.ExitCode)
}

// A tailBuffer keeps the last bytes written to it, at most max: the end
// of a stream that may be long.
type tailBuffer struct {
	mu        sync.Mutex
	max       int
	b         []byte
	truncated bool // bytes before b were dropped
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
		t.truncated = true
	}
	return len(p), nil
}

// said is what the server last wrote on stderr, as a message's end: a
// colon and its last lines (each escaped, one a line), or "".
func (t *tailBuffer) said() string {
	t.mu.Lock()
	b := t.b
	if t.truncated { // the first line may be cut: it goes
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	t.mu.Unlock()
	if len(bytes.TrimSpace(b)) == 0 {
		return ""
	}
	return "; the last lines of its stderr:\n" + lastLines(b, stderrLines)
}

// stderrLines is how many of a failed server's last stderr lines watch
// prints.
const stderrLines = 10

// endHere ends a tap that runs in this process: it waits up to 5 s for
// its Run to return (ran closes then), then says on stderr what the tap
// warned about and where its session is. It reports whether Run returned.
func endHere(ran <-chan struct{}, t *tap.Tap, warnings *[]string) bool {
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		return false // the tap still runs: its warnings are not ours to read yet
	}
	for _, w := range *warnings {
		fmt.Fprintln(os.Stderr, "rpctap:", w)
	}
	if p := t.Path(); p != "" {
		fmt.Fprintln(os.Stderr, "rpctap: session recorded in", p)
	}
	return true
}

// runWatchHost starts the host with the server command replaced by a tap
// in front of the server (the host launches "rpctap run -- SERVER", as it
// would when configured to), and attaches the view to that tap. The host
// goes when watch does: when the view ends, and when watch is stopped
// (^C, SIGTERM, the terminal gone) before the host has started the server
// or while the view shows it. tapFlags are more flags of that rpctap run
// (--record FILE).
func runWatchHost(host string, argv []string, framing classify.Framing, profile classify.Profile, tapFlags ...string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	name := fmt.Sprintf("%s-%d", filepath.Base(argv[0]), os.Getpid())
	tapCmd := []string{self, "run", "--name", name, "--framing", framing.String(), "--profile", profile.String()}
	tapCmd = append(append(append(tapCmd, tapFlags...), "--"), argv...)
	var quoted []string
	for _, a := range tapCmd {
		quoted = append(quoted, shellQuote(a))
	}
	line := host
	if strings.Contains(host, "{}") {
		line = strings.ReplaceAll(host, "{}", strings.Join(quoted, " "))
	} else {
		line = host + " -- " + strings.Join(quoted, " ")
	}
	logf, err := openHostLog(name)
	if err != nil {
		return err
	}
	defer logf.Close()
	logPath := logf.Name()
	// The host's output (tool results among it) is kept masked, as the
	// session is: it goes to the log through a pipe and a masking writer.
	masked, err := sessions.MaskingWriter(os.Environ(), nil, logf)
	if err != nil {
		return err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	// SIGINT, SIGTERM and SIGHUP end watch, host and all, from before the
	// host starts: the default action would leave the host running.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	cmd := exec.Command("sh", "-c", line)
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		return fmt.Errorf("cannot start the host: %w", err)
	}
	copied := make(chan struct{})
	go func() {
		io.Copy(masked, pr)
		masked.Close()
		pr.Close()
		close(copied)
	}()
	// logged waits for the host's output to reach the log, when the host
	// and its children have let go of it; a child that holds on to it
	// keeps what it writes later from the log.
	logged := func() {
		select {
		case <-copied:
		case <-time.After(2 * time.Second):
		}
	}
	// The host is reaped only once watch has done with its process
	// group (stopHost): until then its id cannot be another group's.
	// Where the host cannot be waited for unreaped, a host that was
	// reaped has its group left alone.
	exited := make(chan struct{})
	returned := make(chan struct{})
	defer close(returned)
	var reaped atomic.Bool
	go func() {
		if awaitExit(cmd.Process.Pid) {
			close(exited)
			<-returned
		} else {
			defer close(exited)
			defer reaped.Store(true)
		}
		cmd.Wait()
	}()
	stop := func() {
		if !reaped.Load() {
			stopHost(cmd.Process.Pid)
		}
	}
	var stopSig syscall.Signal // set before stopped closes
	stopped := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			stopSig = sig.(syscall.Signal)
			close(stopped)
		case <-returned:
		}
	}()
	waited := make(chan struct{}) // the host exited, or watch was stopped
	go func() {
		select {
		case <-exited:
		case <-stopped:
		}
		close(waited)
	}()
	src, err := attachWhenUp(name, waited)
	if err != nil {
		stop()
		select {
		case <-stopped:
			return exitError{code: 128 + int(stopSig), msg: fmt.Sprintf("stopped by %s before the host started the server; the host is stopped too (its output is in %s)", tap.SignalName(stopSig), logPath)}
		default:
		}
		if errors.Is(err, errGone) {
			err = errors.New("the host exited before it started the server")
		}
		logged()
		tail, _ := os.ReadFile(logPath)
		return fmt.Errorf("%w\nthe host's output (%s):\n%s", err, logPath, lastLines(tail, 15))
	}
	// The log goes by the session's name, beside it.
	if src.Path != "" {
		p := strings.TrimSuffix(src.Path, ".jsonl") + ".host.log"
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) && os.Rename(logPath, p) == nil {
			logPath = p
		}
	}
	uiErr := runUIUntil(stopped, []*tui.Source{src}, tui.WithStatus(hostLogStatus(logPath, src.Path)))
	stop()
	logged()
	fmt.Fprintln(os.Stderr, "rpctap: the host's output is in", logPath)
	if src.Path != "" {
		fmt.Fprintln(os.Stderr, "rpctap: session recorded in", src.Path)
	}
	select {
	case <-stopped:
		// The terminal gone ends the view as q does; a stop by SIGINT or
		// SIGTERM says so in the exit status.
		if uiErr == nil && stopSig != syscall.SIGHUP {
			uiErr = exitError{code: 128 + int(stopSig)}
		}
	default:
	}
	return uiErr
}

// hostGrace is how long watch's host has to end after SIGTERM before what
// is left of it is killed.
const hostGrace = 3 * time.Second

// stopHost ends watch's host, the process group of its shell (pid), a
// child not reaped yet (awaitExit): SIGTERM, then SIGKILL for whatever
// of the group is still there after hostGrace. The tap the host started
// is in the group, and passes the SIGTERM on to its server.
func stopHost(pid int) {
	if !groupLives(pid) || syscall.Kill(-pid, syscall.SIGTERM) != nil {
		return // nothing of it is left
	}
	for deadline := time.Now().Add(hostGrace); groupLives(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(-pid, syscall.SIGKILL)
			return
		}
	}
}

// openHostLog creates the file that keeps the output of watch's host: it
// holds what the host printed (tool results among it), so it is the
// owner's alone, and it goes with the sessions, in the state directory.
func openHostLog(name string) (*os.File, error) {
	dir, err := sessions.StateDir()
	if err != nil {
		return nil, fmt.Errorf("cannot keep the host's output: %w", err)
	}
	base := strings.TrimSuffix(sessions.NewFileName(time.Now(), name), ".jsonl")
	f, err := os.OpenFile(filepath.Join(dir, base+".host.log"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		f, err = os.CreateTemp(dir, base+"-*.host.log") // 0600 too
	}
	if err != nil {
		return nil, fmt.Errorf("cannot keep the host's output: %w", err)
	}
	return f, nil
}

// errGone says the process that was to start the tap ended first.
var errGone = errors.New("the tap's starter ended before the tap came up")

// attachWhenUp waits for the tap named target to serve its socket and
// attaches to it; it gives up when gone closes (errGone) or after 15 s.
func attachWhenUp(target string, gone <-chan struct{}) (*tui.Source, error) {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if info, err := tap.FindTap(target); err == nil {
			return tui.OpenLive(info, 0)
		}
		select {
		case <-gone:
			return nil, errGone
		case <-time.After(30 * time.Millisecond):
		}
	}
	return nil, errors.New("the tap did not come up within 15 s; is the host starting the server?")
}

// shellQuote is hostconfig.ShellQuote: one word of a shell's command
// line.
func shellQuote(s string) string { return hostconfig.ShellQuote(s) }

// hostLogStatus is the view's word on where watch keeps the host's
// output: a path the user can open as it is shown (the home directory as
// ~), whatever the working directory. session is where the session is
// recorded ("" when it is not).
func hostLogStatus(logPath, session string) string {
	where := "host log: "
	if session == "" || filepath.Dir(logPath) != filepath.Dir(session) {
		where = "the host's output goes to "
	}
	return where + classify.EscapeString(homePath(logPath), 0)
}

// homePath is path as a user types it: under the home directory, with ~
// for it.
func homePath(path string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return path
	}
	if rest, ok := strings.CutPrefix(path, strings.TrimSuffix(home, "/")+"/"); ok {
		return "~/" + rest
	}
	return path
}

// lastLines returns the last n lines of b, each escaped as peer text, one
// a line.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		lines[i] = classify.EscapeString(strings.TrimSuffix(l, "\r"), 0)
	}
	return strings.Join(lines, "\n")
}

func newTailCmd() *cobra.Command {
	var asJSON, follow bool
	var expr string
	cmd := &cobra.Command{
		Use:   "tail [TARGET] [-f] [--json] [--filter EXPR]",
		Short: "Print a session frame by frame, following a live tap or a growing file",
		Long: `Prints one line per frame of a live tap or a session file (the only live
tap when TARGET is left out), with the same escaping and filter language as
the live view. --json prints each frame with its classification.

A session file is printed and tail exits, unless a live tap still writes
it: then tail follows it up to its exit record. -f follows the file
whatever writes it, until its exit record or Ctrl-C. A live tap that
records no file (--no-record) keeps no frame for a tail that falls
behind it, nor any frame over the 16 MiB it holds of one: tail then says
how many frames it missed, where they were and at its end, and exits
with status 1.`,
		Args: takesArgs(0, 1, "one session file or live tap", "rpctap tail SESSION.jsonl, or rpctap tail PID (rpctap ls lists both)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := filter.Parse(expr)
			if err != nil {
				return usageError(fmt.Errorf("--filter: %w", err))
			}
			target := ""
			if len(args) == 1 {
				target = args[0]
			}
			open := tui.OpenTarget
			if follow {
				open = tui.OpenTargetFollowing
			}
			src, err := open(target)
			if err != nil {
				return err
			}
			defer src.Close()
			if err := runTail(cmd.OutOrStdout(), src, f, asJSON, src.Yield); err != nil {
				return err
			}
			return tailEnd(cmd.ErrOrStderr(), src)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON lines with each frame's classification")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow a session file until its exit record, whatever writes it")
	cmd.Flags().StringVar(&expr, "filter", "", "show only frames that match, e.g. 'method:tools/* !dir:err'")
	return cmd
}

// tailEnd says how a session file that tail printed to its end was
// damaged: no session record at all (exit status 2, as check), lines it
// could not read, or no exit record; and what tail did not get of a live
// tap that records no file (exit status 1).
func tailEnd(stderr io.Writer, src *tui.Source) error {
	if missed, cut := src.Missed(); missed > 0 || cut {
		// A tap with no file keeps no frame for a view that falls behind.
		const record = "to see every frame, record the session (rpctap run without --no-record) and tail that"
		if missed == 0 {
			return exitError{code: 1, msg: "tail missed the end of the session: the stream of the tap, which records no file (--no-record), ended with no exit record (the tap was killed, or cut tail off when it did not read); " + record}
		}
		msg := fmt.Sprintf("tail missed %s of the session", plural(int(missed), "frame"))
		if cut {
			msg += ", and its end"
		}
		return exitError{code: 1, msg: msg + " (its notes say where): a tap that records no file (--no-record) keeps no frame for a view that falls behind, nor any frame larger than it holds; " + record}
	}
	name := classify.EscapeString(src.Path, 200)
	n := src.Index.Counts().Skipped
	switch {
	case src.NoRecord() && n == 0:
		return exitError{code: 2, msg: fmt.Sprintf("cannot tail %s: it is empty, so it is no session file; give the path of one that rpctap run recorded (rpctap ls lists them)", name)}
	case src.NoRecord():
		return exitError{code: 2, msg: fmt.Sprintf("cannot tail %s: it is not a session file rpctap recorded (none of its %s is a session header or record); give the path of one (rpctap ls lists them)", name, plural(n, "line")) + frameLogHint(src.Path)}
	case n > 0 && src.Path != "":
		fmt.Fprintf(stderr, "rpctap: %s of %s could not be read (%s); rpctap check %s names them\n", plural(n, "line"), name, humanSize(src.Index.Counts().SkippedBytes), name)
	}
	if src.EndedWithoutExit() {
		fmt.Fprintf(stderr, "rpctap: %s ends without an exit record: its tap was killed, or the file was cut\n", name)
	}
	return nil
}

// tailBatch is how many entries tail prints between two looks at whether
// the tap is short of CPU.
const tailBatch = 1024

// runTail prints entries as the source indexes them, until it ends. It is
// an observer: all of it works at a lower priority, it waits while the
// tap says it is short of CPU (yield, the source's Yield, and the
// source's indexing, for seconds at a time), reads the records on in
// file order, and writes its lines in large writes.
func runTail(w io.Writer, src *tui.Source, f *filter.Filter, asJSON bool, yield func(context.Context)) error {
	src.Background()
	src.BackgroundProcess()
	src.Patient()
	recs := src.Records()
	defer recs.Close()
	bw := bufio.NewWriterSize(w, 64<<10)
	// On a terminal, tail ends when the terminal goes away, though
	// nothing comes to write (a process that ignores SIGHUP lives on).
	tty, _ := w.(*os.File)
	if tty != nil && terminalGone(tty) {
		tty = nil // not a terminal (a file, a pipe, /dev/null) from the start
	}
	x := src.Index
	next := 0
	for {
		ended := src.Ended()
		n := x.Len()
		for ; next < n; next++ {
			if next%tailBatch == 0 {
				if err := bw.Flush(); err != nil {
					return err
				}
				yield(context.Background())
			}
			e := x.At(next)
			if e.Event != "" {
				if err := tailEvent(bw, recs, next, e, asJSON); err != nil {
					return err
				}
				continue
			}
			if !e.IsFrame() {
				continue
			}
			var ev *sessions.Event
			var evErr error
			read := false
			record := func() (*sessions.Event, error) {
				if !read {
					ev, evErr = recs.At(next)
					read = true
				}
				return ev, evErr
			}
			fr := tui.FilterFrame(&e, func() []byte {
				if ev, err := record(); err == nil {
					return ev.Frame
				}
				return nil
			})
			if !f.Match(fr) {
				continue
			}
			rec, _ := record()
			if err := tailLine(bw, src, next, e, rec, asJSON); err != nil {
				return err
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if ended && next >= x.Len() {
			if st := src.State(); strings.HasPrefix(st, "error") {
				return errors.New(strings.TrimPrefix(st, "error: "))
			}
			return nil
		}
		if tty != nil && terminalGone(tty) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tailEvent prints an event of the session: a note of rpctap's own (a
// demo's caption), escaped as peer text is (the session file may come
// from anywhere), and the frames a gap says are missing. (How the server
// ended is tail's end, not a line.)
func tailEvent(w io.Writer, recs *tui.Records, pos int, e sessions.Entry, asJSON bool) error {
	ev, err := recs.At(pos)
	if err != nil || ev.Gap {
		return nil
	}
	var text string
	out := map[string]any{"seq": e.Seq, "t": e.T}
	switch ev.Kind {
	case sessions.EventNote:
		if ev.Text == "" {
			return nil
		}
		text, out["note"] = classify.EscapeString(ev.Text, 0), ev.Text
	case sessions.EventGap:
		what := "frames"
		if ev.Dir == classify.Err {
			what = "lines"
		}
		text = fmt.Sprintf("%d %s %s missing: the tap could not record them", ev.Missing, what, ev.Dir.Toward())
		out["gap"] = map[string]any{"dir": ev.Dir.String(), "missing": ev.Missing}
	default:
		return nil
	}
	if asJSON {
		return printJSON(w, out, false)
	}
	_, err = fmt.Fprintf(w, "%6d %10s # %s\n", e.Seq, fmt.Sprintf("%d.%03d", e.T/1e6, (e.T/1e3)%1000), text)
	return err
}

// tailLine prints one frame: its entry e at position pos, and its record
// ev (nil when it could not be read back), with what became of it in the
// tap.
func tailLine(w io.Writer, src *tui.Source, pos int, e sessions.Entry, ev *sessions.Event, asJSON bool) error {
	var frame []byte
	fate := e.Fate()
	if ev != nil {
		frame, fate = ev.Frame, sessions.FateOf(ev)
	}
	if asJSON {
		out := map[string]any{"seq": e.Seq, "t": e.T, "dir": e.Dir.String(), "size": e.Size}
		if e.Dir != classify.Err {
			out["kind"] = e.Kind.String()
		}
		if e.ID != "" {
			out["id"] = json.RawMessage(e.ID)
			if !json.Valid([]byte(e.ID)) {
				out["id"] = e.ID
			}
		}
		if e.Method != "" {
			out["method"] = e.Method
		}
		if e.Pair != 0 {
			out["pair"] = e.Pair
			out["latency_us"] = e.Latency.Microseconds()
		}
		if e.Status.String() != "" {
			out["status"] = e.Status.String()
		}
		var fs []map[string]any
		for _, f := range src.Index.Findings(pos) {
			fm := map[string]any{"code": f.Code.String(), "severity": f.Severity.String(), "message": f.Message}
			if f.Related != 0 {
				fm["related"] = f.Related
			}
			fs = append(fs, fm)
		}
		if fs != nil {
			out["findings"] = fs
		}
		if !fate.IsZero() {
			out["fate"] = json.RawMessage(fate.AppendJSON(nil))
		}
		if frame != nil {
			// frame is the frame's JSON; frame_text the frame as text,
			// with frame_b64 its exact bytes when they are not UTF-8 (the
			// text then has U+FFFD for them).
			switch valid := utf8.Valid(frame); {
			case valid && json.Valid(frame):
				out["frame"] = json.RawMessage(frame)
			case valid:
				out["frame_text"] = string(frame)
			default:
				out["frame_text"] = string(frame)
				out["frame_b64"] = frame
			}
		}
		return printJSON(w, out, false)
	}
	dir := map[classify.Direction]string{classify.H2S: "→", classify.S2H: "←", classify.Err: "!"}[e.Dir]
	kind := e.Kind.String()
	if e.Dir == classify.Err {
		kind = "stderr"
	}
	var flags []string
	for _, c := range e.Codes.Codes() {
		flags = append(flags, c.String())
	}
	line := fmt.Sprintf("%6d %10s %s %-12s", e.Seq, fmt.Sprintf("%d.%03d", e.T/1e6, (e.T/1e3)%1000), dir, kind)
	if e.ID != "" {
		line += " id=" + classify.EscapeString(e.ID, 40)
	}
	if e.Method != "" {
		line += " " + classify.EscapeString(e.Method, 80)
	}
	if e.Latency > 0 && e.Kind == classify.KindResponse {
		line += fmt.Sprintf(" (%s)", e.Latency.Round(time.Microsecond))
	}
	if len(flags) > 0 {
		line += " [" + strings.Join(flags, " ") + "]"
	}
	if words := fate.Words(); len(words) > 0 {
		line += " fate=" + strings.Join(words, ",")
	}
	line += "  " + classify.Escape(frame, 160)
	if fate.Original != nil {
		line += "  original: " + classify.Escape(fate.Original, 160)
	}
	_, err := fmt.Fprintln(w, line)
	return err
}
