package playhost

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/tap"
)

func peer(t *testing.T, rel string) string {
	t.Helper()
	p, _ := filepath.Abs(filepath.Join("../../testdata/peers", rel))
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: .ci/peers should have installed it", p)
		}
		t.Skipf("%s is not installed; run .ci/peers", p)
	}
	return p
}

// watchTap is the tap rpctap watch runs, with no --host and no flag but
// --open when lsp, between rpctap's own host and the server argv; it
// records to path, and hands the answers to the composer's requests to
// answers (nil: none), as rpctap watch hands them to its MCP host.
func watchTap(t *testing.T, argv []string, lsp bool, path string, answers func(request, answer []byte), env ...string) *tap.Tap {
	t.Helper()
	opts := TapOptions(argv, classify.FramingAuto, classify.Auto, lsp, path, false)
	opts.Answers = answers
	opts.Env = append(append(os.Environ(), "XDG_RUNTIME_DIR="+t.TempDir()), env...)
	tp, err := tap.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return tp
}

// playing runs server behind a tap with rpctap as its host (its root
// /work/root), as rpctap watch does with no --host, until the session file
// holds every one of want; it returns the file.
func playing(t *testing.T, argv []string, want ...string) (*tap.Tap, []byte, func()) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	host := &MCP{W: inW, R: outR, Root: "/work/root", Warn: func(s string) { t.Log(s) }}
	tp := watchTap(t, argv, false, path, host.Answers)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { host.Run(ctx); io.Copy(io.Discard, outR) }()
	ran := make(chan struct{})
	go func() { tp.Run(ctx, inR, outW, io.Discard); close(ran) }()
	stop := func() { cancel(); <-ran }
	t.Cleanup(stop)
	return tp, waitFor(t, path, want...), stop
}

// With no host, rpctap does the MCP handshake with server-everything,
// lists its tools, resources and prompts, and answers the server's
// roots/list at once with its root (nothing is held); a tools/call sent
// then (as the composer sends it) gets its answer.
func TestPlayingTheHostOfServerEverything(t *testing.T) {
	server := peer(t, "node_modules/.bin/mcp-server-everything")
	tp, rec, _ := playing(t, []string{server, "stdio"},
		`"method":"notifications/initialized"`, `\"name\":\"echo\"`, `"method":"prompts/list"`, `\"resources\":[`,
		`{\"roots\":[{\"uri\":\"file:///work/root\",\"name\":\"root\"}]}`)
	if bytes.Contains(rec, []byte(`"held"`)) {
		t.Errorf("the tap held a frame with no filter set:\n%s", rec)
	}
	if !bytes.Contains(rec, []byte(`"method":"initialize"`)) || !bytes.Contains(rec, []byte(`\"protocolVersion\":\"`)) {
		t.Errorf("no initialize handshake in the file:\n%s", rec)
	}
	if d, e, i := bytes.Index(rec, []byte(`"method":"server/discover"`)), bytes.Index(rec, []byte(`\"code\":-32601`)), bytes.Index(rec, []byte(`"method":"initialize"`)); d < 0 || e < d || i < e {
		t.Errorf("initialize did not follow server/discover's -32601:\n%s", rec)
	}
	if ans := answer(t, tp, `{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo","arguments":{"message":"from the composer"}}}`); !strings.Contains(string(ans), "Echo: from the composer") {
		t.Errorf("the answer: %s", ans)
	}
}

// The same with the Go SDK's server, on revision 2026-07-28:
// server/discover, no initialize, and the lists with the client's info in
// _meta; a tools/call sent then gets its answer.
func TestPlayingTheHostOfTheGoSDKServer(t *testing.T) {
	server := peer(t, "bin/server")
	tp, rec, _ := playing(t, []string{server}, `"method":"server/discover"`, `"method":"tools/list"`, `\"tools\":[`)
	if bytes.Contains(rec, []byte(`"method":"initialize"`)) || !bytes.Contains(rec, []byte(`\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}`)) {
		t.Errorf("a discovering server was sent initialize, or lists with no _meta:\n%s", rec)
	}
	if ans := answer(t, tp, `{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo","arguments":{"message":"from the composer"}}}`); !bytes.Contains(ans, []byte(`"text":"from the composer"`)) {
		t.Errorf("the answer: %s", ans)
	}
}

