package tui

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tap"
)

// openLiveComposer runs the view on a live tap (cat as the server) and
// opens the composer with i.
func openLiveComposer(t *testing.T, w, h int) (*teatest.TestModel, *source.Source) {
	t.Helper()
	return composerAfter(t, w, h)
}

func ctrl(k tea.KeyType) tea.KeyMsg { return tea.KeyMsg{Type: k} }

// The preview follows the text as it is typed: kind, findings, the strict
// answer, the framing; q typed into the composer is text, not quit.
func TestComposerPreviewsTheFrameAsTypedAndKeepsEveryKey(t *testing.T) {
	tm, _ := openLiveComposer(t, 140, 40)
	typeText(tm, `{"jsonrpc":"2.0","id":"q","method":"k/?"}`)
	waitFor(t, tm, "preview: request", "a strict server sends no error back", "line, ended by a newline")
	// The same with no method: a strict server must refuse it.
	tm.Send(ctrl(tea.KeyCtrlA))
	typeText(tm, `x`)
	waitFor(t, tm, "preview: not-json", "a strict server answers", "must refuse")
	// Sent to the host, the same bytes are output a host ignores.
	tm.Send(ctrl(tea.KeyCtrlD))
	waitFor(t, tm, "to the host, as if from the server", "preview: not-json · findings not-json · a strict host sends no error back")
	fm := finalCompose(t, tm)
	if !strings.Contains(fm, `x{"jsonrpc":"2.0","id":"q","method":"k/?"}`) {
		t.Errorf("the text typed (with its q, j, k, / and ?) is not in the composer:\n%s", fm)
	}
}

// Under auto framing each direction frames as its sender does: a frame
// toward a server whose host sends Content-Length frames previews with a
// Content-Length header, one toward the host, whose server writes lines,
// as a line; toward a side that has sent nothing yet, a frame is framed
// as the other side frames, as the tap frames it.
func TestComposerPreviewsEachDirectionInItsOwnFraming(t *testing.T) {
	for _, c := range []struct {
		server, says string
		toHost       string // the preview's framing of a frame toward the host
	}{
		{`echo '{"jsonrpc":"2.0","method":"hello"}'; cat >/dev/null`, "hello", "line, ended by a newline"},
		{"cat >/dev/null", "initialize", "Content-Length: 49"},
	} {
		info, host := startLiveTapWith(t, tap.Options{Record: true, Path: filepath.Join(t.TempDir(), "live.jsonl"), Framing: classify.FramingAuto,
			Argv: []string{"sh", "-c", c.server}})
		src, err := source.OpenLive(info, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(src.Close)
		tm := startProgram(t, []*source.Source{src}, 140, 40)
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
		io.WriteString(host, fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
		waitFor(t, tm, "initialize", c.says, "live")
		// The tap's framing note of the host's frames, indexed.
		for deadline := time.Now().Add(15 * time.Second); src.Index.Framings().H2S != classify.FramingLSP; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no framing note of the host's Content-Length frames indexed after 15 s")
			}
		}
		tm.Send(press("i"))
		typeText(tm, `{"jsonrpc":"2.0","id":"rpctap-1","method":"ping"}`)
		waitFor(t, tm, "to the server, as if from the host", "preview: request", "Content-Length: 49")
		tm.Send(ctrl(tea.KeyCtrlD))
		waitFor(t, tm, "to the host, as if from the server", c.toHost)
		finalCompose(t, tm)
	}
}

// finalCompose leaves the composer with esc, quits, and returns the last
// view seen before leaving it.
func finalCompose(t *testing.T, tm *teatest.TestModel) string {
	t.Helper()
	// q did not quit: the program is still running, and typed q shows.
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	return tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).View()
}

