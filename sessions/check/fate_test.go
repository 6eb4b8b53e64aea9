package check

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// fateSession has a frame of every fate: a call the user dropped, one
// answered in its receiver's place, one edited (with its original), one
// whose hold time ran out, an injected request with its captured answer,
// an injected frame a strict server refuses (and the server's error that
// answers it), and at the end a call still owed when the server exits.
// Requests time out after 1 s.
const fateSession = "../../testdata/sessions/fates/user-actions.jsonl"

func readFateSession(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(fateSession)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// check judges by the frames' fates: a call the user dropped is no
// timeout of the server's, nor is one answered in its place; a call owed
// when the server exits is unanswered-at-end; findings about injected
// frames (and the answer that links to one) are the user's, apart, and
// leave Worst to the peers'.
func TestCheckJudgesFramesByTheirFate(t *testing.T) {
	rep, err := Run(strings.NewReader(readFateSession(t)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var peers, mine []string
	for _, f := range rep.Findings {
		s := strconv.Itoa(f.Line) + ":" + f.Code.String() + ":" + f.Severity.String()
		if f.ByUser {
			mine = append(mine, s)
		} else {
			peers = append(peers, s)
		}
		if f.Line == 14 && !(f.Fate.Src == sessions.SrcInject && strings.Contains(f.Fate.Text(), "injected by the user")) {
			t.Errorf("the finding on the injected frame has fate %+v", f.Fate)
		}
	}
	if got := strings.Join(peers, " "); got != "16:unanswered-at-end:warn" {
		t.Errorf("the peers' findings: %s; want only the call owed at the end", got)
	}
	if got := strings.Join(mine, " "); !strings.Contains(got, "14:bad-id:error") || !strings.Contains(got, "15:error-names-no-request:warn") {
		t.Errorf("the user's findings: %s; want the injected frame's bad-id and the error that answers it", got)
	}
	if rep.Worst() != classify.Warn || rep.WorstByUser() != classify.Error || rep.Count(classify.Error) != 0 {
		t.Errorf("worst %s, the user's worst %s, %d errors of the peers'", rep.Worst(), rep.WorstByUser(), rep.Count(classify.Error))
	}
}

// The user's frames are told apart however many frames with a fate come
// before them: past 200,000 held frames, an injected frame's finding is
// still the user's, and the timeout of a request the user edited keeps
// its fate and original, read while the request could still get one.
func TestCheckTellsTheUsersFramesApartPastAnyNumberOfFates(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"rpctap":"session","version":1,"id":"many","started":"2026-11-29T18:00:00Z","argv":["server"],"framing":"ndjson","profile":"mcp","timeout_ms":1000}` + "\n")
	b.WriteString(`{"t":1,"dir":"h2s","src":"edit","held":"edited","original":"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"was\":1}}","frame":"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}"}` + "\n")
	const held = 200_005
	for range held {
		b.WriteString(`{"t":2,"dir":"s2h","held":"forwarded","frame":"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}"}` + "\n")
	}
	b.WriteString(`{"t":3,"dir":"h2s","src":"inject","frame":"{\"jsonrpc\":\"2.0\",\"id\":{\"n\":1},\"method\":\"ping\"}"}` + "\n")
	b.WriteString(`{"t":5000000,"event":"exit","code":0}` + "\n")
	rep, err := Run(strings.NewReader(b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	injected, edited := 2+held+1, 2
	var sawBadID, sawTimeout bool
	for _, f := range rep.Findings {
		switch {
		case f.Line == injected && f.Code == classify.CodeBadID:
			sawBadID = true
			if !f.ByUser || f.Fate.Src != sessions.SrcInject {
				t.Errorf("the injected frame's bad-id: by user %v, fate %+v; want the user's, injected", f.ByUser, f.Fate)
			}
		case f.Line == edited && f.Code == classify.CodeTimeout:
			sawTimeout = true
			if !f.ByUser || f.Fate.Held != sessions.HeldEdited || !strings.Contains(string(f.Fate.Original), `"was":1`) {
				t.Errorf("the edited request's timeout: by user %v, fate %+v, original %s", f.ByUser, f.Fate, f.Fate.Original)
			}
		}
	}
	if !sawBadID || !sawTimeout {
		t.Fatalf("no bad-id on line %d (%v) or no timeout on line %d (%v): %+v", injected, sawBadID, edited, sawTimeout, rep.Findings)
	}
	if rep.Worst() == classify.Error {
		t.Errorf("the check fails on the user's own frame: worst %s", rep.Worst())
	}
}
