package main

import (
	"bytes"
	"context"
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

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/internal/hostconfig"
	"github.com/rpctap/rpctap/internal/playhost"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tap"
	"github.com/rpctap/rpctap/tui"
	"github.com/spf13/cobra"
)

func newWatchCmd() *cobra.Command {
	var host, framing, profile, open, record string
	var force bool
	var h httpWatchFlags
	cmd := &cobra.Command{
		Use:   "watch [--host 'HOST CMD' | --open FILE] [--record FILE] -- SERVER [ARGS...]",
		Short: "Run a server behind a tap and watch it here, in one command",
		Long: `Starts SERVER behind a tap, records the session, and opens the live view on
this terminal. With no --host, rpctap is the host of an MCP server: it sends
server/discover, or initialize when the server refuses that, lists tools,
resources and prompts, and answers each of the server's requests at once
with a reply that fits it (roots/list: the working directory; elicitation
declined; sampling refused). A call from the composer that the server
answers input_required (revision 2026-07-28) is retried by rpctap's host
with the same replies to its input requests and the requestState, until
the server gives the call's result. With --framing lsp, --profile lsp or --open
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

With --http URL (and no server command), rpctap watch is rpctap http in
front of the server at URL with its view here: the view's status line says
the URL to give the host (the --listen address with URL's path), and
quitting the view stops the proxy.

  rpctap watch --host 'npx @modelcontextprotocol/inspector --cli --method tools/list' -- my-server
  rpctap watch --http http://127.0.0.1:3001/mcp --listen 127.0.0.1:8808`,
		Args: watchArgs(takesArgs(1, -1, "the server's command", "rpctap watch -- my-server --stdio (add --host 'HOST CMD' to start a host too)")),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("http") {
				return runWatchHTTP(cmd, h, host, open, record, force)
			}
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
	h.add(cmd)
	return serverCommand(cmd, "rpctap watch -- my-server --stdio")
}

func runWatch(host string, argv []string, framing classify.Framing, profile classify.Profile, open, record string, force bool) error {
	if host != "" {
		tapFlags, err := recordFlags(record, force)
		if err != nil {
			return err
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
	lsp := framing == classify.FramingLSP || profile == classify.LSP || open != ""
	hangup() // from now on, SIGHUP ends the view, and the view the tap
	opts := playhost.TapOptions(argv, framing, profile, lsp, record, force)
	opts.Signals = viewSignals()
	wd, _ := os.Getwd()
	mcpHost := &playhost.MCP{Root: wd, Name: "rpctap"}
	if !lsp {
		opts.Answers = mcpHost.Answers // the composer's calls that ask for input are retried
	}
	t, err := tap.New(opts)
	if err != nil {
		return usageError(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	// The view shows the server's stderr; its last lines are kept, masked
	// as the session file masks them, to be said when the server fails.
	errTail := &tailBuffer{max: 16 << 10}
	errOut := t.MaskingWriter(errTail)
	run := t.Start(ctx, tap.Pipes{In: inR, Out: outW, Err: errOut, After: func() { errOut.Close() }})
	hostCtx, quitHost := context.WithCancel(ctx)
	defer quitHost()
	hostDone := make(chan struct{})
	go func() {
		if lsp {
			(&playhost.LSP{W: inW, R: outR, Root: wd, Open: open, Name: "rpctap", Warn: run.Warn}).Run(hostCtx)
		} else {
			mcpHost.W, mcpHost.R, mcpHost.Warn = inW, outR, run.Warn
			mcpHost.Run(hostCtx)
		}
		close(hostDone)
		io.Copy(io.Discard, outR) // the server's output is read to its end
	}()
	src, ended, err := attachOwnTap(run)
	if ended {
		return endedBeforeTheView(run, argv, errTail)
	}
	if err != nil {
		cancel()
		return err
	}
	uiErr := runUI([]*source.Source{src})
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
	byItself := run.WaitFor(3 * time.Second) // the server exited without rpctap signalling it
	cancel()
	if !endHere(run) || uiErr != nil {
		return uiErr
	}
	res, _ := run.Wait()
	return watchExit(argv, res, byItself, lsp, errTail)
}

// attachOwnTap attaches a view to the tap this process runs (run), once
// its socket is up. ended says the tap ended before the view could
// attach: a server that exits at once may end it before its socket comes
// up, or between then and the attach; that is the server's doing, not a
// tap gone missing, and the caller says so (watch) or shows the session
// from its file (demo).
func attachOwnTap(run *tap.Running) (src *source.Source, ended bool, err error) {
	src, err = source.AttachWhenUp(fmt.Sprint(os.Getpid()), run.Done())
	if errors.Is(err, source.ErrGone) || err != nil && run.WaitFor(time.Second) {
		return nil, true, nil
	}
	return src, false, err
}

// recordFlags are the flags that have the tap a host starts record where
// watch was told (--record, --force).
func recordFlags(record string, force bool) ([]string, error) {
	if record == "" {
		return nil, nil
	}
	abs, err := filepath.Abs(record)
	if err != nil {
		return nil, err
	}
	flags := []string{"--record", abs}
	if force {
		flags = append(flags, "--force")
	}
	return flags, nil
}

// endedBeforeTheView says that the tap ended before its socket came up:
// the server could not start, or exited at once.
func endedBeforeTheView(run *tap.Running, argv []string, errTail *tailBuffer) error {
	res, runErr := run.Wait()
	if runErr != nil {
		return exitError{code: max(res.ExitCode, 1), msg: runErr.Error()}
	}
	msg := fmt.Sprintf("%s %s before the view could attach", classify.EscapeString(argv[0], 200), exitWords(res)) + errTail.said()
	if res.Path != "" {
		msg += "\nrpctap: session recorded in " + res.Path
	}
	return exitError{code: max(res.ExitCode, 1), msg: msg}
}

// watchExit is how watch ends after its view: as a server that ended by
// itself did, as run does (what a host would see of it, said on stderr
// with its last words there). One that rpctap had to stop (byItself
// false) ended because the user quit: that is said, and watch exits 0.
func watchExit(argv []string, res tap.Result, byItself, lsp bool, errTail *tailBuffer) error {
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
	logf, err := openHostLog(name)
	if err != nil {
		return err
	}
	defer logf.Close()
	logPath := logf.Name()
	// SIGINT, SIGTERM and SIGHUP end watch, host and all, from before the
	// host starts: the default action would leave the host running.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	cmd, copied, err := startHost(hostShellLine(host, tapCmd), logf)
	if err != nil {
		return err
	}
	// logged waits for the host's output to reach the log, when the host
	// and its children have let go of it; a child that holds on to it
	// keeps what it writes later from the log.
	logged := func() {
		select {
		case <-copied:
		case <-time.After(2 * time.Second):
		}
	}
	h := watchHostProcess(cmd, sigs)
	defer close(h.returned)
	stop, stopped := h.stop, h.stopped
	// Until the host starts the server the terminal is blank and keys do
	// nothing: a host that takes its time is said, with how to stop it,
	// never once the view may have started.
	var waitMu sync.Mutex
	attached := false
	time.AfterFunc(time.Second, func() {
		waitMu.Lock()
		defer waitMu.Unlock()
		if !attached {
			fmt.Fprintln(os.Stderr, "rpctap: waiting for the host to start the server (up to 15 s); ^C stops the host and watch")
		}
	})
	src, err := source.AttachWhenUp(name, h.waited)
	waitMu.Lock()
	attached = true
	waitMu.Unlock()
	if err != nil {
		stop()
		select {
		case <-stopped:
			return exitError{code: 128 + int(h.stopSig), msg: fmt.Sprintf("stopped by %s before the host started the server; the host is stopped too (its output is in %s)", tap.SignalName(h.stopSig), logPath)}
		default:
		}
		if errors.Is(err, source.ErrGone) {
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
	uiErr := runUIUntil(stopped, []*source.Source{src}, tui.WithStatus(hostLogStatus(logPath, src.Path)))
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
		if uiErr == nil && h.stopSig != syscall.SIGHUP {
			uiErr = exitError{code: 128 + int(h.stopSig)}
		}
	default:
	}
	return uiErr
}

// A hostProcess is watch's host as it runs: stopped closes when a
// signal (stopSig, set before) stops watch, waited when the host exited
// or watch was stopped, and watch closes returned when it is done.
type hostProcess struct {
	stopped, waited, returned chan struct{}
	stopSig                   syscall.Signal
	stop                      func() // ends the host's process group, unless it was reaped
}

// watchHostProcess watches cmd, the started host, and sigs. The host is
// reaped only once watch has done with its process group (stopHost):
// until then its id cannot be another group's. Where the host cannot be
// waited for unreaped, a host that was reaped has its group left alone.
func watchHostProcess(cmd *exec.Cmd, sigs <-chan os.Signal) *hostProcess {
	h := &hostProcess{stopped: make(chan struct{}), waited: make(chan struct{}), returned: make(chan struct{})}
	exited := make(chan struct{})
	var reaped atomic.Bool
	go func() {
		if awaitExit(cmd.Process.Pid) {
			close(exited)
			<-h.returned
		} else {
			defer close(exited)
			defer reaped.Store(true)
		}
		cmd.Wait()
	}()
	h.stop = func() {
		if !reaped.Load() {
			stopHost(cmd.Process.Pid)
		}
	}
	go func() {
		select {
		case sig := <-sigs:
			h.stopSig = sig.(syscall.Signal)
			close(h.stopped)
		case <-h.returned:
		}
	}()
	go func() {
		select {
		case <-exited:
		case <-h.stopped:
		}
		close(h.waited)
	}()
	return h
}

// hostShellLine is the shell command line of watch's host: host with
// the tap's command (tapCmd, quoted) where it says {}, or after " -- ".
func hostShellLine(host string, tapCmd []string) string {
	var quoted []string
	for _, a := range tapCmd {
		quoted = append(quoted, shellQuote(a))
	}
	if strings.Contains(host, "{}") {
		return strings.ReplaceAll(host, "{}", strings.Join(quoted, " "))
	}
	return host + " -- " + strings.Join(quoted, " ")
}

// startHost starts watch's host (line, run by sh in a process group of
// its own), its output going to logf; copied closes once all of the
// output is in the log. The host's output (tool results among it) is
// kept masked, as the session is: it goes to the log through a pipe and
// a masking writer.
func startHost(line string, logf *os.File) (cmd *exec.Cmd, copied <-chan struct{}, err error) {
	masked, err := sessions.MaskingWriter(os.Environ(), nil, logf)
	if err != nil {
		return nil, nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd = exec.Command("sh", "-c", line)
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, nil, fmt.Errorf("cannot start the host: %w", err)
	}
	done := make(chan struct{})
	go func() {
		io.Copy(masked, pr)
		masked.Close()
		pr.Close()
		close(done)
	}()
	return cmd, done, nil
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
