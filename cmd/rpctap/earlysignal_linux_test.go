package main

import (
	"bytes"
	"debug/buildinfo"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The host owns the lifecycle from the first moment anything of the tap can
// catch a signal: the first handler the process has for it, as /proc shows
// (SigCgt). With cgo that is the C one package earlysignal installs before
// the Go runtime starts; the kernel's exec and the dynamic loader before it,
// a few hundred microseconds, run nothing of the program. The signals come
// 0-20 ms after that handler appears, skewed towards 0: through the Go
// runtime's start and the first package inits, where the runtime's own
// handler used to end the tap before package earlysignal had asked os/signal
// for them, and past the moment it has.
func TestSignalInTheTapsFirstMillisecondsEndsItCleanly(t *testing.T) {
	bin := rpctapBinary(t)
	if !builtWithCgo(t, bin) {
		t.Skip("rpctap is built without cgo: it catches these signals only from package earlysignal's init on")
	}
	tries := 30
	if testing.Short() {
		tries = 9
	}
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("RPCTAP_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("RPCTAP_SEED=%d repeats this run", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	sigs := []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP}
	sent, early := 0, 0
	for i := range tries {
		sig := sigs[i%len(sigs)]
		if signal.Ignored(sig) {
			// The tap would inherit it as ignored, and keep it so.
			continue
		}
		u := rng.Float64()
		delay := time.Duration(u * u * float64(20*time.Millisecond))
		msg, beforeReady := signalFromFirstHandler(bin, t.TempDir(), sig, delay)
		sent++
		if beforeReady {
			early++
		}
		if msg != "" {
			t.Errorf("%s %v after the tap's first handler for it: %s", sig, delay.Round(10*time.Microsecond), msg)
		}
	}
	if sent == 0 {
		t.Skip("this test process ignores SIGTERM, SIGINT and SIGHUP, and so would the tap")
	}
	t.Logf("%d of %d signals came before the tap had asked os/signal for them", early, sent)
	if early == 0 {
		t.Errorf("none of the %d signals came before the tap had asked os/signal for them: this run shows nothing of the first milliseconds", sent)
	}
}

// signalFromFirstHandler runs rpctap run -- sleep 30, sends it sig delay
// after the process has a handler for it, and says what went wrong (""
// when nothing did) and whether sig was sent before package earlysignal
// had asked os/signal for it.
func signalFromFirstHandler(bin, dir string, sig syscall.Signal, delay time.Duration) (problem string, beforeReady bool) {
	path := filepath.Join(dir, "s.jsonl")
	mark := "RPCTAP_TEST_MARK=" + filepath.Base(dir) + strconv.Itoa(os.Getpid())
	cmd := exec.Command(bin, "run", "--no-listen", "--record", path, "--", "sleep", "30")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+dir, mark, "RPCTAP_TEST_SIGNALS_READY=fd3")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	readyr, ready, err := os.Pipe()
	if err != nil {
		return err.Error(), false
	}
	defer readyr.Close()
	cmd.ExtraFiles = []*os.File{ready}
	if err := cmd.Start(); err != nil {
		ready.Close()
		return err.Error(), false
	}
	ready.Close()
	if msg := waitForHandler(cmd.Process.Pid, bin, sig); msg != "" {
		cmd.Process.Kill()
		cmd.Wait()
		return msg, false
	}
	// Spinning: a sleep is far coarser than these delays.
	for start := time.Now(); time.Since(start) < delay; {
	}
	cmd.Process.Signal(sig)
	beforeReady = !hasByte(readyr)
	return signalledTapEnded(cmd, &stderr, path, mark, sig), beforeReady
}

// waitForHandler waits, polling without a pause, until process pid runs
// bin and has a handler for sig, and says what went wrong ("" when
// nothing did).
func waitForHandler(pid int, bin string, sig syscall.Signal) string {
	deadline := time.Now().Add(10 * time.Second)
	for {
		if exe, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); exe == bin {
			d, err := disposition(pid, sig)
			if err != nil {
				return err.Error()
			}
			if d == "caught" {
				return ""
			}
		}
		if time.Now().After(deadline) {
			return "the process had no handler for " + sig.String() + " within 10 s"
		}
	}
}

// disposition says what process pid does with sig: "caught", "ignored"
// or "default", from /proc/PID/status.
func disposition(pid int, sig syscall.Signal) (string, error) {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "", err
	}
	for _, f := range []struct{ field, says string }{{"SigCgt:", "caught"}, {"SigIgn:", "ignored"}} {
		i := bytes.Index(st, []byte("\n"+f.field))
		if i < 0 {
			continue
		}
		rest := bytes.TrimLeft(st[i+1+len(f.field):], " \t")
		if j := bytes.IndexByte(rest, '\n'); j >= 0 {
			rest = rest[:j]
		}
		mask, err := strconv.ParseUint(string(rest), 16, 64)
		if err != nil {
			return "", err
		}
		if mask&(1<<(sig-1)) != 0 {
			return f.says, nil
		}
	}
	return "default", nil
}

// hasByte reads one byte from the pipe f if one is there, without
// waiting, and says whether it did.
func hasByte(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	n := 0
	rc.Read(func(fd uintptr) bool {
		n, _ = syscall.Read(int(fd), make([]byte, 1))
		return true
	})
	return n == 1
}

func builtWithCgo(t *testing.T, bin string) bool {
	t.Helper()
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range bi.Settings {
		if s.Key == "CGO_ENABLED" {
			return s.Value == "1"
		}
	}
	return false
}

