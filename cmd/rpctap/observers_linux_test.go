package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Observers of a tap that records no file neither slow it nor grow its
// memory, whatever they or the peers do: a view that stops reading costs the
// tap a fixed bound of memory, whatever crosses meanwhile, and is told how
// many frames it missed; tail says so and exits 1.

// startNoFileTap starts `rpctap run --no-record -- cat` listening on its
// socket, and waits until the socket is there.
func startNoFileTap(t *testing.T) *tapRun {
	t.Helper()
	dir := t.TempDir()
	r, _ := startCat(t, dir, "--no-record", "--name", "nofile-"+filepath.Base(dir))
	return r
}

// stoppedTail attaches rpctap tail to the tap r, waits until it has
// printed a frame each way (so it is attached), and stops it with
// SIGSTOP, as ^Z does.
func stoppedTail(t *testing.T, r *tapRun) (tail *exec.Cmd, out, stderr *lockedBuffer) {
	t.Helper()
	tail, out, stderr = attachedTail(t, r)
	if err := tail.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	return tail, out, stderr
}

// attachedTail attaches rpctap tail to the tap r, and waits until it has
// printed a frame each way (so it is attached).
func attachedTail(t *testing.T, r *tapRun) (tail *exec.Cmd, out, stderr *lockedBuffer) {
	t.Helper()
	out, stderr = &lockedBuffer{b: new(bytes.Buffer)}, &lockedBuffer{b: new(bytes.Buffer)}
	tail = exec.Command(rpctapBinary(t), "tail", strconv.Itoa(r.cmd.Process.Pid))
	tail.Stdout, tail.Stderr = out, stderr
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tail.Process.Signal(syscall.SIGCONT)
		tail.Process.Kill()
		tail.Wait()
	})
	// Pings until tail shows one: those before it attached it never sees.
	for deadline := time.Now().Add(30 * time.Second); frameLines(out.String()) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("tail printed %q in 30 s; stderr %q", out, stderr)
		}
		r.echo(t, `{"jsonrpc":"2.0","id":"first","method":"ping"}`)
	}
	return tail, out, stderr
}

// pump sends n frames of size bytes through the tap (cat sends each
// back) and reads them all back, then closes the tap's stdin and waits
// for it to end. It returns the tap's peak RSS, from the kernel.
func pump(t *testing.T, r *tapRun, n, size int) int64 {
	t.Helper()
	frame := func(i int) []byte {
		head := fmt.Sprintf(`{"jsonrpc":"2.0","method":"n","params":{"i":%d,"pad":"`, i)
		tail := `"}}` + "\n"
		return []byte(head + strings.Repeat("x", max(size-len(head)-len(tail), 0)) + tail)
	}
	sent := make(chan error, 1)
	go func() {
		w := bufio.NewWriterSize(r.stdin, 256<<10)
		for i := range n {
			if _, err := w.Write(frame(i)); err != nil {
				sent <- err
				return
			}
		}
		sent <- w.Flush()
	}()
	got := make(chan error, 1)
	go func() {
		for i := range n {
			line, err := r.stdout.ReadSlice('\n')
			for errors.Is(err, bufio.ErrBufferFull) {
				var more []byte
				more, err = r.stdout.ReadSlice('\n')
				line = append(bytes.Clone(line), more...)
			}
			if err != nil {
				got <- fmt.Errorf("frame %d: %v", i, err)
				return
			}
			if len(line) != len(frame(i)) {
				got <- fmt.Errorf("frame %d came back %d bytes long, want %d", i, len(line), len(frame(i)))
				return
			}
		}
		got <- nil
	}()
	for range 2 {
		select {
		case err := <-sent:
			if err != nil {
				t.Fatalf("sending: %v", err)
			}
		case err := <-got:
			if err != nil {
				t.Fatalf("reading back: %v; stderr: %s", err, r.stderr)
			}
		case <-time.After(120 * time.Second):
			t.Fatal("the frames did not cross within 120 s")
		}
	}
	// The kernel's high-water mark of the tap's own memory, read while it
	// still runs. (Not the rusage of its exit: the clone that became the
	// tap shared the test process's memory until exec, and its maxrss
	// counts that too, however large this process has grown.)
	hwm := peakRSS(t, r.cmd.Process.Pid)
	r.stdin.Close()
	if code := r.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("the tap exited %d: %s", code, r.stderr)
	}
	return hwm
}

// peakRSS reads the peak resident set size of process pid (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM of %d: %q", pid, line)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/%d/status has no VmHWM", pid)
	return 0
}

// resume lets a stopped tail go on once the tap has ended, and returns
// its exit status.
func resume(t *testing.T, tail *exec.Cmd, stderr *lockedBuffer) int {
	t.Helper()
	tail.Process.Signal(syscall.SIGCONT)
	done := make(chan error, 1)
	go func() { done <- tail.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(60 * time.Second):
		t.Fatalf("tail did not end within 60 s of the session's end; stderr %q", stderr)
		return -1
	}
}

