package tap

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// lateAnswers is a server that answers each request a second after it
// reads it, with the request's string id.
const lateAnswers = `while read -r l; do case $l in *'"id"'*) sleep 1; id=$(printf '%s' "$l" | sed 's/.*"id":"\([^"]*\)".*/\1/'); printf '{"jsonrpc":"2.0","id":"%s","result":{}}\n' "$id";; esac; done`

// capturedIDs are the ids of the answers the session file records as
// captured.
func capturedIDs(t *testing.T, path string) string {
	t.Helper()
	_, evs, _ := readSession(t, path)
	var ids []string
	for _, e := range evs {
		if e.Dir == classify.S2H && e.Captured {
			m := classify.Classify(e.Frame, classify.S2H, classify.JSONRPC)
			ids = append(ids, string(m.ID().Raw))
		}
	}
	return strings.Join(ids, " ")
}

// An injector that waits for its answer and gives up (its wait passed)
// still never lets the answer reach the host: the late answer is
// recorded as captured.
func TestAnAnswerTheInjectorGaveUpOnNeverReachesTheHost(t *testing.T) {
	s := startSession(t, Options{Argv: sh(lateAnswers), Framing: classify.FramingNDJSON, Record: true, Listen: true, NoRedact: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"warm","method":"ping"}`+"\n"))
	s.out.waitFor(t, "warm")
	rep, err := SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Capture: true, Wait: 100 * time.Millisecond, Frame: []byte(`{"jsonrpc":"2.0","id":"rpctap-1","method":"ping"}`)})
	if err != nil || !rep.OK || string(rep.Reply) != "null" || !strings.Contains(rep.Error, "no answer within 100ms") {
		t.Fatalf("inject: %v %+v", err, rep)
	}
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"after","method":"ping"}`+"\n"))
	s.out.waitFor(t, `"after"`) // answered after rpctap-1
	s.in.Close()
	s.wait(t, generous)
	if strings.Contains(s.out.String(), "rpctap-1") {
		t.Errorf("the host read the answer to the injected request: %q", s.out.String())
	}
	if got := capturedIDs(t, s.tap.Path()); got != `"rpctap-1"` {
		t.Errorf("answers recorded as captured: %s, want \"rpctap-1\"", got)
	}
}

// With no one waiting (keep), the answers to every whole request among
// raw bytes are captured, and a notification among them is sent as it
// is.
func TestKeptCaptureOfRawBytesKeepsTheAnswerToEachRequest(t *testing.T) {
	s := startSession(t, Options{Argv: sh(lateAnswers), Framing: classify.FramingNDJSON, Record: true, Listen: true, NoRedact: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"warm","method":"ping"}`+"\n"))
	s.out.waitFor(t, "warm")
	raw := `{"jsonrpc":"2.0","id":"rpctap-1","method":"ping"}` + "\n" + `{"jsonrpc":"2.0","method":"note"}` + "\n" + `{"jsonrpc":"2.0","id":"rpctap-2","method":"ping"}` + "\n"
	if rep, err := SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Raw: true, Capture: true, Keep: true, Frame: []byte(raw)}); err != nil || !rep.OK {
		t.Fatalf("inject: %v %+v", err, rep)
	}
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"after","method":"ping"}`+"\n"))
	s.out.waitFor(t, `"after"`)
	s.in.Close()
	s.wait(t, generous)
	if strings.Contains(s.out.String(), "rpctap-") {
		t.Errorf("the host read an answer to an injected request: %q", s.out.String())
	}
	if got := capturedIDs(t, s.tap.Path()); got != `"rpctap-1" "rpctap-2"` {
		t.Errorf("answers recorded as captured: %s", got)
	}
}

// pingsOnly is a server that answers each ping at once, with its string
// id, and never answers any other request; it says on stderr which
// request it read.
const pingsOnly = `while read -r l; do id=$(printf '%s' "$l" | sed 's/.*"id":"\([^"]*\)".*/\1/'); case $l in *'"ping"'*) printf '{"jsonrpc":"2.0","id":"%s","result":{}}\n' "$id";; *) echo "read $id" >&2;; esac; done`

// A request injected with an id the user typed, which the server never
// answers, does not keep the host's answer from it when the host later
// sends a request with the same id: the host's request takes the id
// back, and a note says so, just before it. The host's answer was
// captured, and the host waited for it for the rest of the session.
func TestAHostRequestWithTheIDOfAnUnansweredInjectionGetsItsAnswer(t *testing.T) {
	s := startSession(t, Options{Argv: sh(pingsOnly), Framing: classify.FramingNDJSON, Record: true, Listen: true, NoRedact: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"warm","method":"ping"}`+"\n"))
	s.out.waitFor(t, "warm")
	if rep, err := SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Capture: true, Keep: true, Frame: []byte(`{"jsonrpc":"2.0","id":"five","method":"never"}`)}); err != nil || !rep.OK {
		t.Fatalf("inject: %v %+v", err, rep)
	}
	s.err.waitFor(t, "read five")
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"five","method":"ping"}`+"\n"))
	s.out.waitFor(t, `"five"`)
	s.in.Close()
	s.wait(t, generous)
	if got := capturedIDs(t, s.tap.Path()); got != "" {
		t.Errorf("answers recorded as captured: %s, want none", got)
	}
	_, evs, _ := readSession(t, s.tap.Path())
	for i, e := range evs {
		if e.Kind == sessions.EventNote && strings.HasPrefix(e.Text, "the host sent the next request with the id of a request injected toward the server") {
			if i+1 == len(evs) || !strings.Contains(string(evs[i+1].Frame), `"id":"five","method":"ping"`) {
				t.Errorf("the note is not just before the host's request: %+v", evs[i:])
			}
			return
		}
	}
	t.Errorf("no note says the host took the id back: %+v", evs)
}

