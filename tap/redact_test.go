package tap

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

func TestRedactorMasksSecretLookingEnvironmentValuesAndNamedOnes(t *testing.T) {
	env := []string{"API_TOKEN=tok-123456", "HOME=/home/u", "DB_PASSWORD=hunter22", "PORT=8080", "SHORT_KEY=abc"}
	r, err := newRedactor(env, []string{"HOME", "CUSTOM=literal-value"})
	if err != nil {
		t.Fatal(err)
	}
	in := []byte(`{"a":"tok-123456","b":"/home/u/x","c":"hunter22","d":"8080","e":"abc","f":"literal-value"}`)
	out, ok := r.mask(in)
	if !ok {
		t.Fatal("nothing was masked")
	}
	for _, gone := range []string{"tok-123456", "/home/u", "hunter22", "literal-value"} {
		if bytes.Contains(out, []byte(gone)) {
			t.Errorf("%q is still in %s", gone, out)
		}
	}
	for _, kept := range []string{"8080", `"abc"`, "***API_TOKEN***", "***DB_PASSWORD***", "***HOME***", "***CUSTOM***"} {
		if !bytes.Contains(out, []byte(kept)) {
			t.Errorf("%q should be in %s", kept, out)
		}
	}
	if !classify.Valid(out) {
		t.Errorf("masking broke the JSON: %s", out)
	}
	if _, err := newRedactor(nil, []string{"NOPE_NOT_SET_ANYWHERE"}); err == nil || !strings.Contains(err.Error(), "no environment variable") {
		t.Errorf("naming a variable that does not exist: %v", err)
	}
}

func TestSecretsAreMaskedInTheSessionFileButNeverOnTheWire(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	env := append(os.Environ(), "SERVICE_AUTH_TOKEN=s3cr3t-value-42")
	tp, err := New(Options{Argv: []string{"cat"}, Framing: classify.FramingNDJSON, Record: true, Path: path, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	frame := `{"jsonrpc":"2.0","id":1,"method":"login","params":{"token":"s3cr3t-value-42"}}` + "\n"
	out := newSink(true)
	if _, err := tp.Run(context.Background(), strings.NewReader(frame), out, newSink(false)); err != nil {
		t.Fatal(err)
	}
	if got := out.buf.String(); got != frame {
		t.Errorf("the wire changed: %q", got)
	}
	data, _ := os.ReadFile(path)
	if bytes.Contains(data, []byte("s3cr3t-value-42")) {
		t.Errorf("the secret is in the session file:\n%s", data)
	}
	r := sessions.NewReader(bytes.NewReader(data))
	var masked int
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if ev.IsFrame() && ev.Dir != classify.Err {
			if !ev.Redacted || !bytes.Contains(ev.Frame, []byte("***SERVICE_AUTH_TOKEN***")) {
				t.Errorf("line %d is not marked redacted: %s", ev.Line, ev.Frame)
			}
			masked++
		}
	}
	if masked != 2 {
		t.Errorf("%d redacted frames, want the request both ways", masked)
	}
}

func TestNoRedactRecordsTheExactBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	env := append(os.Environ(), "SERVICE_AUTH_TOKEN=s3cr3t-value-42")
	tp, _ := New(Options{Argv: []string{"cat"}, Framing: classify.FramingNDJSON, Record: true, Path: path, Env: env, NoRedact: true})
	tp.Run(context.Background(), strings.NewReader(`{"token":"s3cr3t-value-42"}`+"\n"), newSink(true), newSink(false))
	data, _ := os.ReadFile(path)
	if !bytes.Contains(data, []byte("s3cr3t-value-42")) || bytes.Contains(data, []byte(`"redacted":true`)) {
		t.Errorf("with NoRedact the file must hold the exact bytes:\n%s", data)
	}
}
