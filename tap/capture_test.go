package tap

import (
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
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