// A frame a strict peer must refuse is sent only on a second ctrl+s, after
// a one-line warning; it then reaches the server.
func TestComposerWarnsOnceThenSendsThroughTheLiveTap(t *testing.T) {
	tm, src := openLiveComposer(t, 140, 40)
	typeText(tm, `{"jsonrpc":"2.0","id":{"n":1},"method":"composed-bad-id"}`)
	waitFor(t, tm, "preview: invalid", "bad-id")
	tm.Send(ctrl(tea.KeyCtrlS))
	waitFor(t, tm, "ctrl+s again sends it anyway")
	tm.Send(ctrl(tea.KeyCtrlS))
	waitFor(t, tm, "sent the frame to the server")
	// cat, the server, read it: it echoes it back, and the tap records
	// the injected frame and cat's copy.
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(src.Path)
		if n := bytes.Count(b, []byte("composed-bad-id")); n >= 2 && bytes.Contains(b, []byte(`"src":"inject"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never echoed the injected frame; the session holds:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	finalCompose(t, tm)
}

// A recording has no tap to inject into: i says so.
func TestComposerOfARecordingSaysInjectNeedsALiveTap(t *testing.T) {
	tm := openDemo(t, 140, 40)
	tm.Send(press("i"))
	waitFor(t, tm, "this session is a recording; inject needs a live tap")
	finalView(t, tm)
}

// The composer fits 80×24, its preview and warning cut to the width.
func TestComposerFitsTheDefaultTerminal(t *testing.T) {
	tm, _ := openLiveComposer(t, 80, 24)
	typeText(tm, `{"jsonrpc":"2.0","id":{"n":1},"method":"`+strings.Repeat("long-", 30)+`"}`)
	waitFor(t, tm, "preview: invalid")
	view := finalCompose(t, tm)
	checkFits(t, view, 80, 24)
	if !strings.Contains(view, "ctrl+s send") {
		t.Errorf("the footer does not show the composer's keys:\n%s", view)
	}
}

// openLiveWithRequest runs the view on a live tap (cat as the server)
// whose host sent one request, which cat echoes back, and selects the
// host's request.
func openLiveWithRequest(t *testing.T) *teatest.TestModel {
	t.Helper()
	return openLiveWith(t, `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"echo"}}`)
}

// openLiveWith is openLiveWithRequest with the host's request given.
func openLiveWith(t *testing.T, request string) *teatest.TestModel {
	t.Helper()
	tm, _, host := liveView(t, 140, 40)
	io.WriteString(host, request+"\n")
	waitFor(t, tm, "← request")
	tm.Send(press("g")) // the host's request, the first frame; keys act in order
	return tm
}

// R (reply to this) opens the composer on a response with the request's
// id, going back the other way: the empty result that fits its method
// (a tools/call's content).
func TestReplyToARequestFillsTheComposerWithItsID(t *testing.T) {
	tm := openLiveWithRequest(t)
	tm.Send(press("R"))
	waitFor(t, tm, `{"jsonrpc":"2.0","id":41,"result":{"content":[]}}`, "to the host, as if from the server", "preview: response")
	finalCompose(t, tm)
}

// I (resend this) opens the composer on the same frame with a fresh id,
// going the same way.
func TestResendARequestFillsTheComposerWithAFreshID(t *testing.T) {
	tm := openLiveWithRequest(t)
	tm.Send(press("I"))
	waitFor(t, tm, `{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo"}}`, "to the server, as if from the host", "preview: request")
	finalCompose(t, tm)
}

// In the composer, ctrl+k lists the catalog with each entry's rule; enter
// fills the composer with the entry, to edit before sending.
func TestCatalogPickFillsTheComposer(t *testing.T) {
	tm, _ := openLiveComposer(t, 140, 40)
	tm.Send(ctrl(tea.KeyCtrlK))
	waitFor(t, tm, "null-id-request", "object-id", "A request id must not be null")
	tm.Send(press("j")) // object-id; j moves in the list, it types nothing
	tm.Send(press("enter"))
	waitFor(t, tm, `{"jsonrpc":"2.0","id":{"n":1},"method":"ping"}`, "preview: invalid", "object-id: A strict server answers -32600")
	view := finalCompose(t, tm)
	if strings.Contains(view, `j{"jsonrpc"`) {
		t.Errorf("j typed into the text while the catalog showed:\n%s", view)
	}
}

// In the composer, ctrl+e opens the text in $EDITOR, in a file only the
// user can read, and the text the editor leaves comes back.
func TestEditorEditsTheComposersText(t *testing.T) {
	dir := t.TempDir()
	script := dir + "/editor"
	// The editor checks it got the composer's text, and writes the
	// file's mode into the frame it leaves.
	os.WriteFile(script, []byte(`#!/bin/sh
grep -q typed-here "$1" || exit 3
printf '{"jsonrpc":"2.0","id":"mode-%s","method":"from-editor"}\n' "$(stat -c %a "$1")" > "$1"
`), 0o700)
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", script)
	tm, _ := openLiveComposer(t, 140, 40)
	typeText(tm, "typed-here")
	waitFor(t, tm, "preview: not-json")
	tm.Send(ctrl(tea.KeyCtrlE))
	waitFor(t, tm, `{"jsonrpc":"2.0","id":"mode-600","method":"from-editor"}`, "preview: request")
	finalCompose(t, tm)
}

// A text with a raw escape (\x0a inside a frame on a newline-framed stream)
// goes to the tap as the bytes typed, raw: the server reads two frames,
// each recorded as injected.
func TestComposerSendsRawEscapesAsTheBytesTyped(t *testing.T) {
	tm, src := openLiveComposer(t, 140, 40)
	typeText(tm, `{"jsonrpc":"2.0","method":"raw-a\x0a","params":"raw-b"}`)
	waitFor(t, tm, "2 frames")
	tm.Send(ctrl(tea.KeyCtrlS))
	waitFor(t, tm, "ctrl+s again sends it anyway")
	tm.Send(ctrl(tea.KeyCtrlS))
	waitFor(t, tm, "sent the frame to the server")
	waitRecorded(t, src, `"src":"inject","kind":"not-json","frame":"{\"jsonrpc\":\"2.0\",\"method\":\"raw-a"`, `"src":"inject","kind":"not-json","frame":"\",\"params\":\"raw-b\"}"`)
	finalCompose(t, tm)
}

// waitRecorded waits until the session file of src holds each of what.
func waitRecorded(t *testing.T, src *source.Source, what ...string) []byte {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, _ := os.ReadFile(src.Path)
		all := true
		for _, w := range what {
			all = all && bytes.Contains(b, []byte(w))
		}
		if all {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session never held %q; it holds:\n%s", what, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A partial frame (\c: no newline after it) is refused with the reason on
// screen; a second ctrl+s forces it, and the tap records it as partial.
func TestComposerRefusesAPartialFrameUntilForced(t *testing.T) {
	tm, src := openLiveComposer(t, 140, 40)
	typeText(tm, `{"jsonrpc":"2.0","method":"half"\c`)
	waitFor(t, tm, "Refused unless forced", "no line feed after them")
	tm.Send(ctrl(tea.KeyCtrlS))
	waitFor(t, tm, "ctrl+s again forces this partial frame")
	if b, _ := os.ReadFile(src.Path); bytes.Contains(b, []byte("half")) {
		t.Fatalf("the partial frame was sent on the first ctrl+s:\n%s", b)
	}
	tm.Send(ctrl(tea.KeyCtrlS))
	waitFor(t, tm, "sent the frame to the server")
	waitRecorded(t, src, `"src":"inject","partial":true`, `half`)
	finalCompose(t, tm)
}

// answeringServer answers tools/list with one tool, echo (message
// required, note optional), and a ping with a string id with an empty
// result; it echoes every other line back, as cat does.
var answeringServer = []string{"sed", "-u",
	`s/.*"id":\([0-9]*\),"method":"tools\/list".*/{"jsonrpc":"2.0","id":\1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"note":{"type":"string"},"message":{"type":"string"},"times":{"type":"integer"}},"required":["message"]}}]}}/;` +
		`s/.*"id":"\([^"]*\)","method":"ping".*/{"jsonrpc":"2.0","id":"\1","result":{}}/`}

// openAnswering runs the view on a live tap in front of answeringServer,
// after the host listed the tools, and opens the composer.
func openAnswering(t *testing.T, w, h int) (*teatest.TestModel, *source.Source) {
	t.Helper()
	info, host := startLiveTapWith(t, tap.Options{Argv: answeringServer, Record: true, Path: filepath.Join(t.TempDir(), "live.jsonl"), Timeout: time.Minute})
	src, err := source.OpenLive(info, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	io.WriteString(host, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n")
	tm := startProgram(t, []*source.Source{src}, w, h)
	waitFor(t, tm, "tools/list", "live")
	tm.Send(press("i"))
	waitFor(t, tm, "to the server, as if from the host")
	return tm, src
}

// In the composer, ctrl+t lists a template for each tool of the last
// tools/list result; enter fills the composer with a tools/call whose
// arguments are the tool's inputSchema as a skeleton, required first, types
// as placeholders.
func TestTemplatePickFillsAToolCallWithItsArgumentSkeleton(t *testing.T) {
	tm, _ := openAnswering(t, 160, 40)
	tm.Send(ctrl(tea.KeyCtrlT))
	waitFor(t, tm, "tools/call echo", "tools/list")
	tm.Send(press("j")) // tools/list, then tools/call echo
	tm.Send(press("enter"))
	waitFor(t, tm, `"method":"tools/call","params":{"name":"echo","arguments":{"message":"<string>","note":"<string>","times":0}}}`, "preview: request", "template tools/call echo")
	finalCompose(t, tm)
}

// A request sent from the view has its answer captured: the host never gets
// it, the list shows it CAPTURED, paired with the injected request, both
// rows with its latency. Sent again, the same text goes with a fresh id.
func TestCapturedReplyShowsPairedWithItsLatency(t *testing.T) {
	tm, src := openAnswering(t, 160, 40)
	tm.Send(ctrl(tea.KeyCtrlT))
	waitFor(t, tm, "tools/call echo")
	tm.Send(press("enter")) // tools/list: a request with a fresh id
	waitFor(t, tm, "template tools/list")
	tm.Send(ctrl(tea.KeyCtrlA))
	for range 200 {
		tm.Send(tea.KeyMsg{Type: tea.KeyDelete})
	}
	typeText(tm, `{"jsonrpc":"2.0","id":"rpctap-1","method":"ping"}`)
	waitFor(t, tm, "preview: request")
	tm.Send(ctrl(tea.KeyCtrlS))
	waitFor(t, tm, `sent "rpctap-1" to the server; its answer is captured`)
	b := waitRecorded(t, src, `"captured":true`)
	if !bytes.Contains(b, []byte(`"captured":true,"kind":"response","id":"rpctap-1"`)) {
		t.Fatalf("the answer to rpctap-1 is not recorded as captured:\n%s", b)
	}
	tm.Send(press("esc"))
	x := src.Index
	var req, resp sessions.Entry
	deadline := time.Now().Add(15 * time.Second)
	for resp.Pair == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		for i := range x.Len() {
			switch e := x.At(i); {
			case e.ID == `"rpctap-1"` && e.Kind == classify.KindRequest:
				req = e
			case e.ID == `"rpctap-1"` && e.Captured:
				resp = e
			}
		}
	}
	if resp.Pair != req.Seq || req.Pair != resp.Seq || resp.Latency <= 0 {
		t.Fatalf("the captured answer %+v is not paired with the injected request %+v", resp, req)
	}
	lat := fmtLatency(resp.Latency)
	// The rows may have been drawn into output an earlier wait read, and
	// the renderer redraws only lines that change: a resize redraws all.
	tm.Send(tea.WindowSizeMsg{Width: 160, Height: 40})
	waitFor(t, tm, "+request", "CAPTURED", lat)
	view := finalView(t, tm)
	if strings.Count(view, lat) < 2 {
		t.Errorf("the latency %s shows on fewer than both rows of the pair:\n%s", lat, view)
	}
}

// In the composer, ctrl+o turns forwarding on for the next frame: its
// answer goes on to the host, which never sent the request (an unmatched
// response, on purpose); the send turns it off again.
func TestForwardToggleSendsTheAnswerOnToTheHost(t *testing.T) {
	tm, src := openAnswering(t, 160, 40) // the answer is captured by default
	tm.Send(ctrl(tea.KeyCtrlO))
	waitFor(t, tm, "answer FORWARDED to the host (ctrl+o)")
	typeText(tm, `{"jsonrpc":"2.0","id":"fwd-1","method":"ping"}`)
	waitFor(t, tm, "preview: request")
	tm.Send(ctrl(tea.KeyCtrlS))
	waitFor(t, tm, `sent "fwd-1" to the server; its answer goes on to the host`, "answer captured (ctrl+o)")
	b := waitRecorded(t, src, `"kind":"response","id":"fwd-1"`)
	if bytes.Contains(b, []byte(`"captured":true`)) {
		t.Errorf("the answer was captured with forwarding on:\n%s", b)
	}
	finalCompose(t, tm)
}

// The composer's ids are chosen when it sends, not when it opened: a
// template sent twice goes with two ids.
func TestComposerGivesATemplateAFreshIDEachSend(t *testing.T) {
	tm, src := openAnswering(t, 160, 40)
	tm.Send(ctrl(tea.KeyCtrlT))
	waitFor(t, tm, "tools/call echo")
	tm.Send(press("enter")) // tools/list
	waitFor(t, tm, `"id":"rpctap-1","method":"tools/list"`)
	tm.Send(ctrl(tea.KeyCtrlS))
	waitFor(t, tm, `sent "rpctap-1"`, `the id "rpctap-1" was sent already: ctrl+s sends this with a fresh one`)
	tm.Send(ctrl(tea.KeyCtrlS))
	waitFor(t, tm, `sent "rpctap-`)
	b := waitRecorded(t, src, `"src":"inject","kind":"request","id":"rpctap-1"`)
	for deadline := time.Now().Add(15 * time.Second); bytes.Count(b, []byte(`"src":"inject","kind":"request"`)) < 2 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, _ = os.ReadFile(src.Path)
	}
	ids := regexp.MustCompile(`"src":"inject","kind":"request","id":"(rpctap-\d+)","method":"tools/list"`).FindAllSubmatch(b, -1)
	if len(ids) != 2 || bytes.Equal(ids[0][1], ids[1][1]) {
		t.Fatalf("the template sent twice went with ids %q; want two different ones:\n%s", ids, b)
	}
	if view := finalCompose(t, tm); !strings.Contains(view, `"id":"`+string(ids[1][1])+`","method":"tools/list"`) {
		t.Errorf("the text does not show the id %s it was sent with:\n%s", ids[1][1], view)
	}
}

// A large text is previewed in a command, off Update; the preview comes
// when it is ready.
func TestComposerPreviewsALargeFrameOffUpdate(t *testing.T) {
	tm, _ := openLiveComposer(t, 140, 40)
	big := `{"jsonrpc":"2.0","method":"big","params":{"pad":"` + strings.Repeat("x", previewInline) + `"}}`
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(big), Paste: true})
	waitFor(t, tm, "preview: notification")
	finalCompose(t, tm)
}

// liveView runs the view at w×h on a live tap with cat as its server,
// whose host writes to host.
func liveView(t *testing.T, w, h int) (tm *teatest.TestModel, src *source.Source, host io.WriteCloser) {
	t.Helper()
	info, host := startLiveTap(t)
	src, err := source.OpenLive(info, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	return startProgram(t, []*source.Source{src}, w, h), src, host
}

// composerAfter runs the view at w×h on a live tap (cat as the server)
// whose host wrote frames, which cat echoes (a request and its answer
// pair as the server's), and opens the composer once the last shows.
// openLiveComposer is it with no frames.
func composerAfter(t *testing.T, w, h int, frames ...string) (*teatest.TestModel, *source.Source) {
	t.Helper()
	tm, src, host := liveView(t, w, h)
	waitFor(t, tm, "live")
	if len(frames) > 0 {
		io.WriteString(host, strings.Join(frames, "\n")+"\n")
		waitFor(t, tm, fmt.Sprintf("←%d ", len(frames))) // the header counts every echo
	}
	tm.Send(press("i"))
	waitFor(t, tm, "to the server, as if from the host")
	return tm, src
}

// The composer's template picker and catalog fit 80×24 with a long method
// name, long tool names and wide (CJK) text: their rows are cut to the
// width, wide characters counted as two cells.
func TestTemplatePickerAndCatalogFitTheDefaultTerminal(t *testing.T) {
	cjk := strings.Repeat("日本語の説明文と中文的描述和한국어설명", 4)
	long := "tools/" + strings.Repeat("very-long-method-name-", 6) + cjk
	tools := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a_really_long_tool_name_` + strings.Repeat("x", 60) +
		`","description":"` + cjk + `","inputSchema":{"type":"object","properties":{"` + strings.Repeat("长参数名称", 5) + `":{"type":"string"}}}},` +
		`{"name":"` + strings.Repeat("工具名称", 10) + `","inputSchema":{"type":"object"}}]}}`
	for _, c := range []struct{ key, want string }{{"ctrl+t", "tools/call a_really_long"}, {"ctrl+k", "null-id-request"}} {
		t.Run(c.key, func(t *testing.T) {
			tm, _ := composerAfter(t, 80, 24, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, tools,
				`{"jsonrpc":"2.0","method":"`+long+`","params":{"text":"`+cjk+`"}}`)
			tm.Send(press(c.key))
			waitFor(t, tm, c.want)
			checkFits(t, finalCompose(t, tm), 80, 24)
		})
	}
}

// The composer's lists (the catalog, the templates) are no text input: each
// key of a burst acts there, as in the traffic.
func TestEveryKeyOfABurstActsInTheComposersLists(t *testing.T) {
	for _, list := range []string{"ctrl+k", "ctrl+t"} {
		t.Run(list, func(t *testing.T) {
			tm, _ := composerAfter(t, 140, 40, `{"jsonrpc":"2.0","id":1,"method":"a"}`, `{"jsonrpc":"2.0","id":2,"method":"b"}`,
				`{"jsonrpc":"2.0","id":3,"method":"c"}`, `{"jsonrpc":"2.0","id":4,"method":"d"}`)
			tm.Send(press(list))
			waitFor(t, tm, "↓/j down")
			tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jjjj")})
			tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("kjj")})
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			m := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
			c := m.view().composer
			if c == nil || c.picking == pickNone {
				t.Fatalf("the list closed")
			}
			if c.sel != 5 {
				t.Errorf("after the bursts jjjj and kjj the list's selection is %d, want 5", c.sel)
			}
		})
	}
}

