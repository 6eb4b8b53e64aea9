package export

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// A multi round-trip call is one call in the JSON export: the answer
// that asked for input is input_required, the retry names the first
// request, its answer carries the call's whole latency, and the call
// counts once in its method's percentiles, with that latency.
func TestTheJSONExportCountsAMultiRoundTripCallOnce(t *testing.T) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	path := filepath.Join(t.TempDir(), "mrtr.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := sessions.NewWriter(f, sessions.Header{ID: "mrtr01", Started: time.Unix(1_800_000_000, 0).UTC(), Argv: []string{"server"}, Framing: "ndjson", Profile: "mcp"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []sessions.FrameRecord{
		{T: 1000, Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `,"name":"confirm"}}`)},
		{T: 3000, Dir: classify.S2H, Frame: []byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s","inputRequests":{"c":{"method":"elicitation/create","params":{}}}}}`)},
		{T: 8000, Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + meta + `,"name":"confirm","inputResponses":{"c":{"action":"accept"}},"requestState":"s"}}`)},
		{T: 9000, Dir: classify.S2H, Frame: []byte(`{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[]}}`)},
	} {
		if err := w.WriteFrame(r); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	got, _ := exportString(t, path, Options{Format: FormatJSON})
	var doc struct {
		Methods []struct {
			Method   string
			Requests int
			Retries  int
			Answered int
			P50      *float64 `json:"p50_ms"`
		}
		Pairs []struct {
			Status        string
			RetryOf       int      `json:"retry_of"`
			LatencyMS     float64  `json:"latency_ms"`
			CallLatencyMS *float64 `json:"call_latency_ms"`
		}
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	if len(doc.Pairs) != 2 {
		t.Fatalf("pairs %+v, want 2", doc.Pairs)
	}
	if p := doc.Pairs[0]; p.Status != "input_required" || p.RetryOf != 0 || p.CallLatencyMS != nil {
		t.Errorf("the first round: %+v", p)
	}
	if p := doc.Pairs[1]; p.Status != "ok" || p.RetryOf != 2 || p.LatencyMS != 1 || p.CallLatencyMS == nil || *p.CallLatencyMS != 8 {
		t.Errorf("the retry: %+v", p)
	}
	for _, m := range doc.Methods {
		if m.Method == "tools/call" && (m.Requests != 2 || m.Retries != 1 || m.Answered != 1 || m.P50 == nil || *m.P50 != 8) {
			t.Errorf("tools/call stats %+v: want 2 requests, 1 of them a retry, the call answered once, p50 8 ms", m)
		}
	}
	// The summary tables say the retry among the requests: "2, answered
	// 1" read as a call left unanswered.
	md, _ := exportString(t, path, Options{Format: FormatMarkdown})
	if !strings.Contains(md, "| `tools/call` | 2 (1 retry) | 0 | 1 | 0 |") {
		t.Errorf("the markdown methods table does not count the retry apart:\n%s", md)
	}
	html, _ := exportString(t, path, Options{Format: FormatHTML})
	if !strings.Contains(html, `<td class="n">2 (1 retry)</td>`) {
		t.Errorf("the HTML methods table does not count the retry apart")
	}
}