// A multi round-trip call the user composed (the Go SDK's server's
// confirm, sent as the composer sends it, its answer kept from the host
// with no one waiting) is carried on by rpctap's host: the server's
// input_required result asks for an elicitation, which the host declines,
// as it declines the server's own elicitation/create; it retries the call
// with that answer under the input request's key and the requestState
// echoed, and the server's final result ends the call.
func TestPlayingTheHostRetriesAComposedCallThatAsksForInput(t *testing.T) {
	server := peer(t, "bin/server")
	tp, _, _ := playing(t, []string{server, "-mrtr"}, `"method":"server/discover"`, `\"name\":\"confirm\"`)
	call := `{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"confirm","arguments":{"action":"deploy"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`
	if _, err := tp.Inject(classify.H2S, []byte(call), tap.InjectOptions{Capture: true, Keep: true}); err != nil {
		t.Fatal(err)
	}
	rec := waitFor(t, tp.Path(), `\"resultType\":\"input_required\"`, `deploy not confirmed (decline)`)
	var retry, final string
	for _, line := range strings.Split(string(rec), "\n") {
		switch {
		case strings.Contains(line, `\"inputResponses\"`):
			retry = line
		case strings.Contains(line, `deploy not confirmed`):
			final = line
		}
	}
	for _, want := range []string{`"id":"rpctap-host-`, `\"name\":\"confirm\"`, `\"arguments\":{\"action\":\"deploy\"}`,
		`\"inputResponses\":{\"confirm\":{\"action\":\"decline\"}}`, `\"requestState\":\"confirm:deploy\"`, `\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"`} {
		if !strings.Contains(retry, want) {
			t.Errorf("the retry has no %s: %s", want, retry)
		}
	}
	if strings.Contains(retry, `"src":"inject"`) || strings.Contains(final, `"captured":true`) {
		t.Errorf("the retry is not rpctap's host's own, answered to it:\n%s\n%s", retry, final)
	}
	if !strings.Contains(final, `\"resultType\":\"complete\"`) {
		t.Errorf("the final answer: %s", final)
	}
}

// A composed call whose input_required result asks for sampling (the Go
// SDK's server's summarize), which rpctap's host does not give, is left
// as the server answered it: no retry, and the host says why and what to
// do.
func TestPlayingTheHostLeavesACallThatAsksForSampling(t *testing.T) {
	server := peer(t, "bin/server")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	warned := make(chan string, 4)
	host := &MCP{W: inW, R: outR, Root: "/work/root", Warn: func(s string) { warned <- s }}
	tp := watchTap(t, []string{server, "-mrtr"}, false, path, host.Answers)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { host.Run(ctx); io.Copy(io.Discard, outR) }()
	ran := make(chan struct{})
	go func() { tp.Run(ctx, inR, outW, io.Discard); close(ran) }()
	defer func() { cancel(); <-ran }()
	waitFor(t, path, `\"name\":\"summarize\"`)
	call := `{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"summarize","arguments":{"text":"a long text"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}}}`
	if _, err := tp.Inject(classify.H2S, []byte(call), tap.InjectOptions{Capture: true, Keep: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case w := <-warned:
		if want := `the server answered tools/call input_required, and rpctap's host did not retry it: input request "summary" asks for "sampling/createMessage", which rpctap's host does not answer; answer it from the composer`; !strings.HasPrefix(w, want) {
			t.Errorf("the warning: %s\nwant it to begin: %s", w, want)
		}
	case <-time.After(60 * time.Second):
		b, _ := os.ReadFile(path)
		t.Fatalf("no warning:\n%s", b)
	}
	rec := waitFor(t, path, `\"method\":\"sampling/createMessage\"`)
	if bytes.Contains(rec, []byte(`inputResponses`)) {
		t.Errorf("a retry went out:\n%s", rec)
	}
}

// LSP: with no host, rpctap sends gopls initialize and initialized, opens
// the file it is given, and answers gopls's workspace/configuration at
// once, a null for each item (nothing is held); a hover injected on Greet
// gets its documentation; quitting sends shutdown, then exit, and gopls
// exits 0.
func TestPlayingTheHostOfGopls(t *testing.T) {
	gopls := peer(t, "bin/gopls")
	root, _ := filepath.Abs("../../testdata/lsp/hello")
	file := filepath.Join(root, "main.go")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tp := watchTap(t, []string{"env", "GO_TELEMETRY_CHILD=2", gopls, "serve"}, true, path, nil, "GOFLAGS=-mod=mod", "GOPROXY=off")
	hostCtx, quit := context.WithCancel(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	host := &LSP{W: inW, R: outR, Root: root, Open: file, Warn: func(s string) { t.Error(s) }}
	hostDone := make(chan struct{})
	go func() { host.Run(hostCtx); close(hostDone); io.Copy(io.Discard, outR) }()
	var res tap.Result
	ran := make(chan struct{})
	go func() { res, _ = tp.Run(ctx, inR, outW, io.Discard); close(ran) }()
	waitFor(t, path, `"method":"initialized"`, `"method":"textDocument/didOpen"`, `\"languageId\":\"go\"`, `"method":"workspace/configuration"`, `\"result\":[null`)
	// Greet's declaration: line 7 (0-based), character 5.
	hover := `{"jsonrpc":"2.0","id":"rpctap-1","method":"textDocument/hover","params":{"textDocument":{"uri":` + inject.Quote(inject.FileURI(file)) + `},"position":{"line":7,"character":6}}}`
	if ans := answer(t, tp, hover); bytes.Contains(ans, []byte(`"error"`)) || !bytes.Contains(ans, []byte("Greet says hello")) {
		t.Errorf("the hover's answer: %s", ans)
	}
	quit()
	select {
	case <-ran:
	case <-time.After(30 * time.Second):
		b, _ := os.ReadFile(path)
		t.Fatalf("gopls did not exit after shutdown and exit:\n%s", b)
	}
	<-hostDone
	if res.ExitCode != 0 {
		t.Errorf("gopls exited %d", res.ExitCode)
	}
	b, _ := os.ReadFile(path)
	if bytes.Contains(b, []byte(`"held"`)) {
		t.Errorf("the tap held a frame with no filter set:\n%s", b)
	}
	if i, j := bytes.Index(b, []byte(`"method":"shutdown"`)), bytes.Index(b, []byte(`"method":"exit"`)); i < 0 || j < i {
		t.Errorf("no shutdown then exit in the session:\n%s", b)
	}
}

// answer injects request toward the server, as the composer does, and
// returns the body of its answer.
func answer(t *testing.T, tp *tap.Tap, request string) []byte {
	t.Helper()
	r, err := tp.Inject(classify.H2S, []byte(request), tap.InjectOptions{Capture: true})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ans := <-r.Reply:
		return ans.Body
	case <-time.After(60 * time.Second):
		t.Fatalf("no answer to %s", request)
	}
	return nil
}

// waitFor waits until the session file at path holds every one of want.
func waitFor(t *testing.T, path string, want ...string) []byte {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		all := true
		for _, w := range want {
			all = all && bytes.Contains(b, []byte(w))
		}
		if all {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session never held all of %q:\n%s", want, b)
		}
	}
}