// A tap started with SIGHUP and SIGINT ignored (nohup, or a shell's
// background job) keeps them ignored while it starts: the early handler
// leaves them alone, as the Go runtime does. Until package earlysignal
// asks os/signal for them, they do nothing; a SIGTERM then ends the tap as
// itself.
func TestSignalsInheritedAsIgnoredStayIgnoredWhileTheTapStarts(t *testing.T) {
	bin := rpctapBinary(t)
	for attempt := 1; ; attempt++ {
		msg, conclusive := ignoredWhileStarting(bin, t.TempDir())
		if msg != "" {
			t.Fatal(msg)
		}
		if conclusive {
			return
		}
		if attempt == 5 {
			t.Fatal("in 5 tries, the tap had always asked os/signal for SIGHUP and SIGINT before they were sent")
		}
	}
}

// ignoredWhileStarting starts rpctap run -- sleep 30 with SIGHUP and
// SIGINT ignored, sends both as soon as it has a handler for SIGTERM, then
// SIGTERM once it is ready, and says what went wrong ("" when nothing
// did) and whether SIGHUP and SIGINT came before it was ready.
func ignoredWhileStarting(bin, dir string) (problem string, conclusive bool) {
	path := filepath.Join(dir, "s.jsonl")
	mark := "RPCTAP_TEST_MARK=" + filepath.Base(dir) + strconv.Itoa(os.Getpid())
	cmd := exec.Command("/bin/sh", "-c", `trap '' HUP INT; exec "$0" "$@"`, bin, "run", "--no-listen", "--record", path, "--", "sleep", "30")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+dir, mark, "RPCTAP_TEST_SIGNALS_READY=fd3")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	readyr, ready, err := os.Pipe()
	if err != nil {
		return err.Error(), false
	}
	defer readyr.Close()
	cmd.ExtraFiles = []*os.File{ready}
	if err := cmd.Start(); err != nil {
		ready.Close()
		return err.Error(), false
	}
	ready.Close()
	fail := func(msg string) (string, bool) {
		cmd.Process.Kill()
		cmd.Wait()
		return msg, false
	}
	pid := cmd.Process.Pid
	if msg := waitForHandler(pid, bin, syscall.SIGTERM); msg != "" {
		return fail(msg)
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT} {
		if d, err := disposition(pid, sig); err != nil || d != "ignored" {
			return fail(sig.String() + " is " + d + " in the starting tap, want ignored, as it was inherited")
		}
		cmd.Process.Signal(sig)
	}
	if hasByte(readyr) {
		return fail("")
	}
	readyc := make(chan struct{})
	go func() { readyr.Read(make([]byte, 1)); close(readyc) }()
	select {
	case <-readyc:
	case <-time.After(10 * time.Second):
		return fail("the tap did not say within 10 s that it catches signals (package earlysignal)")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	return signalledTapEnded(cmd, &stderr, path, mark, syscall.SIGTERM), true
}

// Commands other than run and replay keep the default actions from their
// start: nothing catches SIGTERM, SIGINT or SIGHUP for them, and each
// ends rpctap classify (which reads its stdin, held open, until EOF).
func TestCommandsOtherThanRunAndReplayDieOfTheseSignals(t *testing.T) {
	bin := rpctapBinary(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		if signal.Ignored(sig) {
			continue // the command would inherit it as ignored
		}
		for range 3 {
			u := rng.Float64()
			delay := time.Duration(u * u * float64(5*time.Millisecond))
			if msg := signalClassify(bin, sig, delay); msg != "" {
				t.Errorf("%s %v after rpctap classify's first handler for it: %s", sig, delay.Round(10*time.Microsecond), msg)
			}
		}
	}
}

// signalClassify sends rpctap classify sig delay after it has a handler
// for it, and says what went wrong ("" when nothing did).
func signalClassify(bin string, sig syscall.Signal, delay time.Duration) string {
	cmd := exec.Command(bin, "classify")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err.Error()
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		return err.Error()
	}
	if msg := waitForHandler(cmd.Process.Pid, bin, sig); msg != "" {
		cmd.Process.Kill()
		cmd.Wait()
		return msg
	}
	for start := time.Now(); time.Since(start) < delay; {
	}
	cmd.Process.Signal(sig)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		return "it was still running 10 s later: something caught the signal"
	}
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig {
		return "it ended with " + cmd.ProcessState.String() + ", want killed by " + sig.String()
	}
	return ""
}

// A tap started with SIGHUP ignored (nohup) leaves it ignored once it is
// running, and its server inherits it ignored, as the server would with
// no tap in front of it; SIGTERM, not ignored, still reaches the server.
func TestATapStartedWithSIGHUPIgnoredLeavesItIgnoredForItsServer(t *testing.T) {
	bin := rpctapBinary(t)
	dir := t.TempDir()
	seen := filepath.Join(dir, "server-status")
	// The server writes the dispositions it started with, then waits.
	server := `grep -E '^Sig(Ign|Cgt):' /proc/$$/status > "$0.tmp" && mv "$0.tmp" "$0"; exec sleep 30`
	cmd := exec.Command("/bin/sh", "-c", `trap '' HUP; exec "$0" "$@"`, bin, "run", "--no-listen", "--record", filepath.Join(dir, "s.jsonl"), "--", "sh", "-c", server, seen)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var status []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(seen); err == nil {
			status = b
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not start within 10 s")
		}
	}
	if d, err := disposition(cmd.Process.Pid, syscall.SIGHUP); err != nil || d != "ignored" {
		t.Errorf("the running tap's SIGHUP is %s (%v), want ignored, as it was inherited", d, err)
	}
	var ign uint64
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			ign, _ = strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	if ign&(1<<(syscall.SIGHUP-1)) == 0 {
		t.Errorf("the server started with SIGHUP not ignored (SigIgn %x): the tap undid the ignoring it inherited", ign)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("after SIGTERM the tap ended with %v, want exit %d (its server ended by SIGTERM)", err, 128+int(syscall.SIGTERM))
	}
}
