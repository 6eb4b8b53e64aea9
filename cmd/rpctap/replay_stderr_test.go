package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// replay --as-host is the host of the server it starts, so the server's
// stderr is shown to the user: masked as the session file is, with control,
// escape and bidi characters escaped, a line at a time (every byte rpctap
// writes to a screen goes through one masking step, and untrusted peer text
// never reaches the terminal raw).
func TestReplayAsHostShowsTheServersStderrMaskedAndEscaped(t *testing.T) {
	bin := rpctapBinary(t)
	dir := t.TempDir()
	rec := replayRecording(t, dir)
	// The server says the secret, an ESC sequence, a bidi override and a
	// backslash of its own on stderr, then answers every request as
	// recorded.
	script := `printf 'token=%s \033[31mred\342\200\256 back\\x1b\nno newline' "$API_TOKEN" >&2
while read -r line; do
  case "$line" in
    *initialize*) echo '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}' ;;
    *tools/list*) echo '{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}' ;;
  esac
done`
	cmd := exec.Command(bin, "replay", "--as-host", rec, "--no-record", "--", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "API_TOKEN=supersecret123")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("replay: %v\nstdout: %s\nstderr: %s", err, &stdout, &stderr)
	}
	got := stderr.String()
	if strings.Contains(got, "supersecret123") {
		t.Errorf("the server's stderr shows the secret unmasked:\n%q", got)
	}
	if strings.ContainsAny(got, "\x1b\u202e") {
		t.Errorf("the server's stderr reaches the terminal raw:\n%q", got)
	}
	for _, want := range []string{`token=***API_TOKEN*** \x1b[31mred\u202e back\\x1b` + "\n", "no newline\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q:\n%q", want, got)
		}
	}
	if !strings.Contains(stdout.String(), "2 same") {
		t.Errorf("the report: %s", &stdout)
	}
}

// The escaper writes a line of any length, in pieces cut where a
// character begins, however the bytes come: 64 KiB with no newline (a
// read past the line's end panicked there), more, and a character
// across the cut.
func TestLineEscaperWritesLinesOfAnyLength(t *testing.T) {
	for _, n := range []int{maxEscapedLine - 1, maxEscapedLine, maxEscapedLine + 1, 3*maxEscapedLine + 7} {
		var out bytes.Buffer
		e := &lineEscaper{w: &out}
		text := strings.Repeat("é", n/2) + strings.Repeat("a", n%2)
		for _, piece := range []string{text[:len(text)/3], text[len(text)/3:], "\n"} {
			if _, err := e.Write([]byte(piece)); err != nil {
				t.Fatal(err)
			}
		}
		e.Close()
		got := strings.ReplaceAll(out.String(), "\n", "")
		if got != text || strings.Contains(out.String(), `\x`) {
			t.Errorf("%d bytes: wrote %d bytes back (escaped bytes: %v)", n, len(got), strings.Contains(out.String(), `\x`))
		}
	}
}

// A name the recording lists to mask that this environment does not set
// is said to be listed, not to have been masked: the header lists every
// secret-looking name of the recording's environment, whether or not a
// frame held its value.
func TestReplaySaysARecordingListsANameToMaskThatThisEnvironmentDoesNotSet(t *testing.T) {
	b := mustReadFile(t, "../../testdata/sessions/recorded/session.jsonl")
	head, rest, _ := bytes.Cut(b, []byte("\n"))
	head = append(bytes.TrimSuffix(head, []byte("}")), []byte(`,"redact":["RPCTAP_UNSET_TOKEN"]}`)...)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, append(append(head, '\n'), rest...), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RPCTAP_UNSET_TOKEN", "")
	os.Unsetenv("RPCTAP_UNSET_TOKEN")
	var stderr bytes.Buffer
	if _, err := (replayOptions{}).redaction(path, &stderr); err != nil {
		t.Fatal(err)
	}
	if got := stderr.String(); !strings.Contains(got, "the recording names RPCTAP_UNSET_TOKEN among the secrets to mask, which this environment does not set") {
		t.Errorf("the warning of a listed name this environment does not set:\n%s", got)
	}
}