func TestLanguageIDsFromExtensions(t *testing.T) {
	for path, want := range map[string]string{"a/main.go": "go", "x.PY": "python", "go.mod": "go.mod", "README": "plaintext", "a.ts": "typescript"} {
		if got := LanguageID(path); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
}

// The retry of a call that asked for input is the call's own params with
// an answer to each input request by its key, from the replies rpctap's
// host gives the server's own requests (roots/list its root,
// elicitation/create declined), the requestState byte for byte (escapes
// kept; none when the result gave none or null), any earlier
// inputResponses replaced, and the host's _meta when the call had none.
// A call that asks for what the host does not give (sampling, an unknown
// method) is not retried, and the error names the input request.
func TestTheRetryOfACallThatAsksForInput(t *testing.T) {
	s := &session{meta: json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), host: inject.Host{Root: "/work/root"}}
	asks := `"inputRequests":{"r":{"method":"roots/list"},"k\u00e9":{"method":"elicitation/create","params":{"message":"ok?"}}}`
	for _, c := range []struct{ params, result, want string }{
		{`{"name":"confirm","arguments":{"a":1}}`, `{"resultType":"input_required",` + asks + `,"requestState":"s\u003c1>"}`,
			`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"arguments":{"a":1},"inputResponses":{"ké":{"action":"decline"},"r":{"roots":[{"uri":"file:///work/root","name":"root"}]}},"name":"confirm","requestState":"s\u003c1>"}`},
		{`{"name":"x","_meta":{"mine":true},"inputResponses":{"old":{}},"requestState":"old"}`, `{"resultType":"input_required",` + asks + `,"requestState":null}`,
			`{"_meta":{"mine":true},"inputResponses":{"ké":{"action":"decline"},"r":{"roots":[{"uri":"file:///work/root","name":"root"}]}},"name":"x"}`},
		{``, `{"resultType":"input_required","inputRequests":{}}`,
			`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"inputResponses":{}}`},
	} {
		got, err := retryParams([]byte(c.params), []byte(c.result), s)
		if err != nil || got != c.want {
			t.Errorf("retry of %s after %s:\n got %s (%v)\nwant %s", c.params, c.result, got, err, c.want)
		}
	}
	for method, say := range map[string]string{"sampling/createMessage": `"sampling/createMessage"`, "tasks/get": `"tasks/get"`} {
		_, err := retryParams([]byte(`{"name":"x"}`), []byte(`{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"},"m":{"method":"`+method+`"}}}`), s)
		if err == nil || !strings.Contains(err.Error(), `input request "m" asks for `+say+", which rpctap's host does not answer") {
			t.Errorf("%s: %v", method, err)
		}
	}
}
