package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpctap/rpctap/sessions"
)

// Through the built binary: the host owns the server's lifecycle, and
// rpctap run passes each of its steps on.

// oldGrace is longer than the grace period after which the tap used to
// stop the server on its own, once the host had closed stdin (2 s): a
// host that waits this long shows that the tap no longer does.
const oldGrace = 3 * time.Second

// The tap never stops the server on a timer of its own.
func TestTapNeverStopsTheServerOnATimerOfItsOwn(t *testing.T) {
	rpctapBinary(t) // built once, before the subtests run in parallel

	// rpctap run -- cat big.ndjson < /dev/null | (sleep 3; wc -c): the
	// host reads everything cat writes, as it does from cat directly.
	t.Run("cat of a big file with stdin at EOF loses nothing", func(t *testing.T) {
		t.Parallel()
		big := filepath.Join(t.TempDir(), "big.ndjson")
		var b bytes.Buffer
		for i := 0; b.Len() < 16<<20; i++ {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","method":"n","params":{"i":%d,"pad":"%s"}}`+"\n", i, strings.Repeat("x", 100))
		}
		if err := os.WriteFile(big, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		direct, err := exec.Command("cat", big).Output()
		if err != nil {
			t.Fatal(err)
		}
		r := startRun(t, nil, []string{"cat", big})
		r.stdin.Close()
		time.Sleep(oldGrace) // a host busy elsewhere before it reads
		got, err := io.ReadAll(r.stdout)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(direct) || sha256.Sum256(got) != sha256.Sum256(direct) {
			t.Errorf("through the tap the host read %d bytes, from cat directly %d", len(got), len(direct))
		}
		if code := r.wait(t, 30*time.Second); code != 0 {
			t.Errorf("exit status %d, want cat's 0; stderr: %s", code, r.stderr)
		}
	})

	t.Run("a server that answers 3 s after stdin EOF gets its answer through", func(t *testing.T) {
		t.Parallel()
		const answer = `{"jsonrpc":"2.0","id":1,"result":{"slow":true}}` + "\n"
		r := startRun(t, nil, []string{"/bin/sh", "-c", `cat >/dev/null; sleep 3; printf '%s' '` + answer + `'`})
		io.WriteString(r.stdin, `{"jsonrpc":"2.0","id":1,"method":"slow"}`+"\n")
		r.stdin.Close()
		got, err := io.ReadAll(r.stdout)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != answer {
			t.Errorf("the host read %q, want the answer %q", got, answer)
		}
		if code := r.wait(t, 30*time.Second); code != 0 {
			t.Errorf("exit status %d, want the server's 0; stderr: %s", code, r.stderr)
		}
	})

	// The host closes stdin, waits, then signals (as MCP hosts do): the
	// server gets the host's signal, not one of the tap's.
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String()+" after stdin EOF reaches the server as itself", func(t *testing.T) {
			t.Parallel()
			r := startRun(t, nil, []string{os.Args[0]}, "RPCTAP_TEST_SERVER=signals")
			if l := r.line(t, 30*time.Second); !strings.Contains(l, "ready") {
				t.Fatalf("the server said %q, want ready", l)
			}
			r.stdin.Close()
			time.Sleep(oldGrace)
			if err := r.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"got","params":{"signal":%q}}`+"\n", sig.String())
			if l := r.line(t, 30*time.Second); l != want {
				t.Errorf("the server said %q, want %q", l, want)
			}
			if code := r.wait(t, 30*time.Second); code != 0 {
				t.Errorf("exit status %d, want the server's 0; stderr: %s", code, r.stderr)
			}
		})
	}

	t.Run("the host closing the tap's stdout closes the server's", func(t *testing.T) {
		t.Parallel()
		r := startRun(t, nil, []string{"/bin/sh", "-c", `trap '' PIPE; echo ready; while echo tick; do sleep 0.01; done; echo "stdout closed" >&2; exit 5`})
		if l := r.line(t, 30*time.Second); l != "ready\n" {
			t.Fatalf("the server said %q, want ready", l)
		}
		r.out.Close() // the host stops reading; its stdin stays open
		if code := r.wait(t, 30*time.Second); code != 5 {
			t.Errorf("exit status %d, want the server's 5: it did not see its stdout close; stderr: %s", code, r.stderr)
		}
		if !strings.Contains(r.stderr.String(), "stdout closed") {
			t.Errorf("the server said %q on stderr, want that its stdout closed", r.stderr)
		}
	})
}

// A signal at any moment from the tap's start is passed on to the server,
// or, before the server exists, ends the tap with 128+signal and a session
// file with its header and exit record; no server is ever left behind. The
// signals come 3-480 ms after the tap says it catches them (earlysignal's
// fd 3), many while the binary initialises its packages (a syntax
// highlighter's tables take from tens to hundreds of milliseconds), where
// the tap used to die of them. The first milliseconds, before the tap says
// so, are TestSignalInTheTapsFirstMillisecondsEndsItCleanly's.
func TestSignalDuringStartupEndsTheTapCleanly(t *testing.T) {
	bin := rpctapBinary(t)
	tries := 30
	if testing.Short() {
		tries = 6
	}
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("RPCTAP_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("RPCTAP_SEED=%d repeats this run", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	sigs := []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP}
	type try struct {
		sig   syscall.Signal
		delay time.Duration
	}
	var all []try
	for i := range tries {
		// Skewed towards the start, where the tap sets itself up: the
		// delay's square root is uniform.
		u := rng.Float64()
		all = append(all, try{sigs[i%len(sigs)], 3*time.Millisecond + time.Duration(u*u*float64(480*time.Millisecond))})
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := 0
	for range 3 { // three at a time
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next == len(all) {
					mu.Unlock()
					return
				}
				tr := all[next]
				next++
				mu.Unlock()
				if msg := signalAtStartup(bin, t.TempDir(), tr.sig, tr.delay); msg != "" {
					t.Errorf("%s after %v: %s", tr.sig, tr.delay.Round(time.Millisecond), msg)
				}
			}
		}()
	}
	wg.Wait()
}

// signalAtStartup runs rpctap run -- sleep 30, sends it sig after delay,
// and says what went wrong ("" when nothing did).
func signalAtStartup(bin, dir string, sig syscall.Signal, delay time.Duration) string {
	path := filepath.Join(dir, "s.jsonl")
	mark := "RPCTAP_TEST_MARK=" + filepath.Base(dir) + strconv.Itoa(os.Getpid())
	cmd := exec.Command(bin, "run", "--no-listen", "--record", path, "--", "sleep", "30")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+dir, mark)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// The delay counts from when the tap catches the signals (package
	// earlysignal says so on fd 3, before the slow package inits): on a
	// loaded machine, exec and the Go runtime alone take tens of ms.
	readyr, ready, err := os.Pipe()
	if err != nil {
		return err.Error()
	}
	defer readyr.Close()
	cmd.ExtraFiles = []*os.File{ready}
	cmd.Env = append(cmd.Env, "RPCTAP_TEST_SIGNALS_READY=fd3")
	readyc := make(chan struct{})
	go func() { readyr.Read(make([]byte, 1)); close(readyc) }()
	if err := cmd.Start(); err != nil {
		ready.Close()
		return err.Error()
	}
	ready.Close()
	select {
	case <-readyc:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		return "the tap did not say within 10 s that it catches signals (package earlysignal)"
	}
	time.Sleep(delay)
	cmd.Process.Signal(sig)
	return signalledTapEnded(cmd, &stderr, path, mark, sig)
}

// signalledTapEnded waits for the tap cmd (rpctap run --record path, its
// server's environment holding mark) that was sent sig, and says how its
// end differs from a clean one ("" when it does not): no server left, exit
// status 128+sig, a session file with a header and an exit record saying
// so.
func signalledTapEnded(cmd *exec.Cmd, stderr *bytes.Buffer, path, mark string, sig syscall.Signal) string {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		return "the tap did not end within 30 s"
	}
	var problems []string
	if left := processesWith(mark); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		problems = append(problems, fmt.Sprintf("the server was left running (pids %v)", left))
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		problems = append(problems, fmt.Sprintf("the tap was killed by %v", ws.Signal()))
	} else if want := 128 + int(sig); ws.ExitStatus() != want {
		problems = append(problems, fmt.Sprintf("exit status %d, want %d", ws.ExitStatus(), want))
	}
	f, err := os.Open(path)
	if err != nil {
		return strings.Join(append(problems, "no session file: "+err.Error()), "; ")
	}
	defer f.Close()
	rd := sessions.NewReader(f)
	if h, ok := rd.Header(); !ok || h.ID == "" {
		problems = append(problems, "the session file has no header")
	}
	exit := false
	for {
		e, err := rd.Next()
		if err != nil {
			break
		}
		if e.Kind == sessions.EventExit {
			exit = true
			if e.Code == nil || *e.Code != 128+int(sig) || e.Signal != signalName(sig) {
				problems = append(problems, fmt.Sprintf("exit record %+v", *e))
			}
		}
	}
	if !exit {
		problems = append(problems, "the session file has no exit record")
	}
	if len(problems) > 0 && stderr.Len() > 0 {
		problems = append(problems, "stderr: "+stderr.String())
	}
	return strings.Join(problems, "; ")
}

func signalName(sig syscall.Signal) string {
	return map[syscall.Signal]string{syscall.SIGTERM: "SIGTERM", syscall.SIGINT: "SIGINT", syscall.SIGHUP: "SIGHUP"}[sig]
}

// processesWith lists the live processes whose environment holds kv.
func processesWith(kv string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, []byte("\x00"+kv+"\x00")) && !bytes.HasPrefix(env, []byte(kv+"\x00")) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}

// watchEnv is an environment of rpctap watch's own: state, runtime and
// temporary directories under dir.
func watchEnv(t *testing.T, dir string) []string {
	t.Helper()
	for _, d := range []string{"state", "run", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "XDG_RUNTIME_DIR="+filepath.Join(dir, "run"), "TMPDIR="+filepath.Join(dir, "tmp"))
}

// runWatchCmd runs rpctap watch ARGS on a terminal of its own, quitting
// the view once it shows, and returns its stderr and exit status.
func runWatchCmd(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	return watchOnTerminal(t, env, args...)
}

// A server that cannot start is said at once, as rpctap run says it, not
// after waiting for a tap that never comes up.
func TestWatchWithAServerThatCannotStartSaysSoAtOnce(t *testing.T) {
	env := watchEnv(t, t.TempDir())
	stderr, code := runWatchCmd(t, env, "--", "/no/such/server")
	const want = "rpctap: cannot start /no/such/server: no such file or directory\n"
	if stderr != want || code != 127 {
		t.Errorf("rpctap watch said %q and exited %d; want %q and 127, as rpctap run", stderr, code, want)
	}
}

// A server's command that is there but cannot run says why and what to do,
// in watch as in run: a directory is no program, a file that is not
// executable wants chmod +x.
func TestAServerThatCannotRunSaysWhatToDo(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "server.sh")
	os.WriteFile(script, []byte("#!/bin/sh\ncat\n"), 0o644)
	env := watchEnv(t, dir)
	for _, c := range []struct{ server, want string }{
		{dir, "rpctap: cannot start " + dir + ": permission denied (it is a directory, not a program)\n"},
		{script, "rpctap: cannot start " + script + ": permission denied (it is not executable: chmod +x " + script + ")\n"},
	} {
		if stderr, code := runWatchCmd(t, env, "--", c.server); stderr != c.want || code != 127 {
			t.Errorf("rpctap watch -- %s said %q and exited %d; want %q and 127", c.server, stderr, code, c.want)
		}
		run := exec.Command(rpctapBinary(t), "run", "--no-record", "--", c.server)
		run.Env = env
		if out, _ := run.CombinedOutput(); string(out) != c.want {
			t.Errorf("rpctap run -- %s said %q; want %q", c.server, out, c.want)
		}
	}
}

// The host's output (tool results among it) is kept beside the session
// file, under its name, readable by its owner only, and not left in the
// temporary directory.
func TestWatchKeepsTheHostsOutputWithTheSessionOwnerOnly(t *testing.T) {
	dir := t.TempDir()
	env := watchEnv(t, dir)
	stderr, _ := runWatchCmd(t, env, "--host", "echo from-host; sleep 30 | {}", "--", "cat")
	var logPath, session string
	for _, l := range strings.Split(stderr, "\n") {
		if p, ok := strings.CutPrefix(l, "rpctap: the host's output is in "); ok {
			logPath = p
		}
		if p, ok := strings.CutPrefix(l, "rpctap: session recorded in "); ok {
			session = p
		}
	}
	if logPath == "" || session == "" {
		t.Fatalf("rpctap watch did not say where the host's output and the session are; stderr: %s", stderr)
	}
	if want := strings.TrimSuffix(session, ".jsonl") + ".host.log"; logPath != want {
		t.Errorf("the host's output is in %s, want %s, beside the session", logPath, want)
	}
	st, err := os.Stat(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("the host's log has mode %v, want 0600", st.Mode().Perm())
	}
	if b, _ := os.ReadFile(logPath); !bytes.Contains(b, []byte("from-host")) {
		t.Errorf("the host's log holds %q, want its output", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "tmp", "*")); len(left) > 0 {
		t.Errorf("rpctap watch left %q in the temporary directory", left)
	}
}

// The view says where the host's output is by a path the user can open
// as shown, whatever the working directory: whole, with ~ for the home
// directory (a bare file name opened nothing).
func TestTheViewNamesTheHostsLogByAPathThatOpens(t *testing.T) {
	t.Setenv("HOME", "/home/someone")
	session := "/home/someone/.local/state/rpctap/sessions/20261201T152759.670Z-server-everything.jsonl"
	log := strings.TrimSuffix(session, ".jsonl") + ".host.log"
	if got, want := hostLogStatus(log, session), "host log: ~/.local/state/rpctap/sessions/20261201T152759.670Z-server-everything.host.log"; got != want {
		t.Errorf("the view says %q; want %q", got, want)
	}
	if got, want := hostLogStatus("/state/x-1.host.log", "/elsewhere/x.jsonl"), "the host's output goes to /state/x-1.host.log"; got != want {
		t.Errorf("with the log apart from the session the view says %q; want %q", got, want)
	}
	if got := hostLogStatus("/home/someone2/x.host.log", ""); !strings.HasSuffix(got, " /home/someone2/x.host.log") {
		t.Errorf("a path beside the home directory, not in it: %q", got)
	}
}

// When the host ends before it starts the server, its last lines are
// printed one a line, each escaped, as it wrote them.
func TestTheHostsLastLinesArePrintedOneALine(t *testing.T) {
	stderr, code := runWatchCmd(t, watchEnv(t, t.TempDir()), "--host", `echo one; printf 'two \033[2J\r\n'; exit 3`, "--", "cat")
	if code != 2 || !strings.Contains(stderr, "the host exited before it started the server") || !strings.HasSuffix(stderr, ":\none\ntwo \\x1b[2J\n") {
		t.Errorf("rpctap watch said %q and exited %d; want the host's two lines, escaped, and exit 2", stderr, code)
	}
}

// What rpctap prints of its own about a server or a host masks secrets too:
// the server command that cannot start, and the host's last lines when the
// host ends before it starts the server.
func TestStartErrorsAndTheHostsLastLinesAreMasked(t *testing.T) {
	env := append(watchEnv(t, t.TempDir()), "API_TOKEN=supersecret123")
	for what, args := range map[string][]string{
		"a server that cannot start":      {"--", "/no/such/supersecret123"},
		"a host that exits with a secret": {"--host", "echo token supersecret123; exit 3", "--", "cat"},
	} {
		stderr, _ := runWatchCmd(t, env, args...)
		if strings.Contains(stderr, "supersecret123") || !strings.Contains(stderr, "***API_TOKEN***") {
			t.Errorf("%s: rpctap watch said %q; want the secret masked", what, stderr)
		}
	}
}

// The host's output that watch keeps beside the session is masked as the
// session is.
func TestWatchKeepsTheHostsOutputMasked(t *testing.T) {
	env := append(watchEnv(t, t.TempDir()), "API_TOKEN=supersecret123")
	stderr, _ := runWatchCmd(t, env, "--host", "echo from-host supersecret123; sleep 30 | {}", "--", "cat")
	var logPath string
	for _, l := range strings.Split(stderr, "\n") {
		if p, ok := strings.CutPrefix(l, "rpctap: the host's output is in "); ok {
			logPath = p
		}
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatalf("the host's log: %v; stderr: %s", err, stderr)
	}
	if bytes.Contains(b, []byte("supersecret123")) || !bytes.Contains(b, []byte("from-host ***API_TOKEN***")) {
		t.Errorf("the host's log holds %q; want the secret masked", b)
	}
}
