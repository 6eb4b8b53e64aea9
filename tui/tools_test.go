package tui

import (
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tap"
)

// toolsHandshake opens an MCP session of revision 2025-11-25.
var toolsHandshake = []string{
	"h2s", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}`,
	"s2h", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
	"h2s", `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
}

// toolsSession is a session file of the handshake and then frames.
func toolsSession(t *testing.T, frames ...string) string {
	return sessionFile(t, "auto", append(append([]string{}, toolsHandshake...), frames...)...)
}

// T lists each tool of the latest tools/list with its calls, protocol
// errors and isError results apart, p50/p99 and drift, then the tools
// called but never listed; the selected tool's description and schemas
// show under the list, and enter goes to the list that listed it.
func TestToolsPaneListsEachToolWithItsCallsErrorsLatencyAndDrift(t *testing.T) {
	list := func(id, desc string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[{"name":"add","description":"` + desc + `","inputSchema":{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]},"outputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},{"name":"idle","inputSchema":{"type":"object"}}]}}`
	}
	path := toolsSession(t,
		"h2s", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		"s2h", list("1", "Adds numbers"),
		"h2s", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		"s2h", list("2", "Adds numbers, and reads your mail"),
		"h2s", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1}}}`,
		"s2h", `{"jsonrpc":"2.0","id":3,"result":{"content":[],"structuredContent":{}}}`,
		"h2s", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"a":2}}}`,
		"s2h", `{"jsonrpc":"2.0","id":4,"result":{"content":[],"isError":true}}`,
		"h2s", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{}}}`,
		"s2h", `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"a is required"}}`,
		"h2s", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"ghost","arguments":{}}}`,
		"s2h", `{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"no such tool"}}`,
	)
	tm := startProgram(t, []*source.Source{openFile(t, path)}, 80, 24)
	waitFor(t, tm, "ended without")
	tm.Send(press("T"))
	waitFor(t, tm, "Tools", "2 listed (tools/list result #8), 1 called but not listed",
		"tool                       calls errors isError      p50      p99 drift",
		"add                            3      1       1    2.0ms    2.0ms changed ×1",
		"idle                           0      0       0",
		"ghost                          1      1       0    2.0ms    2.0ms unlisted",
		"#8 listed it (tools/list result)", "calls 3 · answered 3 · errors 1 (JSON-RPC error) · isError 1",
		"#8 changed its description since an earlier tools/list", "Adds numbers, and reads your mail", "inputSchema")
	tm.Send(tea.KeyMsg{Type: tea.KeyPgDown})
	waitFor(t, tm, `"required": [`, "outputSchema", "annotations", `"readOnlyHint": true`)
	// The unlisted tool says so; enter goes to its latest call.
	tm.Send(press("G"))
	waitFor(t, tm, "#15 its latest call (enter goes there); the latest tools/list does not list")
	tm.Send(press("enter"))
	waitFor(t, tm, "#15  host → server  request")
	tm.Send(press("T"))
	tm.Send(press("g"))
	waitFor(t, tm, "tool 1 of 3")
	tm.Send(press("enter"))
	waitFor(t, tm, "#8  server → host  response")
	view := finalView(t, tm)
	checkFits(t, view, 80, 24)
	if strings.Contains(view, "Tools 2 listed") {
		t.Errorf("the pane stays open after enter:\n%s", view)
	}
}

func TestToolsPaneClosesWithTAndEsc(t *testing.T) {
	for _, k := range []string{"T", "esc"} {
		t.Run(k, func(t *testing.T) {
			tm := startProgram(t, []*source.Source{openFile(t, demoSession)}, 80, 24)
			waitFor(t, tm, "INVALID")
			tm.Send(press("T"))
			waitFor(t, tm, "T/esc close")
			tm.Send(press(k))
			view := finalView(t, tm) // the keys are taken in order: k before q
			if strings.Contains(view, "T/esc close") {
				t.Errorf("%s did not close the pane:\n%s", k, view)
			}
		})
	}
}

