package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/filter"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/sessions/export"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tap"
)

// evilSession writes a session file whose peers sent what a terminal must
// not see: raw bidi overrides and C1 controls in JSON strings, in a method
// and an id, a line with a raw 0x9b byte (not UTF-8), and the six
// characters \x1b[2J typed by a peer next to a real ESC.
func evilSession(t *testing.T) string {
	t.Helper()
	return evilSessionAt(t, filepath.Join(t.TempDir(), "evil.jsonl"), "x\u009b31m")
}

// evilSessionAt writes evilSession's records to path, the server's answer
// to the request holding answer (a string of JSON) as its result's "t".
func evilSessionAt(t *testing.T, path, answer string) string {
	t.Helper()
	var b bytes.Buffer
	w, err := sessions.NewWriter(&b, sessions.Header{ID: "e", Started: time.Unix(0, 0), Argv: []string{"srv\u202e", "--x=\u009b2J"}, Name: "srv\u202e"})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range []struct {
		dir   classify.Direction
		frame string
	}{
		{classify.H2S, `{"jsonrpc":"2.0","id":"a` + "\u202e" + `b","method":"m` + "\u2066\u009b" + `x","params":{"t":"` + "\u200b\ufeff\u061c" + `"}}`},
		{classify.S2H, `{"jsonrpc":"2.0","id":"a` + "\u202e" + `b","result":{"t":"` + answer + `"}}`},
		{classify.S2H, "not json \x9b[31m \u202e" + `typed \x1b[2J`},
		{classify.S2H, `{"jsonrpc":"2.0","method":"n","params":{"t":"` + "\x9b" + `[31m"}}`},
		{classify.Err, `peer typed \x1b[2J, real: ` + "\x1b[2J"},
	} {
		if err := w.WriteFrame(sessions.FrameRecord{T: int64(i), Dir: f.dir, Frame: []byte(f.frame)}); err != nil {
			t.Fatal(err)
		}
	}
	code := 0
	w.WriteEvent(sessions.EventRecord{T: 9, Kind: sessions.EventExit, Code: &code})
	os.WriteFile(path, b.Bytes(), 0o600)
	return path
}

// unsafeOnScreen reports the first character of out a terminal must not
// be handed raw (or a byte that is not UTF-8).
func unsafeOnScreen(out []byte) (string, bool) {
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRune(out[i:])
		if r == utf8.RuneError && size == 1 {
			return "the byte " + string(rune(out[i])), true
		}
		if r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x2028 || r == 0x2029 ||
			r >= 0x200b && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2060 && r <= 0x2069 || r == 0xfeff || r == 0x061c) {
			return string(r), true
		}
		i += size
	}
	return "", false
}

