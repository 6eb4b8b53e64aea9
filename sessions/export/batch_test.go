package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// batchSession holds a batch of requests a and b (and notification n)
// answered by one batch: a's member is an error, b's a result.
const batchSession = "../../testdata/export/batch.jsonl"

// A batch answer's error counts against the member it answers, not
// against every member of the batch, in each export that sums methods up
// or lists pairs; the batch's notification counts as one.
func TestBatchAnswerErrorsCountAgainstTheirMemberOnly(t *testing.T) {
	t.Run("json", func(t *testing.T) {
		got, _ := exportString(t, batchSession, Options{Format: FormatJSON})
		var doc struct {
			Methods []struct {
				Method                                    string
				Requests, Notifications, Answered, Errors int
			}
			Pairs []struct {
				Request struct{ Method string }
				Status  string
			}
		}
		if err := json.Unmarshal([]byte(got), &doc); err != nil {
			t.Fatal(err)
		}
		want := map[string][4]int{"a": {1, 0, 1, 1}, "b": {1, 0, 1, 0}, "n": {0, 1, 0, 0}}
		if len(doc.Methods) != len(want) {
			t.Errorf("methods %+v, want a, b and n", doc.Methods)
		}
		for _, m := range doc.Methods {
			if w, ok := want[m.Method]; !ok || w != [4]int{m.Requests, m.Notifications, m.Answered, m.Errors} {
				t.Errorf("method %s: %+v, want requests, notifications, answered, errors %v", m.Method, m, w)
			}
		}
		for _, p := range doc.Pairs {
			if want := map[string]string{"a": "error", "b": "ok"}[p.Request.Method]; p.Status != want {
				t.Errorf("pair %s: status %s, want %s", p.Request.Method, p.Status, want)
			}
		}
	})
	t.Run("markdown", func(t *testing.T) {
		got, _ := exportString(t, batchSession, Options{Format: FormatMarkdown})
		for _, row := range []string{"| `a` | 1 | 0 | 1 | 1 |", "| `b` | 1 | 0 | 1 | 0 |", "| `n` | 0 | 1 | 0 | 0 |"} {
			if !strings.Contains(got, row) {
				t.Errorf("no row %q in the methods:\n%s", row, got)
			}
		}
	})
	t.Run("html", func(t *testing.T) {
		got, _ := exportString(t, batchSession, Options{Format: FormatHTML})
		n := `<td class="n">`
		for _, row := range []string{
			"<tr><td><code>a</code></td>" + n + "1</td>" + n + "0</td>" + n + "1</td>" + n + "1</td>",
			"<tr><td><code>b</code></td>" + n + "1</td>" + n + "0</td>" + n + "1</td>" + n + "0</td>",
			"<tr><td><code>n</code></td>" + n + "0</td>" + n + "1</td>",
			"<td><code>a</code></td><td><code>1</code></td><td>error</td>",
			"<td><code>b</code></td><td><code>2</code></td><td>ok</td>",
		} {
			if !strings.Contains(got, row) {
				t.Errorf("no %q in the page", row)
			}
		}
	})
	t.Run("har", func(t *testing.T) {
		got, _ := exportString(t, batchSession, Options{Format: FormatHAR})
		var doc struct {
			Log struct {
				Entries []struct {
					Request  struct{ URL string }
					Response struct{ Status int }
				}
			}
		}
		if err := json.Unmarshal([]byte(got), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Log.Entries) != 2 {
			t.Fatalf("%d entries, want 2", len(doc.Log.Entries))
		}
		for _, e := range doc.Log.Entries {
			want := map[string]int{"jsonrpc://server/a": 500, "jsonrpc://server/b": 200}[e.Request.URL]
			if e.Response.Status != want {
				t.Errorf("%s: status %d, want %d", e.Request.URL, e.Response.Status, want)
			}
		}
	})
	t.Run("otlp", func(t *testing.T) {
		got, _ := exportString(t, batchSession, Options{Format: FormatOTLP})
		var doc struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []struct {
						Name   string
						Status *struct{ Code int }
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(got), &doc); err != nil {
			t.Fatal(err)
		}
		spans := doc.ResourceSpans[0].ScopeSpans[0].Spans
		if len(spans) != 2 {
			t.Fatalf("%d spans, want 2", len(spans))
		}
		for _, sp := range spans {
			if isErr := sp.Status != nil && sp.Status.Code == 2; isErr != (sp.Name == "a") {
				t.Errorf("span %s: status %+v, want an error on a alone", sp.Name, sp.Status)
			}
		}
	})
}

