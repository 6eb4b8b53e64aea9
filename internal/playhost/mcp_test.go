package playhost

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
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

// playing runs server behind a tap with rpctap as its host, as rpctap
// watch does with no --host (a hold time of 1 s), until the session file
// holds every one of want; it returns the file.
func playing(t *testing.T, argv []string, want ...string) (*tap.Tap, []byte, func()) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tp, err := tap.New(tap.Options{Argv: argv, Framing: classify.FramingNDJSON, Record: true, Path: path, TermWait: 3 * time.Second,
		InterceptToHost: HeldRequests, HoldTimeout: time.Second, Env: append(os.Environ(), "XDG_RUNTIME_DIR="+t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	host := &MCP{W: inW, R: outR, Warn: func(s string) { t.Log(s) }}
	go func() { host.Run(ctx); io.Copy(io.Discard, outR) }()
	ran := make(chan struct{})
	go func() { tp.Run(ctx, inR, outW, io.Discard); close(ran) }()
	stop := func() { cancel(); <-ran }
	t.Cleanup(stop)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(path)
		all := true
		for _, w := range want {
			all = all && bytes.Contains(b, []byte(w))
		}
		if all {
			return tp, b, stop
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session never held all of %q:\n%s", want, b)
		}
	}
}

// issue 12 point 3: with no host, rpctap does the MCP handshake with
// server-everything, lists its tools, resources and prompts, and the
// server's roots/list, held for the user, gets the default answer once
// its hold time runs out; a tools/call sent then (as the composer sends
// it) gets its answer.
func TestPlayingTheHostOfServerEverything(t *testing.T) {
	server := peer(t, "node_modules/.bin/mcp-server-everything")
	tp, rec, _ := playing(t, []string{server, "stdio"},
		`"method":"notifications/initialized"`, `\"name\":\"echo\"`, `"method":"prompts/list"`, `\"resources\":[`,
		`"held":"timeout"`, `{\"roots\":[]}`)
	if !bytes.Contains(rec, []byte(`"method":"initialize"`)) || !bytes.Contains(rec, []byte(`\"protocolVersion\":\"`)) {
		t.Errorf("no initialize handshake in the file:\n%s", rec)
	}
	res, err := tp.Inject(classify.H2S, []byte(`{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo","arguments":{"message":"from the composer"}}}`), tap.InjectOptions{Capture: true})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case ans := <-res.Reply:
		if !strings.Contains(string(ans.Body), "Echo: from the composer") {
			t.Errorf("the answer: %s", ans.Body)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no answer to the tools/call")
	}
}

// issue 12 point 3: the same with the Go SDK's server (revision
// 2026-07-28, which rpctap's host meets with initialize).
func TestPlayingTheHostOfTheGoSDKServer(t *testing.T) {
	server := peer(t, "bin/server")
	playing(t, []string{server}, `"method":"notifications/initialized"`, `"method":"tools/list"`, `\"tools\":[`)
}

func TestTheDefaultAnswersOfAHost(t *testing.T) {
	for method, want := range map[string]string{
		"ping":                   `{"jsonrpc":"2.0","id":7,"result":{}}`,
		"roots/list":             `{"jsonrpc":"2.0","id":7,"result":{"roots":[]}}`,
		"elicitation/create":     `{"jsonrpc":"2.0","id":7,"result":{"action":"decline"}}`,
		"sampling/createMessage": `"code":-1`,
		"x/\u202e":               `"code":-32601`,
	} {
		m := classify.Classify([]byte(`{"jsonrpc":"2.0","id":7,"method":"`+method+`"}`), classify.S2H, classify.MCP)
		if got := answerFor(&m); !strings.Contains(got, want) {
			t.Errorf("%s: %s, want %s", method, got, want)
		}
	}
}