// A stopped view of a tap that records no file (tail, suspended) costs
// the tap a fixed bound of memory while 500 MiB of 256 KiB frames cross
// it: its peak RSS is measured with the view and without one. It was
// 1,062 MB with the view, against 45 MB without.
func TestAStoppedViewOfATapWithNoFileLeavesItsMemoryBounded(t *testing.T) {
	const n, size = 1000, 256 << 10 // each way: 500 MiB cross the tap
	without := pump(t, startNoFileTap(t), n, size)
	r := startNoFileTap(t)
	tail, _, stderr := stoppedTail(t, r)
	with := pump(t, r, n, size)
	t.Logf("the tap's peak RSS while 500 MiB of 256 KiB frames cross: %d MB with no view, %d MB with a stopped tail", without>>20, with>>20)
	if with > without+64<<20 {
		t.Errorf("a stopped tail grew the tap to %d MB (%d MB with no view); want at most 64 MB more", with>>20, without>>20)
	}
	if code := resume(t, tail, stderr); code != 1 || !strings.Contains(stderr.String(), "tail missed") {
		t.Errorf("the resumed tail exited %d saying %q; want 1, saying how many frames it missed", code, stderr)
	}
}

// tail of a tap that records no file, stopped while 200,000 frames cross
// and resumed after the tap has ended, shows every frame or says how many
// it missed, and exits 1 when it missed some: the frames it shows and
// those it says it missed are all the frames that crossed. It printed
// 1,361 of 200,000 frames and exited 0 without a word.
func TestTailOfATapWithNoFileSaysHowManyFramesItMissed(t *testing.T) {
	const n = 100_000 // each way
	r := startNoFileTap(t)
	tail, out, stderr := stoppedTail(t, r)
	pump(t, r, n, 120)
	code := resume(t, tail, stderr)
	shown := frameLines(out.String())
	pings := strings.Count(out.String(), " ping ") // those it saw before it stopped, all of them
	var missed int
	if m := regexp.MustCompile(`tail missed (\d+) frames`).FindStringSubmatch(stderr.String()); m != nil {
		missed, _ = strconv.Atoi(m[1])
	}
	all := 2*n + pings
	t.Logf("tail showed %d of %d frames and said it missed %d; exit status %d", shown, all, missed, code)
	if shown == all {
		if code != 0 {
			t.Errorf("tail showed every frame and exited %d: %s", code, stderr)
		}
		return
	}
	if code != 1 || shown+missed != all {
		t.Errorf("tail showed %d frames, said %q and exited %d; want it to say it missed the other %d, and exit 1", shown, stderr, code, all-shown)
	}
	if strings.Contains(stderr.String(), "and its end") {
		t.Errorf("tail says it missed the end of the session too: %s", stderr)
	}
	if notes := strings.Count(out.String(), "# this view fell behind"); notes == 0 {
		t.Errorf("tail printed no note where frames were missed:\n%s", lastBytes(out.String(), 2000))
	}
}

// tail of a tap that records no file, which keeps only the first 16 MiB
// of a frame to classify it, cannot show a frame of 20 MiB (each way, as
// cat echoes it): it prints a note in its place, counts it as missed and
// exits 1, and shows the frames after it. It printed the frames around
// them as if there were none, and exited 0.
func TestTailOfATapWithNoFileSaysItMissedAFrameTooLargeToHold(t *testing.T) {
	r := startNoFileTap(t)
	tail, out, stderr := attachedTail(t, r)
	big := `{"jsonrpc":"2.0","id":"big","method":"big","params":{"pad":"` + strings.Repeat("x", 20<<20) + `"}}` + "\n"
	go r.stdin.Write([]byte(big))
	back := make([]byte, len(big))
	if _, err := io.ReadFull(r.stdout, back); err != nil || string(back) != big {
		t.Fatalf("the host got %d bytes of the large frame back (%v)", len(back), err)
	}
	r.echo(t, `{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	r.stdin.Close()
	if code := r.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("the tap exited %d: %s", code, r.stderr)
	}
	code := resume(t, tail, stderr)
	notes := strings.Count(out.String(), "# a frame of 20 MiB toward the ")
	after := strings.Count(out.String(), `id="after" ping`)
	if notes != 2 || after != 2 {
		t.Errorf("tail printed %d notes of a frame of 20 MiB, and the ping after it %d times; want 2 and 2:\n%s", notes, after, out)
	}
	if code != 1 || !strings.Contains(stderr.String(), "tail missed 2 frames of the session") {
		t.Errorf("tail exited %d saying %q; want 1, saying it missed 2 frames", code, stderr)
	}
}

// frameLines counts the frames in tail's output.
func frameLines(out string) int {
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " → ") || strings.Contains(l, " ← ") {
			n++
		}
	}
	return n
}

func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// tail is an observer through and through: every thread of it runs at
// the view's lower priority (nice 19), its garbage collection and its
// reading of the tap's notes as much as its indexing. Only its indexing
// thread did, and on a small machine the others took the CPU the tap
// needed.
func TestTailRunsEveryThreadAtALowerPriority(t *testing.T) {
	r, _, _ := startListening(t)
	out := &lockedBuffer{b: new(bytes.Buffer)}
	tail := exec.Command(rpctapBinary(t), "tail", strconv.Itoa(r.cmd.Process.Pid))
	tail.Stdout, tail.Stderr = out, out
	if err := tail.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { tail.Process.Kill(); tail.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); frameLines(out.String()) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("tail printed %q in 30 s", out)
		}
		r.echo(t, `{"jsonrpc":"2.0","id":"first","method":"ping"}`)
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", tail.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	var nice []string
	low := 0
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", tail.Process.Pid, task.Name()))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
		nice = append(nice, f[16])
		if f[16] == "19" {
			low++
		}
	}
	if low != len(nice) {
		t.Errorf("tail's %d threads run at nice %v; want 19 each", len(nice), nice)
	}
}
