package tap

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// bigAnswers is a server that answers each request at once with its
// string id, but "rpctap-big" with an answer of BIG bytes of text; with
// LAST set, its id comes after its result.
const bigAnswers = `while read -r l; do id=$(printf '%s' "$l" | sed 's/.*"id":"\([^"]*\)".*/\1/'); case $l in
*'"rpctap-big"'*)
	if [ -n "$LAST" ]; then printf '{"jsonrpc":"2.0","result":{"text":"'; else printf '{"jsonrpc":"2.0","id":"rpctap-big","result":{"text":"'; fi
	head -c "$BIG" /dev/zero | tr '\0' A
	if [ -n "$LAST" ]; then printf '"},"id":"rpctap-big"}\n'; else printf '"}}\n'; fi;;
*'"id"'*) printf '{"jsonrpc":"2.0","id":"%s","result":{}}\n' "$id";;
esac; done`

// The answer to a captured injected request never reaches the host,
// however large: one larger than the tap holds is recorded whole, marked
// captured with its kind and id, and the injector is told it came and
// how large it is. Its id may come first (over the recorder's parse
// limit too) or after its result.
func TestAnAnswerLargerThanTheTapHoldsToACapturedRequestNeverReachesTheHost(t *testing.T) {
	cases := []struct {
		name string
		big  int
		last bool
	}{
		{"id first, over the hold limit", 3 << 20, false},
		{"id after its result, over the hold limit", 3 << 20, true},
		{"id first, over the parse limit", parseLimit + 1<<20, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.big > parseLimit && (testing.Short() || raceEnabled) {
				t.Skip("moves tens of MiB")
			}
			argv := sh(fmt.Sprintf("BIG=%d LAST=%s; export BIG LAST; %s", c.big, map[bool]string{true: "1"}[c.last], bigAnswers))
			s := startSession(t, Options{Argv: argv, Framing: classify.FramingNDJSON, Record: true, Listen: true, NoRedact: true})
			s.write(t, []byte(`{"jsonrpc":"2.0","id":"warm","method":"ping"}`+"\n"))
			s.out.waitFor(t, "warm")
			rep, err := SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Capture: true, Wait: generous,
				Frame: []byte(`{"jsonrpc":"2.0","id":"rpctap-big","method":"tools/call","params":{"name":"x"}}`)})
			if err != nil || !rep.OK {
				t.Fatalf("inject: %v %+v", err, rep)
			}
			body := int64(len(`{"jsonrpc":"2.0","id":"rpctap-big","result":{"text":""}}`) + c.big)
			if !rep.TooLarge || rep.Size != body || string(rep.Reply) != "null" || !strings.Contains(rep.Error, "recorded in the session file") {
				t.Errorf("the injector got TooLarge %v, size %d, reply %.40s, error %q; want told that the answer of %d bytes came and is in the session file",
					rep.TooLarge, rep.Size, rep.Reply, rep.Error, body)
			}
			s.write(t, []byte(`{"jsonrpc":"2.0","id":"after","method":"ping"}`+"\n"))
			s.out.waitFor(t, `"after"`)
			s.in.Close()
			s.wait(t, generous)
			if out := s.out.bytes(); bytes.Contains(out, []byte("rpctap-big")) || len(out) > 1<<10 {
				t.Errorf("the host read %d bytes (%q…), the answer to the injected request among them", len(out), clip(out, 200))
			}
			_, evs, skipped := readSession(t, s.tap.Path())
			if skipped != 0 {
				t.Errorf("the reader skipped %d lines of the session file", skipped)
			}
			if got := replay(evs, classify.S2H, classify.FramingNDJSON); !bytes.Equal(got, s.out.bytes()) {
				t.Errorf("the frames recorded for the host: %s", firstDiff(got, s.out.bytes()))
			}
			var kept *sessions.Event
			for i := range evs {
				if evs[i].Dir == classify.S2H && evs[i].Captured {
					kept = &evs[i]
				}
			}
			if kept == nil || int64(len(kept.Frame)) != body {
				t.Fatalf("the session file records no captured answer of %d bytes", body)
			}
			if m := classify.Classify(kept.Frame, classify.S2H, classify.JSONRPC); m.Kind != classify.KindResponse || string(m.ID().Raw) != `"rpctap-big"` {
				t.Errorf("the captured record holds %s with id %s", m.Kind, m.ID().Raw)
			}
		})
	}
}

