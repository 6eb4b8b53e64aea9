package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// replayRecording is a short MCP recording for replay to play.
func replayRecording(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "rec.jsonl")
	var b bytes.Buffer
	w, err := sessions.NewWriter(&b, sessions.Header{ID: "rec", Started: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Name: "rec", Framing: "ndjson", Profile: "mcp"})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
	} {
		dir := "h2s"
		if i%2 == 1 {
			dir = "s2h"
		}
		d, _ := classify.ParseDirection(dir)
		w.WriteFrame(sessions.FrameRecord{T: int64(i) * 1000, Dir: d, Frame: []byte(f)})
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// exitOf reads the exit record of a session file.
func exitOf(path string) (*sessions.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd := sessions.NewReader(f)
	rd.Header()
	for {
		e, err := rd.Next()
		if err != nil {
			return nil, fmt.Errorf("no exit record")
		}
		if e.Kind == sessions.EventExit {
			ev := *e
			return &ev, nil
		}
	}
}

// waitForFile waits until the file at path holds want.
func waitForFile(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(want)) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s did not come to hold %s within 30 s", path, want)
}

// endBySignal sends sig to cmd, waits for it, and checks it exits
// 128+sig with the replay's session file closed by an exit record that
// names the signal.
func endBySignal(t *testing.T, cmd *exec.Cmd, sig syscall.Signal, record string, stderr *bytes.Buffer) {
	t.Helper()
	cmd.Process.Signal(sig)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("rpctap replay did not end within 30 s of %v", sig)
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() || ws.ExitStatus() != 128+int(sig) {
		t.Errorf("after %v: %v, want exit status %d; stderr: %s", sig, cmd.ProcessState, 128+int(sig), stderr)
	}
	ev, err := exitOf(record)
	if err != nil {
		t.Fatalf("the replay's session file: %v", err)
	}
	if ev.Code == nil || *ev.Code != 128+int(sig) || ev.Signal != signalName(sig) {
		code := -1
		if ev.Code != nil {
			code = *ev.Code
		}
		t.Errorf("exit record: code %d signal %q, want %d %s", code, ev.Signal, 128+int(sig), signalName(sig))
	}
}

func TestReplayAsServerEndsOnASignalWith128PlusItAndAnExitRecord(t *testing.T) {
	bin := rpctapBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(signalName(sig), func(t *testing.T) {
			dir := t.TempDir()
			rec := replayRecording(t, dir)
			record := filepath.Join(dir, "replay.jsonl")
			cmd := exec.Command(bin, "replay", "--as-server", rec, "--record", record)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			// It is serving once it answers; the host keeps its input open.
			io.WriteString(in, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`+"\n")
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || !strings.Contains(line, `"id":7`) {
				t.Fatalf("no answer to initialize: %q %v; stderr: %s", line, err, &stderr)
			}
			endBySignal(t, cmd, sig, record, &stderr)
		})
	}
}

func TestReplayAsHostEndsOnASignalWith128PlusItPassedToTheServer(t *testing.T) {
	bin := rpctapBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(signalName(sig), func(t *testing.T) {
			dir := t.TempDir()
			rec := replayRecording(t, dir)
			record := filepath.Join(dir, "replay.jsonl")
			mark := "RPCTAP_TEST_MARK=replay" + filepath.Base(dir) + strconv.Itoa(os.Getpid())
			// A server that reads and never answers: replay waits on it.
			cmd := exec.Command(bin, "replay", "--as-host", rec, "--record", record, "--timeout", "60s", "--", "sh", "-c", "cat >/dev/null")
			cmd.Env = append(os.Environ(), mark)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitForFile(t, record, `"method":"initialize"`)
			endBySignal(t, cmd, sig, record, &stderr)
			if left := processesWith(mark); len(left) > 0 {
				for _, pid := range left {
					syscall.Kill(pid, syscall.SIGKILL)
				}
				t.Errorf("the server was left running (pids %v)", left)
			}
			if stdout.Len() > 0 {
				t.Errorf("a report after a signal: %s", &stdout)
			}
		})
	}
}
