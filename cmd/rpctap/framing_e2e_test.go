package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lspFrame is body with a Content-Length header.
func lspFrame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// replayServe runs rpctap replay --as-server on file with the host's
// input in, and returns what it wrote to the host.
func replayServe(t *testing.T, file, in, record string) string {
	t.Helper()
	rec := []string{"--no-record"}
	if record != "" {
		rec = []string{"--record", record}
	}
	cmd := exec.Command(rpctapBinary(t), append(append([]string{"replay"}, rec...), "--no-delay", "--as-server", file)...)
	cmd.Stdin = strings.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan struct{})
	var out []byte
	var err error
	go func() {
		out, err = cmd.Output()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("replay --as-server did not end when its host's input did:\n%s", stderr.Bytes())
	}
	if err != nil {
		t.Fatalf("replay --as-server: %v\n%s", err, stderr.Bytes())
	}
	return string(out)
}

// Under auto framing each direction's framing is recorded apart: a tap
// between a host that frames with Content-Length and a server that
// answers in lines says so of the host's direction only, and replay
// --as-server then answers in lines, as the server did (one note for the
// whole session made it answer with Content-Length headers). A file an
// older rpctap wrote, whose note names no direction, still means both.
func TestAutoFramingIsRecordedPerDirectionAndReplayRebuildsEachSidesBytes(t *testing.T) {
	bin := rpctapBinary(t)
	dir := t.TempDir()
	rec := filepath.Join(dir, "s.jsonl")
	request := lspFrame(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	const answer = `{"jsonrpc":"2.0","id":1,"result":{"pong":true}}`
	// The server reads the request whole, then answers in a line.
	server := fmt.Sprintf(`head -c %d > /dev/null; printf '%%s\n' '%s'; cat > /dev/null`, len(request), answer)
	run := exec.Command(bin, "run", "--framing", "auto", "--record", rec, "--", "sh", "-c", server)
	run.Stdin = strings.NewReader(request)
	var wire, stderr bytes.Buffer
	run.Stdout, run.Stderr = &wire, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("rpctap run: %v\n%s", err, stderr.Bytes())
	}
	if wire.String() != answer+"\n" {
		t.Fatalf("the host read %q through the tap; the server wrote %q", wire.String(), answer+"\n")
	}
	file, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(file, []byte(`"event":"note","dir":"h2s","text":"framing: lsp"`)) || bytes.Contains(file, []byte(`"dir":"s2h","text":"framing: lsp"`)) {
		t.Errorf("the session file does not say the host's direction alone used Content-Length:\n%s", file)
	}
	replayed := filepath.Join(dir, "replayed.jsonl")
	if got := replayServe(t, rec, request, replayed); got != answer+"\n" {
		t.Errorf("replay --as-server answered %q; the server wrote %q", got, answer+"\n")
	}
	// The replay's own session file says the same of each direction.
	if file, err := os.ReadFile(replayed); err != nil {
		t.Error(err)
	} else if !bytes.Contains(file, []byte(`"framing":"auto"`)) || !bytes.Contains(file, []byte(`"event":"note","dir":"h2s","text":"framing: lsp"`)) ||
		bytes.Contains(file, []byte(`"dir":"s2h","text":"framing: lsp"`)) {
		t.Errorf("the replay's session file does not say the host's direction alone used Content-Length:\n%s", file)
	}
	// An older file: one note with no direction, for the whole session.
	var old bytes.Buffer
	for _, line := range strings.SplitAfter(string(file), "\n") {
		old.WriteString(strings.Replace(line, `"event":"note","dir":"h2s","text":"framing: lsp"`, `"event":"note","text":"framing: lsp"`, 1))
	}
	oldRec := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(oldRec, old.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := replayServe(t, oldRec, request, ""); got != lspFrame(answer) {
		t.Errorf("replay --as-server of a file whose framing note names no direction answered %q, want %q (both directions lsp)", got, lspFrame(answer))
	}
}