// A frame with an error finding (a null id, which MCP forbids) or that
// still holds a template's "<string>" placeholder goes only on a second
// ctrl+s, the first saying why and where; a frame with neither goes at
// once, its preview saying a strict receiver sends no error back.
func TestComposerAsksASecondSendForAnErrorOrAPlaceholder(t *testing.T) {
	for _, c := range []struct {
		text string
		why  []string // in the note the first ctrl+s leaves; none: sent at once
	}{
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, []string{"ctrl+s again sends it anyway", "null-id", "MCP requires a string or a number"}},
		{`{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo","arguments":{"times":0,"message":"<string>"}}}`,
			[]string{`ctrl+s again sends it anyway: "<string>" still at params.arguments.message`}},
		{"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"b\",\"params\":{\"items\":[1,\"<string>\"]}}", []string{`frame 2: "<string>" still at params.items[1]`}},
		{`{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi <string>"}}}`, nil},
	} {
		p := newComposer(newCommon(asciiRenderer()), 1, classify.H2S, inject.Options{Profile: classify.MCP, IDs: inject.NewIDs()}, nil, map[string]bool{})
		p.SetSize(200, 10)
		p.fill(c.text, classify.H2S)
		if c.why == nil {
			if in := p.send(); in.send == nil {
				t.Errorf("%s was not sent at once: %s", c.text, p.noteText)
			}
			if v := p.previewLine(); !strings.Contains(v, "a strict server sends no error back") {
				t.Errorf("the preview of a valid request: %s", v)
			}
			continue
		}
		if in := p.send(); in.send != nil {
			t.Errorf("%s went with one ctrl+s", c.text)
			continue
		}
		for _, w := range c.why {
			if !strings.Contains(p.noteText, w) {
				t.Errorf("%s: the first ctrl+s says %q, not why (%s)", c.text, p.noteText, w)
			}
		}
		if in := p.send(); in.send == nil {
			t.Errorf("%s did not go with a second ctrl+s: %s", c.text, p.noteText)
		}
	}
}