// A batch answered by one batch frame reads that frame once for all its
// members, not once a member (a batch of n members answered in a frame
// of n answers would otherwise hold n² answers in memory), and still
// pairs every member with its own answer.
func TestABatchAnswerIsReadOnceForAllItsMembers(t *testing.T) {
	const n = 300
	var req, resp strings.Builder
	for i := range n {
		sep := map[bool]string{true: "", false: ","}[i == 0]
		fmt.Fprintf(&req, `%s{"jsonrpc":"2.0","id":%d,"method":"m%d"}`, sep, i, i%3)
		fmt.Fprintf(&resp, `%s{"jsonrpc":"2.0","id":%d,"result":%d}`, sep, n-1-i, n-1-i)
	}
	path := filepath.Join(t.TempDir(), "batch.jsonl")
	session := `{"rpctap":"session","version":1,"id":"b","started":"2026-11-29T18:00:00.000000Z","framing":"ndjson","profile":"jsonrpc"}` + "\n"
	for _, r := range []struct {
		t          int
		dir, frame string
	}{{10, "h2s", "[" + req.String() + "]"}, {50, "s2h", "[" + resp.String() + "]"}} {
		rec, _ := json.Marshal(map[string]any{"t": r.t, "dir": r.dir, "frame": r.frame})
		session += string(rec) + "\n"
	}
	if err := os.WriteFile(path, []byte(session), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := openExport(path, Options{Format: FormatJSON})
	if err != nil {
		t.Fatal(err)
	}
	defer s.f.Close()
	if got := len(s.pairs.List()); got != n {
		t.Fatalf("%d pairs, want %d", got, n)
	}
	pairs := 0
	err = s.walkEntries(false, func(it *walkItem, answers []walkItem) error {
		if it.e.Dir == classify.H2S && len(answers) != 1 { // (the answer batch is walked too, with none)
			t.Errorf("the batch came with %d answers read, want its one answer frame", len(answers))
		}
		return nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.eachPair(func(p *exportPair) error {
		pairs++
		if p.respMsg == nil || string(p.respMsg.ID().Raw) != string(p.reqMsg.ID().Raw) || string(p.respMsg.Result()) != string(p.reqMsg.ID().Raw) {
			t.Errorf("member %d paired with %v", p.member, p.respMsg)
		}
		return nil
	})
	if err != nil || pairs != n {
		t.Errorf("%d pairs written (%v), want %d", pairs, err, n)
	}
}

// An export is readable by no one who cannot read its session: it takes
// the session file's permissions (a recorded session is 0600), whatever
// the output was before.
func TestExportFileKeepsTheSessionFilesPermissions(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "s.jsonl")
	data, _ := os.ReadFile(goldenSession)
	if err := os.WriteFile(in, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.md")
	os.WriteFile(out, []byte("old"), 0o644)
	for _, mode := range []os.FileMode{0o600, 0o640} {
		if err := os.Chmod(in, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := File(in, out, nil, Options{Format: FormatMarkdown}); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(out); err != nil || st.Mode().Perm() != mode {
			t.Errorf("session %v: export %v (%v), want %v", mode, st.Mode().Perm(), err, mode)
		}
	}
}

// A read-ahead batch that held a huge frame does not keep its memory for
// the rest of the export: the walk's batches stay bounded however large
// one frame was.
func TestAWalkBatchGivesBackAHugeFramesMemory(t *testing.T) {
	var b walkBatch
	b.add(walkItem{ev: sessions.Event{Frame: make([]byte, 64<<20)}})
	b.reset()
	if cap(b.data) > maxKeptBatch || len(b.items) != 0 {
		t.Errorf("after a 64 MiB frame the batch keeps %d bytes and %d items", cap(b.data), len(b.items))
	}
	b.add(walkItem{ev: sessions.Event{Frame: make([]byte, 1<<20)}})
	c := cap(b.data)
	b.reset()
	if cap(b.data) != c {
		t.Errorf("a batch of ordinary size is not reused: %d bytes kept of %d", cap(b.data), c)
	}
}

// An output that cannot be written is refused before anything is read or
// written, with an error about the output (not one that reads as the
// session file missing), saying what to do.
func TestExportFileRefusesAnOutputItCannotWriteUpFront(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "s.jsonl")
	data, _ := os.ReadFile(goldenSession)
	os.WriteFile(in, data, 0o600)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	for out, want := range map[string]string{
		filepath.Join(dir, "missing", "x.json"): "mkdir -p " + filepath.Join(dir, "missing"),
		sub:                                     "-o " + filepath.Join(sub, "session.json"),
	} {
		_, err := File(in, out, nil, Options{Format: FormatJSON})
		if err == nil || errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), want) {
			t.Errorf("-o %s: %v, want an error about the output saying %q", out, err, want)
		}
	}
	if entries, _ := os.ReadDir(sub); len(entries) != 0 {
		t.Errorf("the export left %d files in the directory it was given", len(entries))
	}
}

// A secret that spans two arguments of the session's command (a value
// with a space, passed as two) is masked in the command line the text
// formats show, not only argument by argument.
func TestTheCommandLineIsMaskedWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	session := `{"rpctap":"session","version":1,"id":"c","started":"2026-11-29T18:00:00.000000Z","argv":["srv","--pass","open","sesame-42"],"framing":"ndjson","profile":"jsonrpc"}` + "\n" +
		`{"t":1,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"}` + "\n"
	os.WriteFile(path, []byte(session), 0o600)
	red, err := sessions.NewRedactor(nil, []string{"PASS=open sesame-42"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{FormatMarkdown, FormatHTML} {
		got, _ := exportString(t, path, Options{Format: f, Redactor: red})
		if strings.Contains(got, "open sesame-42") || !strings.Contains(got, "--pass ***PASS***") {
			t.Errorf("%s: the command line is not masked whole", f)
		}
	}
}

// Masking never changes a frame's JSON shape: a secret that is a bare
// number in a frame is left as it is (a number is no string to mask in),
// the same secret in a string is masked, and the export pretty-prints
// both frames as the JSON they still are.
func TestASecretWrittenAsANumberLeavesTheFrameJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	session := `{"rpctap":"session","version":1,"id":"c","started":"2026-11-29T18:00:00.000000Z","framing":"ndjson","profile":"jsonrpc"}` + "\n" +
		`{"t":1,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pin\",\"params\":{\"pin\":73519246,\"note\":\"pin 73519246\"}}"}` + "\n" +
		`{"t":2,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}"}` + "\n"
	os.WriteFile(path, []byte(session), 0o600)
	red, err := sessions.NewRedactor(nil, []string{"PI=73519246"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := exportString(t, path, Options{Format: FormatMarkdown, Redactor: red})
	if !strings.Contains(got, "```json\n{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"method\": \"pin\",\n  \"params\": {\n    \"pin\": 73519246,\n    \"note\": \"pin ***PI***\"\n  }\n}\n```") {
		t.Errorf("the frame is not shown as JSON, masked in its string:\n%s", got)
	}
	if !strings.Contains(got, "```json\n{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 2,") {
		t.Errorf("the frame the mask left is not pretty-printed:\n%s", got)
	}
}
