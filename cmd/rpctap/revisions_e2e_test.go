package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

// aboveEnvelope reports whether a finding code is one of the rules above
// the envelope (the MCP revision in force, capabilities, tools, progress,
// the LSP lifecycle and documents).
func aboveEnvelope(code string) bool {
	c, ok := classify.ParseCode(code)
	return ok && (c >= classify.CodeRemovedMethod || c == classify.CodeBeforeInitialize)
}

// checkBinaryFindings runs the built rpctap check --format json on path.
func checkBinaryFindings(t *testing.T, bin, path string) []checkFinding {
	t.Helper()
	out, err := exec.Command(bin, "check", "--format", "json", "--fail-on", "none", path).Output()
	if err != nil {
		t.Fatalf("rpctap check %s: %v", path, err)
	}
	var doc struct {
		Frames   int            `json:"frames"`
		Findings []checkFinding `json:"findings"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("rpctap check --format json printed no JSON document: %v\n%s", err, out)
	}
	if doc.Frames < 6 {
		t.Fatalf("%s holds %d frames", path, doc.Frames)
	}
	return doc.Findings
}

// noRuleAboveTheEnvelopeBroken fails t for each error or warning of the
// rules above the envelope in the session at path that is a peer's (what
// the user injected or edited is the user's, not a peer's).
func noRuleAboveTheEnvelopeBroken(t *testing.T, bin, path string) {
	t.Helper()
	for _, f := range checkBinaryFindings(t, bin, path) {
		if aboveEnvelope(f.Code) && (f.Severity == "error" || f.Severity == "warn") && !f.ByUser {
			t.Errorf("%s line %d: %s %s: %s", filepath.Base(path), f.Line, f.Severity, f.Code, f.Message)
		}
	}
}

// Real peers break none of the rules above the envelope: the sessions
// recorded with them, and fresh ones through the built binary (the
// inspector CLI with server-everything, the MCP Go SDK's client with its
// server under 2026-07-28 and with server-everything after its fallback
// to initialize, gopls) raise no error or warning from them.
func TestRealPeersBreakNoRuleAboveTheEnvelope(t *testing.T) {
	bin := rpctapBinary(t)
	recorded, _ := filepath.Glob("../../testdata/sessions/real/*.jsonl")
	if len(recorded) == 0 {
		t.Fatal("no recordings in testdata/sessions/real")
	}
	for _, path := range recorded {
		t.Run("recorded/"+filepath.Base(path), func(t *testing.T) { noRuleAboveTheEnvelopeBroken(t, bin, path) })
	}
	t.Run("inspector-everything", func(t *testing.T) {
		inspector := needPeer(t, "node_modules/.bin/inspector")
		server := needPeer(t, "node_modules/.bin/mcp-server-everything")
		for name, call := range map[string][]string{
			"prompts-get": {"--method", "prompts/get", "--prompt-name", "simple-prompt"},
			"long-call":   {"--method", "tools/call", "--tool-name", "trigger-long-running-operation", "--tool-arg", "duration=1", "--tool-arg", "steps=2"},
		} {
			dir := t.TempDir()
			record := filepath.Join(dir, name+".jsonl")
			timed(t, dir, inspector, append(append([]string{"--cli"}, call...), "--", bin, "run", "--no-listen", "--record", record, "--", server, "stdio")...)
			noRuleAboveTheEnvelopeBroken(t, bin, record)
		}
	})
	t.Run("gosdk", func(t *testing.T) {
		client := needPeer(t, "bin/client")
		server := needPeer(t, "bin/server")
		everything := needPeer(t, "node_modules/.bin/mcp-server-everything")
		dir := t.TempDir()
		pair := filepath.Join(dir, "pair.jsonl")
		timed(t, dir, client, "-call-timeout", "300ms", "-call", `sleep={"duration":"2s"}`, "-call", `echo={"message":"hi"}`, "--", bin, "run", "--no-listen", "--record", pair, "--", server)
		noRuleAboveTheEnvelopeBroken(t, bin, pair)
		fallback := filepath.Join(dir, "fallback.jsonl")
		timed(t, dir, client, "-call", `get-sum={"a":2,"b":3}`, "--", bin, "run", "--no-listen", "--record", fallback, "--", everything, "stdio")
		noRuleAboveTheEnvelopeBroken(t, bin, fallback)
		// The Go SDK's server in the older era: the inspector CLI asks
		// for an earlier revision with initialize, and the server speaks
		// it.
		inspector := needPeer(t, "node_modules/.bin/inspector")
		older := filepath.Join(dir, "older.jsonl")
		timed(t, dir, inspector, "--cli", "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi", "--", bin, "run", "--no-listen", "--record", older, "--", server)
		if b, _ := os.ReadFile(older); !strings.Contains(string(b), `\"method\":\"initialize\"`) || strings.Contains(string(b), `\"method\":\"server/discover\"`) {
			t.Errorf("the inspector did not speak the handshake era to the Go SDK's server:\n%s", b)
		}
		noRuleAboveTheEnvelopeBroken(t, bin, older)
		// The tools' schemas as server-everything lists them (draft-07
		// among them, an outputSchema on get-structured-content) judge
		// its calls and results: none of the valid ones, and the one
		// call whose arguments break get-sum's inputSchema.
		schemas := filepath.Join(dir, "schemas.jsonl")
		timed(t, dir, client, "-call", `echo={"message":"hi"}`, "-call", `get-structured-content={"location":"Chicago"}`,
			"-call", `get-annotated-message={"messageType":"error","includeImage":true}`, "-call", `get-resource-links={"count":2}`,
			"-call", `get-sum={"a":"one","b":2}`, "--", bin, "run", "--no-listen", "--record", schemas, "--", everything, "stdio")
		var invalid []string
		for _, f := range checkBinaryFindings(t, bin, schemas) {
			switch {
			case f.Code == "tool-arguments-invalid":
				invalid = append(invalid, f.Message)
			case aboveEnvelope(f.Code) && (f.Severity == "error" || f.Severity == "warn"):
				t.Errorf("schemas.jsonl line %d: %s %s: %s", f.Line, f.Severity, f.Code, f.Message)
			}
		}
		if len(invalid) != 1 || !strings.Contains(invalid[0], `"get-sum"`) || !strings.Contains(invalid[0], "at /a") {
			t.Errorf("tool-arguments-invalid findings %q, want the one call of get-sum with a string for a", invalid)
		}
	})
	t.Run("gopls", func(t *testing.T) {
		drive := needPeer(t, "bin/lspdrive")
		gopls := needPeer(t, "bin/gopls")
		dir := t.TempDir()
		record := filepath.Join(dir, "gopls.jsonl")
		timed(t, dir, drive, "-dir", filepath.Join(dir, "mod"), "--", bin, "run", "--no-listen", "--framing", "lsp", "--record", record, "--", "env", "GO_TELEMETRY_CHILD=2", gopls, "serve")
		noRuleAboveTheEnvelopeBroken(t, bin, record)
	})
}

