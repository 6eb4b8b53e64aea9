package classify

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// These benchmarks feed the tracker the traffic its rules above the
// envelope judge: a session that made its handshake (with capabilities
// and a list of 50 tools), a 2026-07-28 session (each request carrying
// its _meta), and an LSP session. They use only what the tracker offered
// before those rules, so .ci/bench/tracker runs them on an older tree
// too.

func benchmarkTrackerCalls(b *testing.B, profile Profile, opening []string, req, resp []byte) {
	tr := NewTracker(TrackerOptions{Profile: profile})
	var seq int64
	for i, f := range opening {
		dir := H2S
		if i%2 == 1 {
			dir = S2H
		}
		seq++
		m := Classify([]byte(f), dir, profile)
		tr.Observe(seq, time.Duration(seq), &m)
	}
	rm := Classify(req, H2S, profile)
	sm := Classify(resp, S2H, profile)
	b.ReportAllocs()
	for b.Loop() {
		seq += 2
		tr.Observe(seq, time.Duration(seq), &rm)
		tr.Observe(seq+1, time.Duration(seq), &sm)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/frame")
}

// fiftyTools is a tools/list result of 50 tools, echo among them.
func fiftyTools(id string, extra string) string {
	var tools []string
	for i := range 49 {
		tools = append(tools, `{"name":"tool-`+strconv.Itoa(i)+`","description":"A tool","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}}}`)
	}
	tools = append(tools, `{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}}`)
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{` + extra + `"tools":[` + strings.Join(tools, ",") + `]}}`
}

func BenchmarkTrackerHandshakeCalls1KiB(b *testing.B) {
	caps := `{"tools":{"listChanged":true},"prompts":{},"resources":{},"logging":{}}`
	opening := []string{
		`{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"b","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":"i","result":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"serverInfo":{"name":"s","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, // from the server: ignored by the host's turn
		`{"jsonrpc":"2.0","id":"l","method":"tools/list"}`,
		fiftyTools(`"l"`, ""),
	}
	benchmarkTrackerCalls(b, MCP, opening, frame1KiB(false), frame1KiB(true))
}

func BenchmarkTrackerStateless1KiB(b *testing.B) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"},"progressToken":7}`
	opening := []string{
		`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{` + meta + `}}`,
		`{"jsonrpc":"2.0","id":"d","result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`,
		`{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{` + meta + `}}`,
		fiftyTools(`"l"`, `"resultType":"complete","ttlMs":0,"cacheScope":"public",`),
	}
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)[:800]
	req := []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{` + meta + `,"name":"echo","arguments":{"message":"` + text + `"}}}`)
	resp := []byte(`{"jsonrpc":"2.0","id":42,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}},"content":[{"type":"text","text":"` + text + `"}]}}`)
	benchmarkTrackerCalls(b, MCP, opening, req, resp)
}

func BenchmarkTrackerLSPHover(b *testing.B) {
	opening := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"rootUri":"file:///w","capabilities":{}}}`,
		`{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"hoverProvider":true,"definitionProvider":true,"textDocumentSync":2}}}`,
		`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///w/main.go","languageId":"go","version":1,"text":"package main\n"}}}`,
	}
	req := []byte(`{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///w/main.go"},"position":{"line":0,"character":3}}}`)
	resp := []byte(`{"jsonrpc":"2.0","id":7,"result":{"contents":{"kind":"markdown","value":"package main"}}}`)
	benchmarkTrackerCalls(b, LSP, opening, req, resp)
}

// BenchmarkTrackerEvictions is a host flooding the server with requests
// that are never answered: past MaxInFlight, each request evicts the
// oldest one in flight.
func BenchmarkTrackerEvictions(b *testing.B) {
	tr := NewTracker(TrackerOptions{Profile: JSONRPC, MaxInFlight: 10_000, MaxRemembered: 4096})
	msgs := make([]Message, 100_000) // ids come again only long after their eviction
	for i := range msgs {
		msgs[i] = Classify([]byte(`{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"tools/call","params":{"name":"echo"}}`), H2S, JSONRPC)
	}
	var seq int64
	for range 20_000 { // a full table: from here on, each request evicts one
		seq++
		tr.Observe(seq, time.Duration(seq), &msgs[seq%int64(len(msgs))])
	}
	b.ReportAllocs()
	for b.Loop() {
		seq++
		tr.Observe(seq, time.Duration(seq), &msgs[seq%int64(len(msgs))])
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/frame")
}
