package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A session file that ends in 512 MiB of NUL bytes with no newline (what
// a filesystem can leave after a power loss; sparse, so it takes no disk)
// is read in bounded memory by every reader of session files, each of
// which skips and counts the damaged tail and says what it skipped. A
// bounded check, not a timed one: it measures each reader's peak RSS
// (wait4's rusage) and prints it.
func TestReadersOfADamagedFileStayBoundedAndSayWhatTheySkipped(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 512 MiB (sparse) several times")
	}
	bin := rpctapBinary(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "s.jsonl")
	run := exec.Command(bin, "run", "--record", rec, "--", "cat")
	run.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("rpctap run: %v\n%s", err, out)
	}
	fi, err := os.Stat(rec)
	if err != nil {
		t.Fatal(err)
	}
	const tail = 512 << 20
	if err := os.Truncate(rec, fi.Size()+tail); err != nil {
		t.Fatal(err)
	}
	const limitKB = 256 << 10
	for _, c := range []struct {
		name string
		args []string
		says string // what it says of the skipped tail, on stdout or stderr
	}{
		{"check", []string{"check", rec}, "skipped 1 line it could not read: line 7 (512 MiB)"},
		{"check --format json", []string{"check", "--format", "json", rec}, `"skipped_bytes": 536870912`},
		{"tail", []string{"tail", rec}, "1 line of " + rec + " could not be read (512 MiB)"},
		{"tail --json", []string{"tail", "--json", rec}, "could not be read (512 MiB)"},
		{"export --format json", []string{"export", rec, "--format", "json", "-o", filepath.Join(dir, "x.json")}, "could not be read (512 MiB) and left out"},
		{"export --format markdown", []string{"export", rec, "--format", "markdown", "-o", "-"}, "could not be read (512 MiB) and left out"},
		{"diff", []string{"diff", rec, rec}, ""},
		{"replay --as-host", []string{"replay", "--as-host", rec, "--no-record", "--", "cat"}, ""},
	} {
		cmd := exec.Command(bin, c.args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if e, ok := err.(*exec.ExitError); err != nil && (!ok || e.ExitCode() > 1) {
			t.Errorf("rpctap %s: %v\n%.2000s", c.name, err, out.Bytes())
			continue
		}
		peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB on Linux
		t.Logf("rpctap %s: peak RSS %d MB", c.name, peak>>10)
		if peak > limitKB {
			t.Errorf("rpctap %s peaked at %d MB reading a file with a damaged tail; the bound is %d MB", c.name, peak>>10, limitKB>>10)
		}
		if !bytes.Contains(out.Bytes(), []byte(c.says)) {
			t.Errorf("rpctap %s does not say %q of the tail it skipped:\n%.2000s", c.name, c.says, out.Bytes())
		}
	}
}