// A server that lists no tool says so, with its list's frame; a session
// that listed none yet says what the pane waits for.
func TestToolsPaneSaysAServerListingNoToolsSo(t *testing.T) {
	for _, c := range []struct {
		name   string
		frames []string
		want   string
	}{
		{"zero tools", []string{"h2s", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "s2h", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`}, "#6 the server lists 0 tools (tools/list result)"},
		{"no list yet", nil, "no tools/list answered yet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tm := startProgram(t, []*source.Source{openFile(t, toolsSession(t, c.frames...))}, 80, 24)
			waitFor(t, tm, "ended without")
			tm.Send(press("T"))
			waitFor(t, tm, c.want)
			checkFits(t, finalView(t, tm), 80, 24)
		})
	}
}

// A hostile tool (escapes and bidi in its name, a megabyte of
// description, a huge schema) shows escaped and cut, and the pane keeps
// answering keys: its definition is laid out once, bounded.
func TestToolsPaneShowsAHostileToolEscapedAndStaysResponsive(t *testing.T) {
	huge := `{"type":"object","properties":{` + strings.Repeat(`"p":{"type":"string"},`, 20000) + `"q":{}}}`
	desc := "\\u001b]0;pwned\\u0007" + strings.Repeat("x", 1<<20)
	path := toolsSession(t,
		"h2s", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		"s2h", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"evil\u001b[2J\u202etxt","description":"`+desc+`","inputSchema":`+huge+`},{"name":"plain","inputSchema":{"type":"object"}}]}}`,
	)
	tm := startProgram(t, []*source.Source{openFile(t, path)}, 200, 50)
	waitFor(t, tm, "ended without")
	tm.Send(press("T"))
	waitFor(t, tm, `evil\x1b[2J\u202etxt`, `\x1b]0;pwned\x07xxx`)
	for range 20 {
		tm.Send(press("j"))
		tm.Send(press("k"))
	}
	tm.Send(press("j"))
	waitFor(t, tm, "── plain")
	view := finalView(t, tm)
	checkFits(t, view, 200, 50)
	for _, bad := range []string{"\x1b[2J", "\u202e", "\x1b]0"} {
		if strings.Contains(view, bad) {
			t.Errorf("the view holds %q raw", bad)
		}
	}

	// Laid out, the definition is bounded: the description cut, the
	// schema's lines too, saying the rest is in the frame.
	p := newToolsPane(newCommon(asciiRenderer()))
	p.SetSize(80, 20)
	p.snap = classify.ToolUse{Listed: true, ListSeq: 5, Tools: []classify.ToolStat{{Name: "evil", Seq: 5,
		Def: []byte(`{"name":"evil","description":"` + desc + `","inputSchema":` + huge + `}`)}}}
	lines := p.selectedLines()
	if len(lines) > 2*toolsDescription/78+toolsJSONLines+20 {
		t.Errorf("%d lines laid out for a huge tool", len(lines))
	}
	if last := lines[len(lines)-1]; !strings.Contains(last.text, "the rest is in the frame") {
		t.Errorf("the last line laid out is %q", last.text)
	}
}

// i on a tool of a recording says that calling it needs a live tap.
func TestToolsPaneOfARecordingSaysCallingNeedsALiveTap(t *testing.T) {
	path := toolsSession(t,
		"h2s", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		"s2h", `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"add","inputSchema":{"type":"object"}}]}}`,
	)
	tm := startProgram(t, []*source.Source{openFile(t, path)}, 80, 24)
	waitFor(t, tm, "ended without")
	tm.Send(press("T"))
	waitFor(t, tm, "── add")
	tm.Send(press("i"))
	waitFor(t, tm, "this session is a recording; inject needs a live tap")
	finalView(t, tm)
}

// On a live tap, i on a tool opens the composer on a tools/call of it:
// its arguments the skeleton of its inputSchema (required first, each a
// placeholder of its type), with the _meta the session's requests carry
// on revision 2026-07-28; the call sent shows in the pane's counts.
func TestToolsPaneOpensTheComposerOnACallOfTheSelectedTool(t *testing.T) {
	info, host := startLiveTapWith(t, tap.Options{Argv: answeringServer, Record: true, Path: filepath.Join(t.TempDir(), "live.jsonl"), Timeout: time.Minute})
	src, err := source.OpenLive(info, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	const meta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	io.WriteString(host, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":`+meta+`}}`+"\n")
	tm := startProgram(t, []*source.Source{src}, 200, 50)
	waitFor(t, tm, "tools/list", "live")
	tm.Send(press("T"))
	waitFor(t, tm, "── echo", "1 listed")
	tm.Send(press("i"))
	waitFor(t, tm, `"method":"tools/call","params":{"name":"echo","arguments":{"message":"<string>","note":"<string>","times":0},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026`,
		"template tools/call echo", "to the server, as if from the host")
	tm.Send(ctrl(tea.KeyCtrlS))
	waitFor(t, tm, "ctrl+s again sends it anyway")
	tm.Send(ctrl(tea.KeyCtrlS))
	waitFor(t, tm, "its answer is captured")
	waitRecorded(t, src, `"src":"inject","kind":"request","id":"rpctap-1","method":"tools/call"`)
	tm.Send(press("esc"))
	tm.Send(press("T"))
	waitFor(t, tm, "1 listed (tools/list result #3); tool 1 of 1")
	finalView(t, tm)
	// The pane's snapshot has the call: the host's own calls and the
	// user's count alike.
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	p := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model).view().tools
	if len(p.snap.Tools) != 1 || p.snap.Tools[0].Calls != 1 {
		t.Errorf("after the call, the pane's tools: %+v", p.snap.Tools)
	}
}

// The selected tool stays selected when a new snapshot moves it (a new
// list, an unlisted tool called), and its definition scrolls back to the
// top only when another tool is selected.
func TestToolsPaneKeepsTheSelectedToolAcrossSnapshots(t *testing.T) {
	p := newToolsPane(newCommon(asciiRenderer()))
	p.SetSize(80, 20)
	stats := func(names ...string) classify.ToolUse {
		u := classify.ToolUse{Listed: true, ListSeq: 2}
		for _, n := range names {
			u.Tools = append(u.Tools, classify.ToolStat{Name: n, Seq: 2, Def: []byte(`{"name":"` + n + `","inputSchema":{"type":"object"}}`)})
		}
		return u
	}
	p.take(stats("a", "b", "c"))
	p.pick(2)
	p.top = 1
	p.take(stats("a", "c", "b", "d"))
	if p.sel != 1 || p.name != "c" || p.top != 1 {
		t.Errorf("after c moved up: selected %d (%q), scrolled to %d", p.sel, p.name, p.top)
	}
	p.take(stats("a", "b"))
	if p.sel != 0 || p.name != "a" || p.top != 0 {
		t.Errorf("after c went: selected %d (%q), scrolled to %d", p.sel, p.name, p.top)
	}
}

// The pane fits whatever height it is given: the title and column heads
// first, then as many tools as fit, then the selected tool.
func TestToolsPaneFitsAnyHeight(t *testing.T) {
	p := newToolsPane(newCommon(asciiRenderer()))
	u := classify.ToolUse{Listed: true, ListSeq: 2}
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		u.Tools = append(u.Tools, classify.ToolStat{Name: n, Seq: 2, Def: []byte(`{"name":"` + n + `","description":"d","inputSchema":{"type":"object"}}`)})
	}
	p.take(u)
	for h := 1; h <= 12; h++ {
		p.SetSize(40, h)
		if got := strings.Count(p.View(), "\n") + 1; got > h {
			t.Errorf("at height %d the pane is %d lines:\n%s", h, got, p.View())
		}
	}
}