// bigFrames is a server that, once it reads a request with id "go",
// writes frames larger than the tap holds: the answer to the host's
// request "h1" with its id after its result, a request of its own with
// the id of the capture that waits ("rpctap-big") and its method last,
// and a line that is not JSON; each gets an answer "done" after it.
const bigFrames = `big() { head -c 3145728 /dev/zero | tr '\0' A; }
while read -r l; do case $l in
*'"go"'*)
	printf '{"jsonrpc":"2.0","result":{"text":"'; big; printf '"},"id":"h1"}\n'
	printf '{"jsonrpc":"2.0","params":{"text":"'; big; printf '"},"id":"rpctap-big","method":"sampling/createMessage"}\n'
	printf '{"id":"rpctap-big","result":"'; big; printf '\n'
	printf '{"jsonrpc":"2.0","id":"go","result":{}}\n';;
*'"warm"'*) printf '{"jsonrpc":"2.0","id":"warm","result":{}}\n';;
esac; done`

// While a capture waits, a frame larger than the tap holds that is not
// the answer it waits for goes on to the host, byte for byte, wherever
// its id comes: an answer to the host with its id last, a request of the
// server's with the capture's id, a line that is not JSON.
func TestAFrameLargerThanTheTapHoldsThatIsNoCapturedAnswerReachesTheHost(t *testing.T) {
	s := startSession(t, Options{Argv: sh(bigFrames), Framing: classify.FramingNDJSON, Record: true, Listen: true, NoRedact: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"warm","method":"ping"}`+"\n"))
	s.out.waitFor(t, "warm")
	if rep, err := SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Capture: true, Keep: true, Frame: []byte(`{"jsonrpc":"2.0","id":"rpctap-big","method":"never"}`)}); err != nil || !rep.OK {
		t.Fatalf("inject: %v %+v", err, rep)
	}
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"go","method":"go"}`+"\n"))
	s.out.waitFor(t, `"id":"go"`)
	s.in.Close()
	s.wait(t, generous)
	out := s.out.bytes()
	lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
	if len(lines) != 5 {
		t.Fatalf("the host read %d lines, want the warm-up's answer and the 4 the server wrote", len(lines))
	}
	lines = lines[1:]
	for i, want := range []string{`"},"id":"h1"}`, `"},"id":"rpctap-big","method":"sampling/createMessage"}`, "AAAA", `{"jsonrpc":"2.0","id":"go","result":{}}`} {
		if !bytes.HasSuffix(lines[i], []byte(want)) || (i < 3 && len(lines[i]) < 3<<20) {
			t.Errorf("line %d the host read ends %q (%d bytes), want it whole, ending %q", i+1, clip(lines[i][max(0, len(lines[i])-80):], 80), len(lines[i]), want)
		}
	}
	_, evs, _ := readSession(t, s.tap.Path())
	if got := replay(evs, classify.S2H, classify.FramingNDJSON); !bytes.Equal(got, out) {
		t.Errorf("the frames recorded for the host: %s", firstDiff(got, out))
	}
	if got := capturedIDs(t, s.tap.Path()); got != "" {
		t.Errorf("answers recorded as captured: %s, want none", got)
	}
}

// askBig is a server that, once it reads the notification "go", sends
// the host a request larger than the tap holds, with id "five" after its
// params, and says on stderr which frames with that id it reads.
const askBig = `while read -r l; do case $l in
*'"go"'*) printf '{"jsonrpc":"2.0","params":{"text":"'; head -c 3145728 /dev/zero | tr '\0' A; printf '"},"id":"five","method":"roots/list"}\n';;
*'"five"'*) echo "read five" >&2;;
*'"warm"'*) printf '{"jsonrpc":"2.0","id":"warm","result":{}}\n';;
esac; done`

// A request of the server's larger than the tap holds, with the id of a
// request injected toward the host that waits for its answer, takes the
// id back as a small one does: the host's answer to it reaches the
// server, and a note says so.
func TestAServerRequestLargerThanTheTapHoldsTakesBackTheIDOfAnInjection(t *testing.T) {
	s := startSession(t, Options{Argv: sh(askBig), Framing: classify.FramingNDJSON, Record: true, Listen: true, NoRedact: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"warm","method":"ping"}`+"\n"))
	s.out.waitFor(t, "warm")
	if rep, err := SendInjectWith(liveSocket(t), InjectRequest{Dir: "s2h", Capture: true, Keep: true, Frame: []byte(`{"jsonrpc":"2.0","id":"five","method":"ping"}`)}); err != nil || !rep.OK {
		t.Fatalf("inject: %v %+v", err, rep)
	}
	s.out.waitFor(t, `"method":"ping"`)
	s.write(t, []byte(`{"jsonrpc":"2.0","method":"go"}`+"\n"))
	s.out.waitFor(t, `"id":"five","method":"roots/list"}`)
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"five","result":{"roots":[]}}`+"\n"))
	s.err.waitFor(t, "read five")
	s.in.Close()
	s.wait(t, generous)
	if got := capturedIDs(t, s.tap.Path()); got != "" {
		t.Errorf("answers recorded as captured: %s, want none", got)
	}
	_, evs, _ := readSession(t, s.tap.Path())
	for _, e := range evs {
		if e.Kind == sessions.EventNote && strings.HasPrefix(e.Text, "the server sent the next request with the id of a request injected toward the host") {
			return
		}
	}
	t.Errorf("no note says the server took the id back")
}

