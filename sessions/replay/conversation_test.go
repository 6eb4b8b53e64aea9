package replay

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// frameAt is one frame of a test conversation: its time (µs), direction
// ('h' host to server, 's' server to host) and bytes.
type frameAt struct {
	t     int64
	dir   byte
	frame string
}

// writeSession writes a session file of frames, with the given framing.
func writeSession(t *testing.T, framing string, frames []frameAt) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	w, err := sessions.NewWriter(bw, sessions.Header{ID: "test", Started: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Name: "test", Framing: framing})
	if err != nil {
		t.Fatal(err)
	}
	for _, fr := range frames {
		dir := classify.H2S
		if fr.dir == 's' {
			dir = classify.S2H
		}
		if err := w.WriteFrame(sessions.FrameRecord{T: fr.t, Dir: dir, Frame: []byte(fr.frame)}); err != nil {
			t.Fatal(err)
		}
	}
	code := 0
	w.WriteEvent(sessions.EventRecord{T: frames[len(frames)-1].t + 1, Kind: sessions.EventExit, Code: &code})
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

const (
	echoTool = `{"name":"echo","description":"Echoes","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}}`
	addTool  = `{"name":"add","description":"Adds","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}}`
)

// mcpConversation is a small MCP session; change edits its frames by
// their position before they are written.
func mcpConversation(change func([]frameAt) []frameAt) []frameAt {
	frames := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`},
		{1000, 's', `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`},
		{2000, 'h', `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{3000, 'h', `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{4000, 's', `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + echoTool + `,` + addTool + `]}}`},
		{5000, 'h', `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`},
		{6000, 's', `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}`},
		{7000, 'h', `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}`},
		{8000, 's', `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"5"}]}}`},
	}
	if change != nil {
		frames = change(frames)
	}
	return frames
}
