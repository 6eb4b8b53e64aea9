package main

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// --record with a character device or a FIFO (the /dev/null idiom, a
// pipe someone reads) writes the session there as it is, for rpctap run
// and for the commands run at a terminal, with --force or without: the
// device, the FIFO and a link to one are never removed, nothing is made
// beside them, and nothing says the session was recorded. A terminal is
// refused: records hold the peers' text unescaped.
func TestRecordToADeviceOrAFIFOWritesItAsItIs(t *testing.T) {
	dir := t.TempDir()
	env := watchEnv(t, dir)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
	run := func(record string, force bool) string {
		t.Helper()
		args := []string{"run", "--no-listen", "--record", record}
		if force {
			args = append(args, "--force")
		}
		cmd := exec.Command(rpctapBinary(t), append(args, "--", "cat")...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(ping)
		var out, errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errs
		if err := cmd.Run(); err != nil || out.String() != ping {
			t.Fatalf("rpctap run --record %s: %v, relayed %q; stderr: %s", record, err, out.String(), errs.String())
		}
		return errs.String()
	}
	sinks := map[string]fs.FileMode{}
	link := filepath.Join(dir, "null-link")
	os.Symlink("/dev/null", link)
	sinks[link] = fs.ModeSymlink
	node := filepath.Join(dir, "null")
	if err := syscall.Mknod(node, syscall.S_IFCHR|0o666, int(1<<8|3)); err == nil { // the null device, 1,3
		sinks[node] = fs.ModeDevice | fs.ModeCharDevice
	} else {
		t.Logf("no device node of the test's own (%v): the link to /dev/null stands for one", err)
	}
	for path, mode := range sinks {
		for _, force := range []bool{false, true} {
			if said := run(path, force); said != "" {
				t.Errorf("rpctap run --record %s (force %v) said %q", path, force, said)
			}
		}
		if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != mode.Type() {
			t.Errorf("%s is now %v, %v; want %v", path, fi.Mode(), err, mode)
		}
	}
	// The commands run at a terminal (the demo takes 5 s: once).
	cmd := exec.Command(rpctapBinary(t), "demo", "--no-ui", "--speed", "1000", "--record", link)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil || bytes.Contains(out, []byte(link)) {
		t.Errorf("rpctap demo --record %s: %v, said:\n%s", link, err, out)
	}
	for path, mode := range sinks {
		if said, code := runWatchCmd(t, env, "--record", path, "--force", "--", "cat"); code != 0 || strings.Contains(said, path) {
			t.Errorf("rpctap watch --record %s: exit %d, said %q", path, code, said)
		}
		if fi, err := os.Lstat(path); err != nil || fi.Mode().Type() != mode.Type() {
			t.Errorf("%s is now %v, %v; want %v", path, fi.Mode(), err, mode)
		}
	}

	// A FIFO someone reads gets the session.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// The reader holds a writer's end too, so that it sees no end of
	// its own before the session's, and it opens at once: the pipe then
	// holds the session once rpctap run is done.
	reader, err := os.OpenFile(fifo, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if said := run(fifo, true); said != "" {
		t.Errorf("rpctap run --record (a FIFO) said %q", said)
	}
	reader.SetReadDeadline(time.Now().Add(time.Second))
	b, _ := io.ReadAll(reader)
	if !bytes.HasPrefix(b, []byte(`{"rpctap":"session"`)) || !bytes.Contains(b, []byte(`\"method\":\"ping\"`)) || !bytes.Contains(b, []byte(`"event":"exit"`)) {
		t.Errorf("the FIFO's reader read %q", b)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("the FIFO is now %v, %v", fi, err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*-2*")); len(files) > 0 {
		t.Errorf("recorded beside a sink: %v", files)
	}

	// A terminal.
	master, slave := openPty(t)
	defer master.Close()
	pts := slave.Name()
	slave.Close()
	said := run(pts, true)
	if want := "rpctap: cannot record this session: " + pts + " is a terminal, where the peers' text would be shown unescaped; follow the session with rpctap tail or rpctap watch, or give --record a file's path\n"; said != want {
		t.Errorf("rpctap run --record (a terminal) said %q; want %q", said, want)
	}
	master.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, _ := master.Read(make([]byte, 4096)); n > 0 {
		t.Errorf("the terminal was written %d bytes", n)
	}
}

// rpctap run --force never writes over the session file of a tap that
// is still recording it (two launches of a host with the same --record
// FILE --force): the second session goes beside it, and says why, and
// the first goes on recording its file; a command at a terminal refuses.
// Once the first tap is done, --force writes over its file.
func TestForceNeverWritesOverTheFileOfATapStillRecordingIt(t *testing.T) {
	first := startRun(t, nil, []string{"cat"})
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
	first.stdin.Write([]byte(ping))
	if got := first.line(t, 10*time.Second); got != ping {
		t.Fatalf("the first tap relayed %q", got)
	}
	before, err := os.Stat(first.path)
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	cmd := exec.Command(rpctapBinary(t), "run", "--no-listen", "--record", first.path, "--force", "--", "cat")
	cmd.Env = env
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"second"}` + "\n")
	var errs bytes.Buffer
	cmd.Stderr = &errs
	if err := cmd.Run(); err != nil {
		t.Fatalf("the second rpctap run: %v; stderr: %s", err, errs.String())
	}
	beside, _ := filepath.Glob(strings.TrimSuffix(first.path, ".jsonl") + "-*.jsonl")
	if len(beside) != 1 {
		t.Fatalf("the second session went to %v; stderr: %s", beside, errs.String())
	}
	if want := "rpctap: an rpctap that is still running records " + first.path + ", so this session is recorded in " + beside[0] + " (--record another name)\n"; errs.String() != want {
		t.Errorf("the second rpctap run said %q; want %q", errs.String(), want)
	}
	watchEnvDir := t.TempDir()
	if said, code := runWatchCmd(t, watchEnv(t, watchEnvDir), "--record", first.path, "--force", "--", "cat"); code != 2 ||
		said != "rpctap: an rpctap that is still running records "+first.path+"; give --record another name\n" {
		t.Errorf("rpctap watch --record (a live file) --force: exit %d, said %q", code, said)
	}

	first.stdin.Write([]byte(`{"jsonrpc":"2.0","id":3,"method":"after"}` + "\n"))
	first.stdin.Close()
	if code := first.wait(t, 10*time.Second); code != 0 {
		t.Errorf("the first tap exited %d; stderr: %s", code, first.stderr)
	}
	after, err := os.Stat(first.path)
	b, _ := os.ReadFile(first.path)
	if err != nil || !os.SameFile(before, after) || !bytes.Contains(b, []byte(`"method":"after"`)) || bytes.Contains(b, []byte(`"second"`)) {
		t.Errorf("the first tap's file was replaced or lost its frames (same file: %v):\n%s", err == nil && os.SameFile(before, after), b)
	}
	cmd = exec.Command(rpctapBinary(t), "run", "--no-listen", "--record", first.path, "--force", "--", "cat")
	cmd.Env = env
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":4,"method":"fourth"}` + "\n")
	if out, err := cmd.CombinedOutput(); err != nil || !bytes.Contains(out, []byte(`"fourth"`)) || bytes.Contains(out, []byte("rpctap:")) {
		t.Errorf("rpctap run --force once the first tap is done: %v, %s", err, out)
	}
	if b, _ := os.ReadFile(first.path); !bytes.Contains(b, []byte(`"method":"fourth"`)) {
		t.Errorf("--force did not write over the ended session: it holds\n%s", b)
	}
}