// A tools/call whose arguments break the tool's inputSchema, as the
// session listed it, goes only on a second ctrl+s, the first naming the
// tool, the path and the keyword; valid arguments go at once.
func TestComposerAsksASecondSendForArgumentsTheToolsSchemaRefuses(t *testing.T) {
	var tools classify.Tools
	tools.SetList([]byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}]}`))
	opts := inject.Options{Profile: classify.MCP, IDs: inject.NewIDs(), Tools: tools.CheckCall}
	for _, c := range []struct {
		text string
		why  string // in the note the first ctrl+s leaves; "": sent at once
	}{
		{`{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo","arguments":{"message":42}}}`, `ctrl+s again sends it anyway: this frame: the arguments of tools/call "echo" do not validate against the tool's inputSchema: at /message, got number, want string`},
		{`{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo","arguments":{}}}`, `required`},
		{`{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, ""},
		{`{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"other","arguments":{"message":42}}}`, ""},
	} {
		p := newComposer(newCommon(asciiRenderer()), 1, classify.H2S, opts, nil, map[string]bool{})
		p.SetSize(200, 10)
		p.fill(c.text, classify.H2S)
		in := p.send()
		switch {
		case c.why == "" && in.send == nil:
			t.Errorf("%s was not sent at once: %s", c.text, p.noteText)
		case c.why != "" && in.send != nil:
			t.Errorf("%s went with one ctrl+s", c.text)
		case c.why != "" && !strings.Contains(p.noteText, c.why):
			t.Errorf("%s: the first ctrl+s says %q, not why (%s)", c.text, p.noteText, c.why)
		case c.why != "" && p.send().send == nil:
			t.Errorf("%s did not go with a second ctrl+s: %s", c.text, p.noteText)
		}
	}
}

// A catalog entry built from the session takes its revision and its
// tools: in a 2026-07-28 session whose server listed echo, bad-tool-
// arguments calls echo without the message its inputSchema requires, with
// the session's _meta, and no-meta-2026 is a tools/list with no _meta;
// in a session that listed no tools, the entry says so.
func TestCatalogEntriesFromTheSessionTakeItsRevisionAndTools(t *testing.T) {
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	pick := func(tm *teatest.TestModel, name string) {
		tm.Send(ctrl(tea.KeyCtrlK))
		waitFor(t, tm, "null-id-request")
		tm.Send(press("/"))
		typeText(tm, name)
		tm.Send(press("enter")) // ends the filter
		tm.Send(press("enter")) // picks the entry
	}
	tm, _ := composerAfter(t, 160, 40, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":`+meta+`}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}]}}`)
	pick(tm, "bad-tool-arguments")
	waitFor(t, tm, `"params":{"name":"echo","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"`, `2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, "bad-tool-arguments: A tools/call of a tool the session listed")
	pick(tm, "no-meta-2026")
	waitFor(t, tm, `{"jsonrpc":"2.0","id":"rpctap-no-meta","method":"tools/list"}`)
	finalCompose(t, tm)

	tm, _ = openLiveComposer(t, 160, 40)
	pick(tm, "bad-tool-arguments")
	waitFor(t, tm, "the session has listed no tools yet")
	finalCompose(t, tm)
}
