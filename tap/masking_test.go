package tap

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// What a command shows or keeps of a tap's session beside the file (the
// server's stderr that watch says when the server fails, replay's report
// and stderr) masks with the tap's own redactor: the secrets of the
// tap's environment and of its --redact flags, as the session file has
// them masked, and nothing with NoRedact.
func TestATapsMaskingWriterMasksAsItsSessionFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	env := []string{"PATH=" + os.Getenv("PATH"), "SERVICE_AUTH_TOKEN=s3cr3t-value-42"}
	line := "token s3cr3t-value-42, flag-given-value-7\n"
	tp, err := New(Options{Argv: []string{"sh", "-c", "printf '" + line + "' >&2"}, Framing: classify.FramingNDJSON, Record: true, Path: path,
		Env: env, Redact: []string{"OTHER=flag-given-value-7"}})
	if err != nil {
		t.Fatal(err)
	}
	var shown bytes.Buffer
	w := tp.MaskingWriter(&shown)
	if _, err := tp.Run(context.Background(), strings.NewReader(""), newSink(false), w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	const want = "token ***SERVICE_AUTH_TOKEN***, ***OTHER***\n"
	if shown.String() != want {
		t.Errorf("the tap's masking writer passed on %q; want %q", shown.String(), want)
	}
	data, _ := os.ReadFile(path)
	r := sessions.NewReader(bytes.NewReader(data))
	var recorded string
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if ev.IsFrame() && ev.Dir == classify.Err {
			recorded += string(ev.Frame) + "\n" // a record per line, without its newline
		}
	}
	if recorded != want {
		t.Errorf("the session file has the stderr line as %q, the masking writer as %q", recorded, shown.String())
	}
	h, _ := sessions.NewReader(bytes.NewReader(data)).Header()
	if names := tp.Redactor().Names(); !slices.Equal(names, []string{"OTHER", "SERVICE_AUTH_TOKEN"}) || !slices.Equal(h.Redact, names) {
		t.Errorf("the tap's redactor masks %v, the header names %v", names, h.Redact)
	}

	tp, err = New(Options{Argv: []string{"true"}, Env: env, NoRedact: true})
	if err != nil {
		t.Fatal(err)
	}
	shown.Reset()
	w = tp.MaskingWriter(&shown)
	w.Write([]byte(line))
	w.Close()
	if shown.String() != line || tp.Redactor() != nil {
		t.Errorf("with NoRedact the masking writer passed on %q (redactor %v); want it unchanged", shown.String(), tp.Redactor())
	}
}
