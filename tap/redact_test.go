package tap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

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

// A secret written as a JSON number is left in clear (masking keeps a
// frame's shape), and the tap says so, once: on stderr, and in a note of
// the session file.
func TestASecretLeftInClearAsANumberIsSaidOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	env := append(os.Environ(), "DB_PIN_KEY=123456789012")
	var warns []string
	tp, err := New(Options{Argv: []string{"cat"}, Framing: classify.FramingNDJSON, Record: true, Path: path, Env: env,
		Warn: func(msg string) { warns = append(warns, msg) }})
	if err != nil {
		t.Fatal(err)
	}
	frames := `{"jsonrpc":"2.0","id":1,"method":"login","params":{"pin":123456789012}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"login","params":{"pin":123456789012,"as":"123456789012"}}` + "\n"
	if _, err := tp.Run(context.Background(), strings.NewReader(frames), newSink(true), newSink(false)); err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, w := range warns {
		if strings.Contains(w, "DB_PIN_KEY") {
			said = append(said, w)
		}
	}
	if len(said) != 1 || !strings.Contains(said[0], "in clear") {
		t.Errorf("the tap said %q; want one warning that the value of DB_PIN_KEY is recorded in clear", said)
	}
	data, _ := os.ReadFile(path)
	if !bytes.Contains(data, []byte(`***DB_PIN_KEY***`)) {
		t.Errorf("the secret in a string is not masked:\n%s", data)
	}
	r := sessions.NewReader(bytes.NewReader(data))
	notes := 0
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if ev.Kind == sessions.EventNote && strings.Contains(ev.Text, "DB_PIN_KEY") && strings.Contains(ev.Text, "in clear") {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("%d notes say the secret is in clear, want 1:\n%s", notes, data)
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

// A spooled frame's record is masked and marked redacted (the path frames
// over the parse limit take).
func TestSpooledFrameIsRecordedMasked(t *testing.T) {
	r, _ := sessions.NewRedactor([]string{"API_TOKEN=supersecret123"}, nil)
	header := []byte("Content-Length: 999\r\nX-Token: supersecret123\r\n\r\n")
	body := bytes.Repeat([]byte(`{"pad":"0123456789abcdef","t":"\u0073upersecret123"},`), 5000)
	sp, err := newSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(header)+len(body); i += 4093 { // pieces cut anywhere
		all := append(append([]byte(nil), header...), body...)
		sp.write(all[i:min(i+4093, len(all))])
	}
	var file bytes.Buffer
	w, err := sessions.NewWriter(&file, sessions.Header{ID: "x", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.record(w, sessions.FrameRecord{Dir: classify.S2H}, int64(len(header)), int64(len(body)), r); err != nil {
		t.Fatal(err)
	}
	_, evs, skipped := readRecords(t, &file)
	if skipped != 0 || len(evs) != 1 {
		t.Fatalf("%d records, %d skipped", len(evs), skipped)
	}
	want, _ := r.Mask(body)
	if !evs[0].Redacted || !bytes.Equal(evs[0].Frame, want) {
		t.Errorf("redacted %v; frame holds the secret: %v", evs[0].Redacted, bytes.Contains(evs[0].Frame, []byte("ecret123")))
	}
}

// Every place the session file and the live views hold a frame's bytes or
// what is derived from them is masked: the frame, the derived id and
// method, an LSP header block, the header's argv and name, what ls is told;
// a secret spelled with JSON escapes too.
func TestSecretsAreMaskedInDerivedFieldsHeadersArgvAndEscapedForms(t *testing.T) {
	env := append(os.Environ(), "API_TOKEN=supersecret123")
	frames := []string{
		`{"jsonrpc":"2.0","id":"supersecret123","method":"m/supersecret123","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"x","params":{"t":"\u0073uper\u0073ecret123"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"y","params":{"t":"super\u0073ecret\u00312\u0033"}}`,
	}
	var in bytes.Buffer
	for i, f := range frames {
		fmt.Fprintf(&in, "Content-Length: %d\r\nX-Token: supersecret123-%d\r\n\r\n%s", len(f), i, f)
	}
	s := startSession(t, Options{Argv: []string{"/bin/sh", "-c", "cat; echo supersecret123 >&2", "--token=supersecret123"}, Framing: classify.FramingLSP,
		Record: true, Listen: true, Env: env})
	s.write(t, in.Bytes())
	s.in.Close()
	s.wait(t, generous)
	if got := s.out.bytes(); !bytes.Equal(got, in.Bytes()) {
		t.Fatalf("the wire changed: %s", firstDiff(got, in.Bytes()))
	}
	data, err := os.ReadFile(s.tap.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"upersecret123", `\u0073ecret123`, `ecret\u00312`, "supersecret"} {
		if bytes.Contains(data, []byte(leak)) {
			t.Errorf("the session file holds %s:\n%s", leak, data)
		}
	}
	h, evs, _ := readSession(t, s.tap.Path())
	if strings.Join(h.Argv, " ") != "/bin/sh -c cat; echo ***API_TOKEN*** >&2 --token=***API_TOKEN***" {
		t.Errorf("header argv %q", h.Argv)
	}
	frameRecords := 0
	for _, ev := range evs {
		if !ev.IsFrame() {
			continue
		}
		frameRecords++
		if !ev.Redacted {
			t.Errorf("line %d is not marked redacted: %s", ev.Line, ev.Frame)
		}
	}
	if frameRecords != 7 { // three each way, and the stderr line
		t.Errorf("%d frame records, want 7", frameRecords)
	}
	if !bytes.Contains(data, []byte(`"id":"***API_TOKEN***","method":"m/***API_TOKEN***"`)) {
		t.Errorf("the derived fields are not those of the masked frame:\n%s", data)
	}
	if info := s.tap.info(); strings.Contains(strings.Join(info.Argv, " "), "supersecret") {
		t.Errorf("ls is told argv %q", info.Argv)
	}
}

// A frame over the parse limit is streamed into the session file masked,
// however its pieces fall.
func TestFramesOverTheParseLimitAreRecordedMasked(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("moves tens of MiB")
	}
	env := append(os.Environ(), "API_TOKEN=supersecret123")
	var body bytes.Buffer
	body.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`)
	for i := 0; body.Len() < parseLimit+(1<<20); i++ {
		body.WriteString(strings.Repeat("x", 1000+i%37))
		body.WriteString([]string{"supersecret123", `\u0073upersecret123`, `supersecre\u0074123`}[i%3])
	}
	body.WriteString(`"}}`)
	s := startSession(t, Options{Argv: []string{"/bin/cat"}, Framing: classify.FramingNDJSON, Record: true, Env: env})
	go func() {
		s.in.Write(append(body.Bytes(), '\n'))
		s.in.Close()
	}()
	s.wait(t, generous)
	_, evs, skipped := readSession(t, s.tap.Path())
	if skipped != 0 {
		t.Fatalf("%d lines skipped", skipped)
	}
	n := 0
	for _, ev := range evs {
		if !ev.IsFrame() {
			continue
		}
		n++
		if !ev.Redacted || bytes.Contains(ev.Frame, []byte("ecret123")) || bytes.Contains(ev.Frame, []byte(`ecre\u0074`)) {
			t.Errorf("%s record of %d bytes: redacted %v, holds the secret", ev.Dir, len(ev.Frame), ev.Redacted)
		}
		if want := bytes.Count(body.Bytes(), []byte("123")); bytes.Count(ev.Frame, []byte("***API_TOKEN***")) != want {
			t.Errorf("%d masks, want %d", bytes.Count(ev.Frame, []byte("***API_TOKEN***")), want)
		}
	}
	if n != 2 {
		t.Errorf("%d frame records, want the frame both ways", n)
	}
}

// The answer to a captured injection, which the tap hands to rpctap inject
// to print, is masked like the record of it.
func TestCapturedAnswerIsMasked(t *testing.T) {
	env := append(os.Environ(), "API_TOKEN=supersecret123")
	answer := `s/.*"id":"\([^"]*\)".*/{"jsonrpc":"2.0","id":"\1","result":{"t":"\\u0073upersecret123"}}/`
	s := startSession(t, Options{Argv: []string{"sed", "-u", answer}, Framing: classify.FramingNDJSON, Record: true, Listen: true, Env: env})
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"warm","method":"ping"}`+"\n"))
	s.out.waitFor(t, "\n") // the tap serves its socket before it relays
	rep, err := SendInject(liveSocket(t), "h2s", []byte(`{"jsonrpc":"2.0","id":"q1","method":"get"}`), true, generous)
	if err != nil || !rep.OK {
		t.Fatalf("inject: %v %+v", err, rep)
	}
	if !bytes.Contains(rep.Reply, []byte(`"result"`)) || bytes.Contains(rep.Reply, []byte("ecret123")) {
		t.Errorf("the captured answer: %s", rep.Reply)
	}
}

// A server that cannot start is said with its command masked, whether it
// was given as a path or as a name to look up in PATH (exec's own error
// names the command too).
func TestCannotStartSaysTheCommandMasked(t *testing.T) {
	for _, argv0 := range []string{"supersecret123", "/no/such/supersecret123"} {
		tp, err := New(Options{Argv: []string{argv0}, Env: []string{"API_TOKEN=supersecret123"}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = tp.Run(context.Background(), strings.NewReader(""), newSink(false), newSink(false))
		if err == nil || strings.Contains(err.Error(), "supersecret123") || !strings.Contains(err.Error(), "***API_TOKEN***") {
			t.Errorf("starting %s: the tap said %v; want the command masked", argv0, err)
		}
	}
}

// A frame too large to hold is judged by its first bytes masked, as its
// record is masked: a secret in its id or method reaches neither the tap's
// tracker (which pairs it with the masked request) nor what the live views
// are told of it.
func TestSpooledFrameIsJudgedMasked(t *testing.T) {
	const limit = 4096
	red, _ := sessions.NewRedactor([]string{"API_TOKEN=supersecret123"}, nil)
	body := []byte(`{"jsonrpc":"2.0","id":"supersecret123","result":"`)
	body = append(body, bytes.Repeat([]byte("x"), 2*limit)...)
	body = append(body, `"}`...)
	r := &recorder{limit: limit, hub: newHub(classify.FramingNDJSON), free: make(chan *batch, 1), redact: red, spoolDir: t.TempDir()}
	r.free <- newBatch()
	r.wire(0, item{dir: classify.S2H, data: append(body, '\n')})
	if r.cur == nil || len(r.cur.jobs) == 0 || r.cur.jobs[len(r.cur.jobs)-1].kind != jobSpool {
		t.Fatal("the recorder made no job for a spooled frame")
	}
	r.encode(r.cur)
	j := r.cur.jobs[len(r.cur.jobs)-1]
	if j.spool != nil {
		j.spool.close()
	}
	if !j.m.HasID() || string(j.m.ID().Raw) != `"***API_TOKEN***"` {
		t.Errorf("the spooled frame was judged with id %q; want the masked id", j.m.ID().Raw)
	}
}

// The header block of an LSP frame too large to hold is masked in its
// record, as a held frame's is.
func TestSpooledLSPFramesHeaderIsRecordedMasked(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("moves tens of MiB")
	}
	env := append(os.Environ(), "API_TOKEN=supersecret123")
	body := []byte(`{"jsonrpc":"2.0","method":"n","params":{"x":"`)
	body = append(body, bytes.Repeat([]byte("x"), parseLimit+1)...)
	body = append(body, `"}}`...)
	frame := append(fmt.Appendf(nil, "Content-Length: %d\r\nX-Token: supersecret123\r\n\r\n", len(body)), body...)
	s := startSession(t, Options{Argv: []string{"/bin/cat"}, Framing: classify.FramingLSP, Record: true, Env: env})
	go func() {
		s.in.Write(frame)
		s.in.Close()
	}()
	s.wait(t, generous)
	_, evs, _ := readSession(t, s.tap.Path())
	n := 0
	for _, ev := range evs {
		if !ev.IsFrame() {
			continue
		}
		n++
		if !ev.Redacted || bytes.Contains(ev.Header, []byte("supersecret123")) || !bytes.Contains(ev.Header, []byte("***API_TOKEN***")) {
			t.Errorf("%s record: redacted %v, header %q; want the secret masked", ev.Dir, ev.Redacted, ev.Header)
		}
	}
	if n != 2 {
		t.Errorf("%d frame records, want the frame both ways", n)
	}
}

// A captured answer comes with its latency, measured by the tap from its
// write of the injected frame to its read of the answer: never less than
// the time the server took.
func TestCapturedAnswerCarriesItsLatency(t *testing.T) {
	// The server answers each line after 300 ms.
	answer := `while read -r l; do sleep 0.3; id=$(printf '%s' "$l" | sed 's/.*"id":"\([^"]*\)".*/\1/'); printf '{"jsonrpc":"2.0","id":"%s","result":{}}\n' "$id"; done`
	s := startSession(t, Options{Argv: sh(answer), Framing: classify.FramingNDJSON, Record: true, Listen: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"warm","method":"ping"}`+"\n"))
	s.out.waitFor(t, "\n")
	rep, err := SendInject(liveSocket(t), "h2s", []byte(`{"jsonrpc":"2.0","id":"q1","method":"ping"}`), true, generous)
	if err != nil || !rep.OK || !bytes.Contains(rep.Reply, []byte(`"q1"`)) {
		t.Fatalf("inject: %v %+v", err, rep)
	}
	if rep.Latency < 300*time.Millisecond || rep.Latency > generous {
		t.Errorf("latency %v; the server took 300 ms", rep.Latency)
	}
}

// The tracker treats an injected frame as the side it impersonates: a
// request injected toward the server pairs with the server's (captured)
// answer, and one injected toward the host with the host's answer, each
// with its latency; a live view sees both pairs.
func TestTrackerPairsInjectedRequestsAsFromTheSideTheyImpersonate(t *testing.T) {
	answer := `s/.*"id":"\([^"]*\)".*/{"jsonrpc":"2.0","id":"\1","result":{}}/`
	s := startSession(t, Options{Argv: []string{"sed", "-u", answer}, Framing: classify.FramingNDJSON, Record: true, Listen: true, NoRedact: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"warm","method":"ping"}`+"\n"))
	s.out.waitFor(t, "\n")
	c, err := net.Dial("unix", liveSocket(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, `{"op":"attach"}`+"\n")
	c.SetReadDeadline(time.Now().Add(generous))
	lines := bufio.NewReader(c)
	// The header comes once the view is attached: the records after it
	// come live, annotated with their seq and pair (the backlog from the
	// file has neither).
	if _, err := lines.ReadBytes('\n'); err != nil {
		t.Fatalf("the live view sent no header: %v", err)
	}

	if rep, err := SendInject(liveSocket(t), "h2s", []byte(`{"jsonrpc":"2.0","id":"q1","method":"ping"}`), true, generous); err != nil || !rep.OK {
		t.Fatalf("inject toward the server: %v %+v", err, rep)
	}
	if rep, err := SendInject(liveSocket(t), "s2h", []byte(`{"jsonrpc":"2.0","id":"r1","method":"roots/list"}`), false, generous); err != nil || !rep.OK {
		t.Fatalf("inject toward the host: %v %+v", err, rep)
	}
	s.out.waitFor(t, `"r1"`)
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"r1","result":{"roots":[]}}`+"\n")) // the host answers

	seqOf := map[string]int64{} // the injected requests' records, by id
	paired := map[string]int64{}
	for len(paired) < 2 {
		line, err := lines.ReadBytes('\n')
		if err != nil {
			t.Fatalf("the live view ended before both pairs: %v (paired %v)", err, paired)
		}
		var rec struct {
			Seq   int64  `json:"seq"`
			Src   string `json:"src"`
			Frame string `json:"frame"`
			Pair  *struct {
				Request int64 `json:"request"`
			} `json:"pair"`
		}
		json.Unmarshal(line, &rec)
		for _, id := range []string{"q1", "r1"} {
			if !strings.Contains(rec.Frame, `"`+id+`"`) {
				continue
			}
			if rec.Src == sessions.SrcInject {
				seqOf[id] = rec.Seq
			} else if rec.Pair != nil {
				paired[id] = rec.Pair.Request
			}
		}
	}
	for id, req := range paired {
		if req != seqOf[id] || req == 0 {
			t.Errorf("the answer to %s pairs with record %d; the injected request is record %d", id, req, seqOf[id])
		}
	}
}
