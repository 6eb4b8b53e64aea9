package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/source"
)

// sessionFile writes a session file of the profile and frames, each a direction and
// its JSON, one a millisecond, and returns its path.
func sessionFile(t *testing.T, profile string, frames ...string) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `{"rpctap":"session","version":1,"id":"c","started":"2026-11-29T18:00:00.000000Z","argv":["srv"],"name":"srv","framing":"ndjson","profile":%q}`+"\n", profile)
	for i := 0; i+1 < len(frames); i += 2 {
		q := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(frames[i+1])
		fmt.Fprintf(&b, `{"t":%d,"dir":"%s","frame":"%s"}`+"\n", (i+1)*1000, frames[i], q)
	}
	path := filepath.Join(t.TempDir(), "caps.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// c shows both sides' names, the handshake's revision and both sides'
// capabilities, each line with the frame it came from; enter on a line
// goes to its frame in the traffic table, and c closes the pane.
func TestCapabilitiesPaneShowsEachSideWithItsFrameAndGoesThere(t *testing.T) {
	tm := startProgram(t, []*source.Source{openFile(t, demoSession)}, 80, 24)
	waitFor(t, tm, "INVALID")
	tm.Send(press("c"))
	waitFor(t, tm, "Capabilities", "#2 Host     demo-host 1.0 (initialize request)", "#5 Server   demo-server 0.3 (initialize result)",
		"2025-11-25 answered by the server", "#5 Server capabilities (initialize result)", `"tools": {}`, "#2 Host capabilities (initialize request)", "c/esc close")
	// Down to the server's line, and enter: the table shows, #5 selected.
	tm.Send(press("j"))
	tm.Send(press("j"))
	tm.Send(press("enter"))
	waitFor(t, tm, "#5  server → host  response")
	view := finalView(t, tm)
	checkFits(t, view, 80, 24)
	if strings.Contains(view, "Capabilities of the session") {
		t.Errorf("the pane stays open after enter:\n%s", view)
	}
}

func TestCapabilitiesPaneClosesWithCAndEsc(t *testing.T) {
	for _, k := range []string{"c", "esc"} {
		t.Run(k, func(t *testing.T) {
			tm := startProgram(t, []*source.Source{openFile(t, demoSession)}, 80, 24)
			waitFor(t, tm, "INVALID")
			tm.Send(press("c"))
			waitFor(t, tm, "Capabilities of the session")
			tm.Send(press(k))
			view := finalView(t, tm) // the keys are taken in order: k before q
			if strings.Contains(view, "Capabilities of the session") {
				t.Errorf("%s did not close the pane:\n%s", k, view)
			}
		})
	}
}

// Under MCP 2026-07-28 the pane shows the identities the _meta gave, the
// revisions server/discover offered and the requests carried, and the
// capabilities of the latest request, saying when requests differ; a
// long pane scrolls, and the peer's text shows escaped.
func TestCapabilitiesPaneShowsWhatEachStatelessRequestCarried(t *testing.T) {
	meta := func(caps string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `,"io.modelcontextprotocol/clientInfo":{"name":"host\u001b[2J","version":"9"}}`
	}
	path := sessionFile(t, "auto",
		"h2s", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{`+meta(`{}`)+`}}`,
		"s2h", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s26","version":"3","title":"\u202eevil"}},"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true},"prompts":{},"resources":{},"completions":{}}}}`,
		"h2s", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta(`{}`)+`}}`,
		"h2s", `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{`+meta(`{"elicitation":{"form":{}},"sampling":{}}`)+`}}`,
	)
	tm := startProgram(t, []*source.Source{openFile(t, path)}, 80, 24)
	waitFor(t, tm, "ended without")
	tm.Send(press("c"))
	waitFor(t, tm, `host\x1b[2J 9 (request _meta)`, `s26 3 “\u202eevil” (result _meta)`, "Offered  2026-07-28 (server/discover result)",
		"2026-07-28 carried by 3 requests", "the latest request that carried 2026-07-28")
	tm.Send(press("G"))
	waitFor(t, tm, "Host capabilities, the latest request's (request _meta)", `"elicitation": {`, "#5 the requests differ")
	view := finalView(t, tm)
	checkFits(t, view, 80, 24)
	for _, bad := range []string{"\x1b", "\u202e"} {
		if strings.Contains(view, bad) {
			t.Errorf("the view holds %q raw", bad)
		}
	}
}

// For LSP the pane shows the server's capabilities and the dynamic
// registrations that no unregisterCapability took back.
func TestCapabilitiesPaneShowsTheLSPServersRegistrations(t *testing.T) {
	path := sessionFile(t, "lsp",
		"h2s", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"processId":null,"capabilities":{},"clientInfo":{"name":"ed"}}}`,
		"s2h", `{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"hoverProvider":true},"serverInfo":{"name":"gopls","version":"v0.20"}}}`,
		"s2h", `{"jsonrpc":"2.0","id":1,"method":"client/registerCapability","params":{"registrations":[{"id":"w1","method":"workspace/didChangeWatchedFiles"},{"id":"f1","method":"textDocument/formatting"}]}}`,
		"s2h", `{"jsonrpc":"2.0","id":2,"method":"client/unregisterCapability","params":{"unregisterations":[{"id":"w1","method":"workspace/didChangeWatchedFiles"}]}}`,
	)
	tm := startProgram(t, []*source.Source{openFile(t, path)}, 80, 24)
	waitFor(t, tm, "ended without")
	tm.Send(press("c"))
	waitFor(t, tm, "profile lsp", "#3 Server   gopls v0.20 (initialize result)", `"hoverProvider": true`,
		"Dynamic registrations (1, client/registerCapability)", "#4   textDocument/formatting  id f1")
	view := finalView(t, tm)
	if strings.Contains(view, "didChangeWatchedFiles") {
		t.Errorf("an unregistered capability shows:\n%s", view)
	}
}

// Capabilities too long for the pane's budget of lines say that the rest
// is in their frame.
func TestCapabilitiesTooLongToLayOutSayTheRestIsInTheirFrame(t *testing.T) {
	var members []string
	for i := range 2000 {
		members = append(members, fmt.Sprintf(`"feature%d":{}`, i))
	}
	p := newCapsPane(newCommon(asciiRenderer()))
	p.snap = classify.Capabilities{Profile: classify.MCP, ServerCaps: classify.Declared{JSON: []byte("{" + strings.Join(members, ",") + "}"), Seq: 7, From: "initialize result"}}
	p.synced = 0
	p.SetSize(80, 20)
	last := p.lines[len(p.lines)-1]
	if !strings.Contains(last.text, "the rest is in the frame") || last.seq != 7 || len(p.lines) > capsJSONLines+10 {
		t.Errorf("%d lines, the last %+v", len(p.lines), last)
	}
}
