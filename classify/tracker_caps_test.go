package classify

import (
	"reflect"
	"testing"
	"time"
)

// feed gives a tracker the frames, the first as seq 1, and returns it.
func feed(t *testing.T, opts TrackerOptions, steps []step) *Tracker {
	t.Helper()
	tr := NewTracker(opts)
	for i, s := range steps {
		m := Classify([]byte(s.frame), s.dir, tr.Profile())
		tr.Observe(int64(i+1), time.Duration(s.ms)*time.Millisecond, &m)
	}
	return tr
}

func TestCapabilitiesOfAnMCPHandshakeNameEachSideAndTheirFrames(t *testing.T) {
	tr := feed(t, TrackerOptions{}, []step{
		{0, H2S, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"host","version":"2","title":"The Host"}}}`},
		{1, S2H, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"srv","version":"1.0.0","title":"T\u001b[2J"}}}`},
		{2, H2S, inited},
		{3, H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
	})
	got := tr.Capabilities()
	want := Capabilities{
		Profile:     MCP,
		Client:      Implementation{Name: "host", Version: "2", Title: "The Host", Seq: 1, From: "initialize request"},
		Server:      Implementation{Name: "srv", Version: "1.0.0", Title: "T\x1b[2J", Seq: 2, From: "initialize result"},
		Asked:       "2025-11-25",
		AskedSeq:    1,
		Answered:    "2025-06-18",
		AnsweredSeq: 2,
		ServerCaps:  Declared{JSON: []byte(`{"tools":{"listChanged":true}}`), Seq: 2, From: "initialize result"},
		ClientCaps:  Declared{JSON: []byte(`{"roots":{}}`), Seq: 1, From: "initialize request"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if got.Mixed() {
		t.Error("a session of one handshake reads as mixed")
	}
	// A copy: what the tracker goes on with does not change it.
	got.ServerCaps.JSON[2] = 'X'
	if again := tr.Capabilities(); string(again.ServerCaps.JSON) != `{"tools":{"listChanged":true}}` {
		t.Errorf("the snapshot shares the tracker's bytes: %s", again.ServerCaps.JSON)
	}
}

func TestCapabilitiesUnder20260728ComeFromEachRequestsMeta(t *testing.T) {
	meta := func(caps string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `,"io.modelcontextprotocol/clientInfo":{"name":"h","version":"9"}}`
	}
	res := `"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s26","version":"3","title":"Stateless"}}`
	tr := feed(t, TrackerOptions{}, []step{
		{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta(`{}`) + `}}`},
		{1, S2H, `{"jsonrpc":"2.0","id":1,"result":{` + res + `,"ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}}}}`},
		{2, H2S, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta(`{}`) + `}}`},
		{3, H2S, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x",` + meta(`{"elicitation":{}}`) + `}}`},
		{4, H2S, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x",` + meta(`{"elicitation":{}}`) + `}}`},
	})
	got := tr.Capabilities()
	want := Capabilities{
		Profile:     MCP,
		Client:      Implementation{Name: "h", Version: "9", Seq: 1, From: "request _meta"},
		Server:      Implementation{Name: "s26", Version: "3", Title: "Stateless", Seq: 2, From: "result _meta"},
		Offered:     []string{"2026-07-28", "2025-11-25"},
		OfferedSeq:  2,
		Carried:     []CarriedRevision{{Version: "2026-07-28", Requests: 4, First: 1, Last: 5}},
		ServerCaps:  Declared{JSON: []byte(`{"tools":{}}`), Seq: 2, From: "server/discover result"},
		RequestCaps: Declared{JSON: []byte(`{"elicitation":{}}`), Seq: 5, From: "request _meta"},
		CapsChanged: 4,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if got.Mixed() {
		t.Error("a session of one revision reads as mixed")
	}
}

func TestCapabilitiesOfAClientThatFellBackReadAsMixed(t *testing.T) {
	tr := feed(t, TrackerOptions{}, []step{
		{0, H2S, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta26 + `}}`},
		{1, S2H, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`},
		{2, H2S, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`},
		{3, S2H, `{"jsonrpc":"2.0","id":2,"result":{"protocolVersion":"2025-11-25","capabilities":{}}}`},
	})
	got := tr.Capabilities()
	if !got.Mixed() || got.AskedSeq != 3 || len(got.Carried) != 1 || got.Carried[0].First != 1 {
		t.Errorf("a fall back from server/discover to initialize: %+v", got)
	}
}

func TestCapabilitiesOfLSPHoldTheRegistrationsNotTakenBack(t *testing.T) {
	tr := feed(t, TrackerOptions{Profile: LSP}, []step{
		{0, H2S, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"capabilities":{"textDocument":{}},"clientInfo":{"name":"ed","version":"1"}}}`},
		{1, S2H, `{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"hoverProvider":true},"serverInfo":{"name":"gopls","version":"v0.20"}}}`},
		{2, H2S, `{"jsonrpc":"2.0","method":"initialized","params":{}}`},
		{3, S2H, `{"jsonrpc":"2.0","id":1,"method":"client/registerCapability","params":{"registrations":[{"id":"w1","method":"workspace/didChangeWatchedFiles"},{"id":"c1","method":"workspace/didChangeConfiguration"}]}}`},
		{4, S2H, `{"jsonrpc":"2.0","id":2,"method":"client/registerCapability","params":{"registrations":[{"id":"f1","method":"textDocument/formatting"}]}}`},
		{5, S2H, `{"jsonrpc":"2.0","id":3,"method":"client/unregisterCapability","params":{"unregisterations":[{"id":"w1","method":"workspace/didChangeWatchedFiles"}]}}`},
	})
	got := tr.Capabilities()
	want := Capabilities{
		Profile:    LSP,
		Client:     Implementation{Name: "ed", Version: "1", Seq: 1, From: "initialize request"},
		Server:     Implementation{Name: "gopls", Version: "v0.20", Seq: 2, From: "initialize result"},
		ServerCaps: Declared{JSON: []byte(`{"hoverProvider":true}`), Seq: 2, From: "initialize result"},
		ClientCaps: Declared{JSON: []byte(`{"textDocument":{}}`), Seq: 1, From: "initialize request"},
		Registrations: []Registration{
			{ID: "c1", Method: "workspace/didChangeConfiguration", Seq: 4},
			{ID: "f1", Method: "textDocument/formatting", Seq: 5},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}