func tailOf(t *testing.T, path string, asJSON bool) []byte {
	t.Helper()
	src, err := source.OpenFile(path, classify.DefaultTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	f, _ := filter.Parse("")
	var out bytes.Buffer
	if err := runTail(&out, src, f, asJSON, src.Yield); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// Every JSON rpctap prints (tail --json, check --json, ls --json,
// inject --capture, classify) is valid UTF-8 and valid JSON, with control,
// bidi and format characters as \u escapes, and still says what the peer
// sent.
func TestJSONOutputsAreValidUTF8WithUnsafeCharactersEscaped(t *testing.T) {
	path := evilSession(t)
	tail := tailOf(t, path, true)
	var check bytes.Buffer
	runCheck(nil, &check, path, checkOptions{failOn: 0, format: "json"})
	var sarif bytes.Buffer
	runCheck(nil, &sarif, path, checkOptions{failOn: 0, format: "sarif"})
	var ls bytes.Buffer
	taps := []tap.Info{{Name: "srv\u202e", Argv: []string{"srv", "--x=\u009b2J\u2028"}, Session: "/tmp/s\x9b.jsonl"}}
	if err := writeLsJSON(&ls, taps, []sessions.SessionFile{{Path: "/tmp/a\u202eb\x9b.jsonl"}}); err != nil {
		t.Fatal(err)
	}
	var reply bytes.Buffer
	sessions.PrintRawJSON(&reply, []byte(`{"jsonrpc":"2.0","id":1,"result":{"t":"`+"\u202e\u009b\x9b"+`"}}`))
	var cl bytes.Buffer
	in := `{"jsonrpc":"2.0","id":"a` + "\u202e" + `","method":"m` + "\u009b\x9b" + `"}` + "\n"
	if err := runClassify(strings.NewReader(in), &cl, classifyOptions{profile: classify.Auto, dir: classify.H2S, framing: classify.FramingNDJSON}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string][]byte{"tail --json": tail, "check --json": check.Bytes(), "check --format sarif": sarif.Bytes(), "ls --json": ls.Bytes(), "inject --capture": reply.Bytes(), "classify": cl.Bytes()} {
		if c, bad := unsafeOnScreen(out); bad {
			t.Errorf("%s prints %q raw:\n%s", name, c, out)
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Errorf("%s prints what is not JSON: %v\n%s", name, err, out)
				break
			}
		}
	}
	// The values are still what the peer sent.
	lines := bytes.Split(bytes.TrimSpace(tail), []byte("\n"))
	if len(lines) != 5 {
		t.Fatalf("tail --json printed %d lines, want 5:\n%s", len(lines), tail)
	}
	var first struct {
		ID     string          `json:"id"`
		Method string          `json:"method"`
		Frame  json.RawMessage `json:"frame"`
	}
	json.Unmarshal(lines[0], &first)
	if first.ID != "a\u202eb" || first.Method != "m\u2066\u009bx" || !bytes.Contains(lines[0], []byte(`\u202e`)) {
		t.Errorf("tail --json changed the values: %+v\n%s", first, lines[0])
	}
	var third struct {
		Text string `json:"frame_text"`
		B64  []byte `json:"frame_b64"`
	}
	json.Unmarshal(lines[2], &third)
	if string(third.B64) != "not json \x9b[31m \u202etyped \\x1b[2J" || third.Text != "not json \ufffd[31m \u202etyped \\x1b[2J" {
		t.Errorf("a frame that is not UTF-8: %+v", third)
	}
}

// The text views escape peer text with classify.Escape, where a peer's
// backslash never reads as rpctap's own escape: the six characters \x1b[2J
// a peer typed show as \\x1b[2J, a real ESC as \x1b[2J.
func TestTextOutputsShowAPeersBackslashApartFromRealControls(t *testing.T) {
	path := evilSession(t)
	tail := tailOf(t, path, false)
	var check bytes.Buffer
	runCheck(nil, &check, path, checkOptions{failOn: 0})
	var junit bytes.Buffer
	runCheck(nil, &junit, path, checkOptions{failOn: 0, format: "junit"})
	var ls bytes.Buffer
	writeLsText(&ls, []tap.Info{{Name: `srv\x1b`, Argv: []string{"srv", `--x=\u202e`, "\u202e"}}}, nil)
	for name, out := range map[string][]byte{"tail": tail, "check": check.Bytes(), "check --format junit": junit.Bytes(), "ls": ls.Bytes()} {
		if c, bad := unsafeOnScreen(out); bad {
			t.Errorf("%s prints %q raw:\n%s", name, c, out)
		}
	}
	if !bytes.Contains(tail, []byte(`peer typed \\x1b[2J, real: \x1b[2J`)) {
		t.Errorf("tail shows the typed and the real escape alike:\n%s", tail)
	}
	if !bytes.Contains(ls.Bytes(), []byte(`srv\\x1b`)) || !bytes.Contains(ls.Bytes(), []byte(`--x=\\u202e \u202e`)) {
		t.Errorf("ls shows the typed and the real escape alike:\n%s", ls.Bytes())
	}
	// check and the Markdown export show the line that is not JSON as
	// escaped text: the peer's \x1b[2J and rpctap's \x9b apart.
	var md bytes.Buffer
	if _, err := export.Write(&md, path, export.Options{Format: export.FormatMarkdown}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"check": check.String(), "export --format markdown": md.String()} {
		if !strings.Contains(out, `not json \x9b[31m \u202etyped \\x1b[2J`) {
			t.Errorf("%s shows the typed and the real escape alike:\n%s", name, out)
		}
	}
}

// End to end: every JSON the built binary prints, the newer commands' too
// (sessions ls, diff, replay --as-host, catalog, export json/har/otlp, check
// --format sarif), is valid UTF-8 and valid JSON with control, bidi and
// format characters as \u escapes, and still carries the peer's text
// (escaped, not dropped).
func TestEveryJSONTheBinaryPrintsIsSafeForATerminal(t *testing.T) {
	bin := rpctapBinary(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	stateDir := filepath.Join(state, "rpctap", "sessions")
	os.MkdirAll(stateDir, 0o700)
	a := evilSessionAt(t, filepath.Join(stateDir, "a.jsonl"), "x\u009b31m")
	b := evilSessionAt(t, filepath.Join(dir, "b.jsonl"), "y\u202d\u0085\u2028")
	env := append(os.Environ(), "XDG_STATE_HOME="+state)
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env, cmd.Dir = env, dir
		var errb bytes.Buffer
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if e, ok := err.(*exec.ExitError); err != nil && (!ok || e.ExitCode() != 1) {
			t.Fatalf("rpctap %s: %v\n%s", strings.Join(args, " "), err, errb.Bytes())
		}
		return out
	}
	outputs := map[string][]byte{
		"tail --json":          run("tail", "--json", a),
		"check --json":         run("check", "--json", a),
		"check --format sarif": run("check", "--format", "sarif", a),
		"sessions ls --json":   run("sessions", "ls", "--json"),
		"diff --json":          run("diff", "--json", a, b),
		"replay --as-host --json": run("replay", "--as-host", a, "--json", "--no-record", "--",
			bin, "replay", "--as-server", b, "--no-delay", "--no-record", "--quiet"),
		"catalog --json": run("catalog", "--json"),
	}
	for _, f := range []string{"json", "har", "otlp"} {
		outputs["export --format "+f] = run("export", a, "--format", f)
	}
	for name, out := range outputs {
		if c, bad := unsafeOnScreen(out); bad {
			t.Errorf("%s prints %q raw:\n%s", name, c, out)
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		n := 0
		for ; dec.More(); n++ {
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Errorf("%s prints what is not JSON: %v\n%s", name, err, out)
				break
			}
		}
		if n == 0 {
			t.Errorf("%s printed no JSON", name)
		}
		// The peer's bidi override, or the catalog's own, is there escaped.
		if !bytes.Contains(out, []byte(`\u202e`)) && !bytes.Contains(out, []byte(`\u202d`)) {
			t.Errorf("%s lost the peer's text:\n%s", name, out)
		}
	}
}

// With --capture --json, inject prints the captured answer through the same
// escaping as every JSON output.
func TestInjectCaptureJSONEscapesTheAnswer(t *testing.T) {
	var out bytes.Buffer
	rep := tap.InjectReply{ID: `"a` + "\u202e" + `"`, Reply: []byte(`{"jsonrpc":"2.0","id":"a` + "\u202e" + `","error":{"code":1,"message":"` + "\u009b\u2028" + `"}}`)}
	if _, err := printCaptured(&out, rep, injectOptions{json: true}, ""); err != nil {
		t.Fatal(err)
	}
	if c, bad := unsafeOnScreen(out.Bytes()); bad {
		t.Errorf("inject --capture --json prints %q raw:\n%s", c, out.Bytes())
	}
	var doc struct {
		ID    string          `json:"id"`
		Reply json.RawMessage `json:"reply"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.ID != "a\u202e" || !bytes.Contains(doc.Reply, []byte(`\u009b\u2028`)) {
		t.Errorf("inject --capture --json: %v %+v\n%s", err, doc, out.Bytes())
	}
}
