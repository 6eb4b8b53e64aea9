package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func exportCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(append([]string{"export"}, args...))
	err = cmd.Execute()
	return out.String(), errb.String(), err
}

// The export command refuses what it cannot do with a sentence that says
// what to type instead, and says on stderr when it folded.
func TestExportSaysWhatToTypeAndWhenItFolded(t *testing.T) {
	session := "../../testdata/export/session.jsonl"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{session, "--format", "pdf"}, "use markdown, mermaid, html, json, har or otlp"},
		{[]string{session, "--format", "har", "--max-frames", "3"}, "--max-frames applies to markdown, mermaid and html"},
		{[]string{"-", "--format", "json"}, "needs a file, not stdin"},
		{[]string{session, "--format", "json", "-o", session}, "over itself: give -o another file"},
		{[]string{"no-such.jsonl"}, "there is no such file"},
	} {
		_, _, err := exportCmd(t, c.args...)
		var ee exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(ee.msg, c.want) {
			t.Errorf("export %v: %v, want exit 2 saying %q", c.args, err, c.want)
		}
	}
	out := filepath.Join(t.TempDir(), "s.mmd")
	_, stderr, err := exportCmd(t, session, "--format", "mermaid", "--max-frames", "4", "-o", out)
	if err != nil || !strings.Contains(stderr, "shows 4 of 13 records") {
		t.Errorf("folded export: %v, stderr %q", err, stderr)
	}
	if b, _ := os.ReadFile(out); !strings.HasPrefix(string(b), "sequenceDiagram\n") {
		t.Errorf("the diagram was not written: %.40q", b)
	}
}
