package tui

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
)

// openLiveComposer runs the view on a live tap (cat as the server) and
// opens the composer with i.
func openLiveComposer(t *testing.T, w, h int) (*teatest.TestModel, *Source) {
	t.Helper()
	info, _ := startLiveTap(t)
	src, err := OpenLive(info, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	tm := startProgram(t, []*Source{src}, w, h)
	waitFor(t, tm, "live")
	tm.Send(press("i"))
	waitFor(t, tm, "to the server, as if from the host")
	return tm, src
}

func ctrl(k tea.KeyType) tea.KeyMsg { return tea.KeyMsg{Type: k} }

// issue 11 point 1: the preview follows the text as it is typed: kind,
// findings, the strict answer, the framing; q typed into the composer is
// text, not quit.
func TestComposerPreviewsTheFrameAsTypedAndKeepsEveryKey(t *testing.T) {
	tm, _ := openLiveComposer(t, 140, 40)
	typeText(tm, `{"jsonrpc":"2.0","id":"q","method":"k/?"}`)
	waitFor(t, tm, "preview: request", "owes no answer", "line, ended by a newline")
	// The same with no method: a strict server must refuse it.
	tm.Send(ctrl(tea.KeyCtrlA))
	typeText(tm, `x`)
	waitFor(t, tm, "preview: not-json", "a strict server answers", "must refuse")
	// Sent to the host, the same bytes are output a host ignores.
	tm.Send(ctrl(tea.KeyCtrlD))
	waitFor(t, tm, "to the host, as if from the server", "preview: not-json · findings not-json · owes no answer")
	fm := finalCompose(t, tm)
	if !strings.Contains(fm, `x{"jsonrpc":"2.0","id":"q","method":"k/?"}`) {
		t.Errorf("the text typed (with its q, j, k, / and ?) is not in the composer:\n%s", fm)
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

// issue 11 point 1: a frame a strict peer must refuse is sent only on a
// second ctrl+s, after a one-line warning; it then reaches the server.
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

// issue 11 point 1: a recording has no tap to inject into: i says so.
func TestComposerOfARecordingSaysInjectNeedsALiveTap(t *testing.T) {
	tm := openDemo(t, 140, 40)
	tm.Send(press("i"))
	waitFor(t, tm, "this session is a recording; inject needs a live tap")
	finalView(t, tm)
}

// issue 11 point 1 (and issue 10 point 14): the composer fits 80×24,
// its preview and warning cut to the width.
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
	info, host := startLiveTap(t)
	src, err := OpenLive(info, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	tm := startProgram(t, []*Source{src}, 140, 40)
	io.WriteString(host, `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"echo"}}`+"\n")
	waitFor(t, tm, "← request")
	tm.Send(press("g")) // the host's request, the first frame; keys act in order
	return tm
}

// issue 11 point 2: "reply to this" opens the composer on a response
// with the request's id, going back the other way.
func TestReplyToARequestFillsTheComposerWithItsID(t *testing.T) {
	tm := openLiveWithRequest(t)
	tm.Send(press("R"))
	waitFor(t, tm, `{"jsonrpc":"2.0","id":41,"result":{}}`, "to the host, as if from the server", "preview: response")
	finalCompose(t, tm)
}

// issue 11 point 2: "resend this" opens the composer on the same frame
// with a fresh id, going the same way.
func TestResendARequestFillsTheComposerWithAFreshID(t *testing.T) {
	tm := openLiveWithRequest(t)
	tm.Send(press("I"))
	waitFor(t, tm, `{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo"}}`, "to the server, as if from the host", "preview: request")
	finalCompose(t, tm)
}

// issue 11 point 2: ctrl+k lists the catalog with each entry's rule;
// enter fills the composer with the entry, to edit before sending.
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

// issue 11 point 1: ctrl+e opens the text in $EDITOR, in a file only the
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

// issue 11 point 1: the tap's refusal shows in the status line, as the
// tap words it: a line feed inside a frame on a newline-framed stream.
func TestComposerShowsTheTapsRefusal(t *testing.T) {
	tm, _ := openLiveComposer(t, 140, 40)
	typeText(tm, `{"jsonrpc":"2.0","method":"a\x0ab"}`)
	waitFor(t, tm, "2 frames")
	tm.Send(ctrl(tea.KeyCtrlS))
	waitFor(t, tm, "ctrl+s again sends it anyway")
	tm.Send(ctrl(tea.KeyCtrlS))
	waitFor(t, tm, "the tap refused the frame: the frame holds a line feed")
	finalCompose(t, tm)
}

// issue 11 point 1: a large text is previewed in a command, off Update;
// the preview comes when it is ready.
func TestComposerPreviewsALargeFrameOffUpdate(t *testing.T) {
	tm, _ := openLiveComposer(t, 140, 40)
	big := `{"jsonrpc":"2.0","method":"big","params":{"pad":"` + strings.Repeat("x", previewInline) + `"}}`
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(big), Paste: true})
	waitFor(t, tm, "preview: notification")
	finalCompose(t, tm)
}