// An injector that waits for the answer to such a request is told, when
// the host takes its id back, that no answer will be kept for it; a host
// request with another id leaves the capture alone.
func TestAnInjectorWaitingOnAnIDTheHostTakesBackIsTold(t *testing.T) {
	s := startSession(t, Options{Argv: sh(pingsOnly), Framing: classify.FramingNDJSON, Record: true, Listen: true, NoRedact: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"warm","method":"ping"}`+"\n"))
	s.out.waitFor(t, "warm")
	type result struct {
		rep InjectReply
		err error
	}
	got := make(chan result, 1)
	go func() {
		rep, err := SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Capture: true, Wait: generous, Frame: []byte(`{"jsonrpc":"2.0","id":"five","method":"never"}`)})
		got <- result{rep, err}
	}()
	s.err.waitFor(t, "read five")
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"other","method":"ping"}`+"\n"))
	s.out.waitFor(t, `"other"`)
	select {
	case r := <-got:
		t.Fatalf("a host request with another id ended the capture: %v %+v", r.err, r.rep)
	default:
	}
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"five","method":"ping"}`+"\n"))
	select {
	case r := <-got:
		if r.err != nil || !r.rep.OK || string(r.rep.Reply) != "null" || !strings.Contains(r.rep.Error, "the host sent a request of its own with this id") {
			t.Errorf("the injector got %v %+v; want told that the host took the id", r.err, r.rep)
		}
	case <-time.After(generous):
		t.Fatal("the injector was not told the host took its id back")
	}
	s.out.waitFor(t, `"five"`)
	s.in.Close()
	s.wait(t, generous)
}

// While a capture waits, every frame of the answering side is offered to
// it; a frame whose id it does not wait for (a notification, an answer
// to the host) is only looked at for its id, not judged whole, so it
// costs no allocation. Each such frame was classified.
func TestAFrameNoCaptureWaitsForIsOnlyLookedAtForItsID(t *testing.T) {
	c := newCaptureSet()
	if _, err := c.add(classify.RawID([]byte(`"rpctap-1"`)).Key()); err != nil {
		t.Fatal(err)
	}
	frames := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}`),
		[]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`),
	}
	for _, f := range frames {
		if n := testing.AllocsPerRun(100, func() { c.take(f, 0) }); n != 0 || !c.active() {
			t.Errorf("offering %s to the capture: %.0f allocations, capture waiting %v; want none, and it waiting still", f, n, c.active())
		}
	}
	if c.take([]byte(`{"jsonrpc":"2.0","id":"rpctap-1","method":"ping"}`), 0) || !c.active() {
		t.Error("a request with the id the capture waits for was taken for its answer")
	}
	if !c.take([]byte(`{"jsonrpc":"2.0","id":"rpctap-1","result":{}}`), 0) || c.active() {
		t.Error("the answer the capture waits for was not taken")
	}
}

// Options.Answers gets each request injected toward the server with no
// one waiting for its answer (keep), raw bytes' requests each, with its
// answer; never one whose injector waits for the answer itself.
func TestAnswersGetsTheKeptInjectionsAndTheirAnswers(t *testing.T) {
	told := make(chan string, 8)
	opts := Options{Argv: sh(pingsOnly), Framing: classify.FramingNDJSON, Record: true, Listen: true, NoRedact: true,
		Answers: func(req, ans []byte) { told <- string(req) + " " + string(ans) }}
	s := startSession(t, opts)
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"warm","method":"ping"}`+"\n"))
	s.out.waitFor(t, "warm")
	if rep, err := SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Capture: true, Frame: []byte(`{"jsonrpc":"2.0","id":"waited","method":"ping"}`)}); err != nil || !rep.OK || !strings.Contains(string(rep.Reply), `"waited"`) {
		t.Fatalf("inject: %v %+v", err, rep)
	}
	raw := `{"jsonrpc":"2.0","id":"rpctap-1","method":"ping"}` + "\n" + `{"jsonrpc":"2.0","method":"note"}` + "\n" + `{"jsonrpc":"2.0","id":"rpctap-2","method":"ping"}` + "\n"
	if rep, err := SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Raw: true, Capture: true, Keep: true, Frame: []byte(raw)}); err != nil || !rep.OK {
		t.Fatalf("inject: %v %+v", err, rep)
	}
	var got []string
	for len(got) < 2 {
		select {
		case s := <-told:
			got = append(got, s)
		case <-time.After(generous):
			t.Fatalf("Answers got %q, want both kept pings", got)
		}
	}
	sort.Strings(got)
	for i, id := range []string{"rpctap-1", "rpctap-2"} {
		if want := `{"jsonrpc":"2.0","id":"` + id + `","method":"ping"} {"jsonrpc":"2.0","id":"` + id + `","result":{}}`; got[i] != want {
			t.Errorf("Answers got %s, want %s", got[i], want)
		}
	}
	s.in.Close()
	s.wait(t, generous)
	select {
	case s := <-told:
		t.Errorf("Answers got %s, whose injector waited for it", s)
	default:
	}
}
