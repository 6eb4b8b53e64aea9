package classify

import (
	"bytes"
	"testing"
	"time"
)

// The tracker's rules above the envelope read whatever a peer sends
// (capabilities, tool lists, input requests, _meta): any sequence of
// frames, in either direction, under any profile, is judged without a
// panic. Each input line is a frame; its first byte says its direction.
func FuzzTrackerRules(f *testing.F) {
	seeds := [][]step{
		steps(handshake("2025-11-25", allClientCaps), []step{{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`}, {0, S2H, fiftyTools("1", "")}}),
		steps(discover(`["2026-07-28"]`, serverCaps), []step{
			{0, H2S, req26("1", "tools/call", `"name":"echo"`)},
			{0, S2H, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"sampling/createMessage","params":{"includeContext":"allServers"}}}}}`},
			{0, S2H, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":"x"}}`},
		}),
		steps(lspInit(`{"hoverProvider":true}`), []step{
			{0, S2H, `{"jsonrpc":"2.0","id":"r","method":"client/registerCapability","params":{"registrations":[{"method":"textDocument/definition"},7,null]}}`},
			{0, H2S, `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a"}}}`},
			{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///\u0061"}}}`},
		}),
	}
	for _, s := range seeds {
		var b bytes.Buffer
		for _, st := range s {
			if st.dir == S2H {
				b.WriteByte('s')
			} else {
				b.WriteByte('h')
			}
			b.WriteString(st.frame)
			b.WriteByte('\n')
		}
		f.Add(b.Bytes(), uint8(0))
		f.Add(b.Bytes(), uint8(2))
	}
	f.Fuzz(func(t *testing.T, data []byte, p uint8) {
		profile := []Profile{Auto, MCP, LSP}[int(p)%3]
		tr := NewTracker(TrackerOptions{Profile: profile})
		for i, line := range bytes.Split(data, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			dir := H2S
			if line[0] == 's' {
				dir = S2H
			}
			m := Classify(line[1:], dir, tr.Profile())
			tr.Observe(int64(i+1), time.Duration(i)*time.Millisecond, &m)
		}
		tr.End(time.Hour)
		if tr.mcp.logLevels < 0 || tr.mcp.logLevels > tr.InFlight() {
			t.Fatalf("%d requests with a log level in flight, %d in flight", tr.mcp.logLevels, tr.InFlight())
		}
		// What Capabilities keeps stays within its bounds.
		c := tr.Capabilities()
		if len(c.Registrations) > maxRegistered || len(c.Carried) > maxCarried || len(c.ServerCaps.JSON) > maxCaps || len(c.ClientCaps.JSON) > maxCaps || len(c.RequestCaps.JSON) > maxCaps || len(c.Server.Name) > maxInfoText || len(c.Client.Version) > maxInfoText {
			t.Fatalf("the capabilities outgrow their bounds: %d registrations, %d revisions", len(c.Registrations), len(c.Carried))
		}
	})
}