// When a frame larger than the tap holds cannot wait in a file while a
// capture waits (its directory is gone), it goes on as it comes, and the
// tap says so: the traffic is never stopped or cut for want of the file.
func TestAFrameThatCannotWaitInAFileGoesOnAndTheTapSaysSo(t *testing.T) {
	dir := t.TempDir()
	argv := sh(fmt.Sprintf("BIG=%d LAST=1; export BIG LAST; %s", 3<<20, bigAnswers))
	s := startSession(t, Options{Argv: argv, Framing: classify.FramingNDJSON, Record: true, Path: filepath.Join(dir, "s.jsonl"), Listen: true, NoRedact: true})
	s.write(t, []byte(`{"jsonrpc":"2.0","id":"warm","method":"ping"}`+"\n"))
	s.out.waitFor(t, "warm")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if rep, err := SendInjectWith(liveSocket(t), InjectRequest{Dir: "h2s", Capture: true, Keep: true, Frame: []byte(`{"jsonrpc":"2.0","id":"rpctap-big","method":"tools/call"}`)}); err != nil || !rep.OK {
		t.Fatalf("inject: %v %+v", err, rep)
	}
	s.out.waitFor(t, `"},"id":"rpctap-big"}`+"\n")
	s.in.Close()
	s.wait(t, generous)
	if got := len(s.out.bytes()); got < 3<<20 {
		t.Errorf("the host read %d bytes, want the whole frame", got)
	}
	if w := s.warns.String(); !strings.Contains(w, "could not wait in a file to have its id read") {
		t.Errorf("the tap said %q, nothing of the frame it could not keep waiting", w)
	}
}

// lspBigAnswer is a server on Content-Length framing that, once the file
// $GO is there, answers "rpctap-big" with a body of 3 MiB whose id comes
// after its result, then sends a notification "done".
const lspBigAnswer = `cat >/dev/null & while [ ! -e "$GO" ]; do sleep 0.05; done
p='{"jsonrpc":"2.0","result":{"text":"'; q='"},"id":"rpctap-big"}'
printf 'Content-Length: %d\r\n\r\n%s' $(( ${#p} + 3145728 + ${#q} )) "$p"; head -c 3145728 /dev/zero | tr '\0' A; printf '%s' "$q"
d='{"jsonrpc":"2.0","method":"done"}'; printf 'Content-Length: %d\r\n\r\n%s' ${#d} "$d"; wait`

// On Content-Length framing too, a captured answer larger than the tap
// holds is told apart by its body's id, wherever it comes, and never
// reaches the host: the header block is not part of what is read.
func TestAnLSPAnswerLargerThanTheTapHoldsToACapturedRequestNeverReachesTheHost(t *testing.T) {
	start := filepath.Join(t.TempDir(), "go")
	s := startSession(t, Options{Argv: []string{"/bin/sh", "-c", "GO=" + start + "; " + lspBigAnswer}, Framing: classify.FramingLSP, Record: true, Listen: true, NoRedact: true})
	s.write(t, []byte("Content-Length: 33\r\n\r\n"+`{"jsonrpc":"2.0","method":"warm"}`))
	sock := liveSocket(t)
	for deadline := time.Now().Add(generous); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tap never listened")
		}
	}
	if rep, err := SendInjectWith(sock, InjectRequest{Dir: "h2s", Capture: true, Keep: true, Frame: []byte(`{"jsonrpc":"2.0","id":"rpctap-big","method":"tools/call"}`)}); err != nil || !rep.OK {
		t.Fatalf("inject: %v %+v", err, rep)
	}
	if err := os.WriteFile(start, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s.out.waitFor(t, `"method":"done"}`)
	s.in.Close()
	s.wait(t, generous)
	if out := s.out.bytes(); bytes.Contains(out, []byte("rpctap-big")) || len(out) > 1<<10 {
		t.Errorf("the host read %d bytes (%q…), the answer to the injected request among them", len(out), clip(out, 200))
	}
	if got := capturedIDs(t, s.tap.Path()); got != `"rpctap-big"` {
		t.Errorf("answers recorded as captured: %s, want \"rpctap-big\"", got)
	}
}