// A multi round-trip call between real peers (the MCP Go SDK's client,
// which accepts the elicitation, and its server's confirm tool, under
// 2026-07-28) breaks no rule above the envelope, and the session, as
// check and export read it through the built binary, holds the
// input_required result, asking for the elicitation, and the retry that
// answers it with the requestState echoed, then the final result: one
// call in the export (the retry names the first request, its answer
// carries the latency from it).
func TestAMultiRoundTripCallOfRealPeersRaisesNoFinding(t *testing.T) {
	bin := rpctapBinary(t)
	client := needPeer(t, "bin/client")
	server := needPeer(t, "bin/server")
	dir := t.TempDir()
	record := filepath.Join(dir, "mrtr.jsonl")
	out, _ := timed(t, dir, client, "-accept-elicitation", "-call", `confirm={"action":"deploy"}`, "--", bin, "run", "--no-listen", "--record", record, "--", server, "-mrtr")
	if !strings.Contains(string(out), `"text":"confirmed deploy"`) {
		t.Fatalf("the client's call did not complete:\n%s", out)
	}
	noRuleAboveTheEnvelopeBroken(t, bin, record) // mrtr-mismatch among them
	exported, err := exec.Command(bin, "export", record, "--format", "json").Output()
	if err != nil {
		t.Fatalf("rpctap export --format json: %v", err)
	}
	type frame struct {
		Params struct {
			Name           string                     `json:"name"`
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
			RequestState   *string                    `json:"requestState"`
		} `json:"params"`
		Result struct {
			ResultType    string `json:"resultType"`
			RequestState  string `json:"requestState"`
			InputRequests map[string]struct {
				Method string `json:"method"`
			} `json:"inputRequests"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	var doc struct {
		Pairs []struct {
			Request struct {
				Line   int    `json:"line"`
				Method string `json:"method"`
				Frame  frame  `json:"frame"`
			} `json:"request"`
			Response struct {
				Frame frame `json:"frame"`
			} `json:"response"`
			Status      string   `json:"status"`
			RetryOf     int      `json:"retry_of"`
			Latency     float64  `json:"latency_ms"`
			CallLatency *float64 `json:"call_latency_ms"`
		} `json:"pairs"`
	}
	if err := json.Unmarshal(exported, &doc); err != nil {
		t.Fatalf("rpctap export --format json: %v\n%s", err, exported)
	}
	var calls []frame
	var rounds []int // the pairs of tools/call
	for i, p := range doc.Pairs {
		if p.Request.Method == "tools/call" {
			calls = append(calls, p.Request.Frame, p.Response.Frame)
			rounds = append(rounds, i)
		}
	}
	if len(calls) != 4 {
		t.Fatalf("%d tools/call requests, want the call and its retry:\n%s", len(calls)/2, exported)
	}
	// One call: the first round asked for input, the retry names the
	// first request, and its answer carries the whole call's latency.
	one, two := doc.Pairs[rounds[0]], doc.Pairs[rounds[1]]
	if one.Status != "input_required" || one.RetryOf != 0 || one.CallLatency != nil {
		t.Errorf("the first round: status %q, retry_of %d, call_latency_ms %v", one.Status, one.RetryOf, one.CallLatency)
	}
	if two.Status != "ok" || two.RetryOf != one.Request.Line || two.CallLatency == nil || *two.CallLatency < two.Latency+one.Latency {
		t.Errorf("the retry: status %q, retry_of %d (the first request is line %d), latency_ms %v, call_latency_ms %v", two.Status, two.RetryOf, one.Request.Line, two.Latency, two.CallLatency)
	}
	first, asked, retry, final := calls[0], calls[1], calls[2], calls[3]
	if first.Params.InputResponses != nil || first.Params.RequestState != nil {
		t.Errorf("the first call already carries inputResponses or requestState: %+v", first.Params)
	}
	if asked.Result.ResultType != "input_required" || asked.Result.InputRequests["confirm"].Method != "elicitation/create" || asked.Result.RequestState == "" {
		t.Errorf("the first answer is not input_required asking elicitation/create under \"confirm\" with a requestState: %+v", asked.Result)
	}
	if retry.Params.Name != "confirm" || retry.Params.InputResponses["confirm"] == nil || retry.Params.RequestState == nil || *retry.Params.RequestState != asked.Result.RequestState {
		t.Errorf("the retry does not answer \"confirm\" and echo requestState %q: %+v", asked.Result.RequestState, retry.Params)
	}
	if final.Result.ResultType != "complete" || len(final.Result.Content) != 1 || final.Result.Content[0].Text != "confirmed deploy" {
		t.Errorf("the final answer: %+v", final.Result)
	}
}
