package replay

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// chanSource gives the frames sent on it; closing it is the end of input.
type chanSource chan []byte

func (c chanSource) Next() ([]byte, error) {
	b, ok := <-c
	if !ok {
		return nil, io.EOF
	}
	return b, nil
}

// syncBuffer is what replay writes to the host.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// replayServer runs ServeReplay on a recording for a test host.
type replayServer struct {
	in     chanSource
	out    *syncBuffer
	done   chan error
	closed bool
}

func startReplayServer(t *testing.T, framing string, frames []frameAt, opts ServeOptions) *replayServer {
	t.Helper()
	path := writeSession(t, framing, frames)
	opts.NoDelay = true
	s := &replayServer{in: make(chanSource), out: &syncBuffer{}, done: make(chan error, 1)}
	go func() {
		_, err := Serve(context.Background(), path, s.in, s.out, opts)
		s.done <- err
	}()
	t.Cleanup(func() { s.close(t) })
	return s
}

func (s *replayServer) send(frame string) { s.in <- []byte(frame) }

// lines waits until replay has written n lines, and returns them.
func (s *replayServer) lines(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := s.out.String()
		lines := strings.SplitAfter(out, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if len(lines) >= n {
			return lines
		}
		if time.Now().After(deadline) {
			t.Fatalf("replay wrote %d lines, want %d:\n%s", len(lines), n, out)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *replayServer) close(t *testing.T) {
	if s.closed {
		return
	}
	s.closed = true
	close(s.in)
	if err := <-s.done; err != nil {
		t.Errorf("ServeReplay: %v", err)
	}
}

func TestReplayServerAnswersWithTheHostsIdAndOtherwiseTheRecordedBytes(t *testing.T) {
	s := startReplayServer(t, "ndjson", mcpConversation(nil), ServeOptions{})
	// Another protocol version and other client info: the handshake is
	// answered from the recording all the same.
	s.send(`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{"x":{}},"clientInfo":{"name":"other","version":"9"}}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"arguments":{"message":"hi"},"name":"echo","_meta":{"progressToken":1}}}`)
	got := s.lines(t, 2)
	want := []string{
		`{"jsonrpc":"2.0","id":"a","result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}` + "\n",
		`{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"hi"}]}}` + "\n",
	}
	if strings.Join(got, "") != strings.Join(want, "") {
		t.Errorf("replay wrote:\n%s\nwant:\n%s", strings.Join(got, ""), strings.Join(want, ""))
	}
}

func TestReplayServerStrictRefusesOtherParamsNamingTheNearestRequestAndWhy(t *testing.T) {
	s := startReplayServer(t, "ndjson", mcpConversation(nil), ServeOptions{Match: MatchStrict})
	s.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"bye"}}}`)
	got := s.lines(t, 1)[0]
	for _, want := range []string{`"id":4`, `"code":-32602`, "line 7", `/params/arguments/message: \"hi\" recorded, \"bye\" sent`} {
		if !strings.Contains(got, want) {
			t.Errorf("the error lacks %s:\n%s", want, got)
		}
	}
}

func TestReplayServerBestAnswersTheSameCallWithTheClosestParams(t *testing.T) {
	frames := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"task":{"ttl":100,"mode":"a"}}}`},
		{10, 's', `{"jsonrpc":"2.0","id":1,"result":"echo in a task of 100"}`},
		{20, 'h', `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"task":{"ttl":900,"mode":"b"}}}`},
		{30, 's', `{"jsonrpc":"2.0","id":2,"result":"echo in a task of 900"}`},
		{40, 'h', `{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a.go"},"position":{"line":3,"character":5},"workDoneToken":"w1"}}`},
		{50, 's', `{"jsonrpc":"2.0","id":3,"result":"a.go 3:5"}`},
		{60, 'h', `{"jsonrpc":"2.0","id":4,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a.go"},"position":{"line":7,"character":1},"workDoneToken":"w2"}}`},
		{70, 's', `{"jsonrpc":"2.0","id":4,"result":"a.go 7:1"}`},
		{80, 'h', `{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///b.go"},"position":{"line":3,"character":5}}}`},
		{90, 's', `{"jsonrpc":"2.0","id":5,"result":"b.go 3:5"}`},
	}
	s := startReplayServer(t, "ndjson", frames, ServeOptions{})
	s.send(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"task":{"ttl":800,"mode":"b"}}}`)
	// Another work-done token: the hover at the same place in the same document.
	s.send(`{"jsonrpc":"2.0","id":"y","method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a.go"},"position":{"line":7,"character":1},"workDoneToken":"w9"}}`)
	s.send(`{"jsonrpc":"2.0","id":"z","method":"textDocument/hover","params":{"textDocument":{"uri":"file:///b.go"},"position":{"line":7,"character":1}}}`)
	got := s.lines(t, 3)
	if got[0] != `{"jsonrpc":"2.0","id":"x","result":"echo in a task of 900"}`+"\n" || got[1] != `{"jsonrpc":"2.0","id":"y","result":"a.go 7:1"}`+"\n" {
		t.Errorf("best match answered:\n%s", strings.Join(got, ""))
	}
	// No hover was recorded at that place in b.go.
	for _, want := range []string{`"id":"z"`, `"code":-32602`, "the recording has no textDocument/hover request for file:///b.go 7:1", "the nearest is textDocument/hover"} {
		if !strings.Contains(got[2], want) {
			t.Errorf("the error lacks %s:\n%s", want, got[2])
		}
	}
}

func TestReplayServerNeverAnswersAnotherToolOrOtherArgumentsAndNamesTheNearestAndEveryPath(t *testing.T) {
	for _, match := range []string{MatchBest, MatchStrict, MatchSequential} {
		t.Run(match, func(t *testing.T) {
			s := startReplayServer(t, "ndjson", mcpConversation(nil), ServeOptions{Match: match})
			s.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":2,"b":3}}}`)
			s.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"bye"}}}`)
			s.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2,"c":3,"d":4,"e":5}}}`)
			got := s.lines(t, 3)
			wants := [][]string{
				{`"id":4`, `"code":-32602`, "the recording has no tools/call request for get-sum; the nearest is tools/call add, line 9, which differs at 1 path: /params/name: \\\"add\\\" recorded, \\\"get-sum\\\" sent"},
				{`"id":5`, `"code":-32602`, "the nearest is tools/call echo, line 7, which differs at 1 path: /params/arguments/message: \\\"hi\\\" recorded, \\\"bye\\\" sent"},
				// Every path that differs, not the first few.
				{`"id":6`, "which differs at 5 paths: /params/arguments/a: 2 recorded, 1 sent; /params/arguments/b: 3 recorded, 2 sent; /params/arguments/c: added 3; /params/arguments/d: added 4; /params/arguments/e: added 5"},
			}
			if match == MatchSequential {
				// Sequential answers a call's recorded requests in turn, whatever its params.
				wants = wants[:1]
				if !strings.Contains(got[1], `"result"`) || !strings.Contains(got[2], `"result"`) {
					t.Errorf("sequential did not answer the same tools in turn:\n%s%s", got[1], got[2])
				}
			}
			for i, want := range wants {
				for _, w := range want {
					if !strings.Contains(got[i], w) {
						t.Errorf("answer %d lacks %s:\n%s", i, w, got[i])
					}
				}
				if strings.Contains(got[i], `"result"`) {
					t.Errorf("answered another call: %s", got[i])
				}
			}
		})
	}
}

func TestReplayServerMatchesResourcesCompletionsAndPromptsByWhatTheyName(t *testing.T) {
	frames := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"demo://one"}}`},
		{10, 's', `{"jsonrpc":"2.0","id":1,"result":"one"}`},
		{20, 'h', `{"jsonrpc":"2.0","id":2,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"city","value":"Pa"}}}`},
		{30, 's', `{"jsonrpc":"2.0","id":2,"result":"Paris"}`},
		{40, 'h', `{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"p","arguments":{"city":"Paris"}}}`},
		{50, 's', `{"jsonrpc":"2.0","id":3,"result":"prompt p"}`},
	}
	s := startReplayServer(t, "ndjson", frames, ServeOptions{})
	for _, req := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"demo://one"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"demo://two"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"completion/complete","params":{"ref":{"name":"p","type":"ref/prompt"},"argument":{"name":"city","value":"Pa"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"q"},"argument":{"name":"city","value":"Pa"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"prompts/get","params":{"name":"p","arguments":{"city":"Paris"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"q","arguments":{"city":"Paris"}}}`,
	} {
		s.send(req)
	}
	got := s.lines(t, 6)
	for i, want := range []string{`"result":"one"`, "no resources/read request for demo://two", `"result":"Paris"`,
		"no completion/complete request for ref/prompt q", `"result":"prompt p"`, "no prompts/get request for q"} {
		if !strings.Contains(got[i], want) {
			t.Errorf("answer %d lacks %s: %s", i+1, want, got[i])
		}
	}
}

func TestReplayServerAnswersAMethodNeverRecordedWithMethodNotFoundNamingTheNearest(t *testing.T) {
	s := startReplayServer(t, "ndjson", mcpConversation(nil), ServeOptions{})
	s.send(`{"jsonrpc":"2.0","id":4,"method":"tools/lists"}`)
	got := s.lines(t, 1)[0]
	if !strings.Contains(got, `"code":-32601`) || !strings.Contains(got, "no request tools/lists; the nearest is tools/list, line 5") {
		t.Errorf("got %s", got)
	}
}

func twoEchoes() []frameAt {
	return []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`},
		{10, 's', `{"jsonrpc":"2.0","id":1,"result":"first"}`},
		{20, 'h', `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`},
		{30, 's', `{"jsonrpc":"2.0","id":2,"result":"second"}`},
	}
}

func TestReplayServerSequentialAnswersARepeatedRequestWithEachRecordedAnswerInTurn(t *testing.T) {
	s := startReplayServer(t, "ndjson", twoEchoes(), ServeOptions{Match: MatchSequential})
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"other"}}}`
	s.send(call)
	s.send(call)
	s.send(call)
	got := s.lines(t, 3)
	if !strings.Contains(got[0], `"first"`) || !strings.Contains(got[1], `"second"`) || !strings.Contains(got[2], "all answered already") {
		t.Errorf("sequential answers:\n%s", strings.Join(got, ""))
	}
}

func TestReplayServerBestUsesEachEqualRecordedRequestOnceThenTheFirstAgain(t *testing.T) {
	s := startReplayServer(t, "ndjson", twoEchoes(), ServeOptions{})
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`
	s.send(call)
	s.send(call)
	s.send(call)
	got := s.lines(t, 3)
	if !strings.Contains(got[0], `"first"`) || !strings.Contains(got[1], `"second"`) || !strings.Contains(got[2], `"first"`) {
		t.Errorf("best answers:\n%s", strings.Join(got, ""))
	}
}

func TestReplayServerPlaysServerFramesAfterTheFrameTheyFollowedWithItsOwnRequestIds(t *testing.T) {
	frames := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{10, 's', `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
		{20, 's', `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`},
		{30, 'h', `{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}`},
		{40, 's', `{"jsonrpc":"2.0","method":"after/roots"}`},
	}
	s := startReplayServer(t, "ndjson", frames, ServeOptions{})
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	got := s.lines(t, 2)
	if got[0] != frames[1].frame+"\n" || got[1] != `{"jsonrpc":"2.0","id":"rpctap-replay-1","method":"roots/list"}`+"\n" {
		t.Fatalf("after initialized, replay wrote:\n%s", strings.Join(got, ""))
	}
	// Nothing more until the host answers the server's request.
	s.send(`{"jsonrpc":"2.0","id":"rpctap-replay-1","result":{"roots":[]}}`)
	if got := s.lines(t, 3); got[2] != frames[4].frame+"\n" {
		t.Errorf("after the host's answer, replay wrote %s", got[2])
	}
}

// A call during which the server asked the host (an elicitation/create
// the host answered before the call's answer came) is answered once the
// live host has answered replay's request, as the recorded server
// waited for it: a host slower than the recorded one got the answer
// first, with its elicitation not done yet.
func TestReplayServerAnswersACallOnlyOnceTheHostHasAnsweredTheRequestAskedWithinIt(t *testing.T) {
	frames := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"confirm","arguments":{"action":"deploy"}}}`},
		{10, 's', `{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"Confirm deploy?"}}`},
		{20, 'h', `{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"confirmed":true}}}`},
		{30, 's', `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"confirmed deploy"}]}}`},
		{40, 'h', `{"jsonrpc":"2.0","id":5,"method":"ping"}`},
		{50, 's', `{"jsonrpc":"2.0","id":5,"result":{}}`},
	}
	s := startReplayServer(t, "ndjson", frames, ServeOptions{})
	s.send(frames[0].frame)
	if got := s.lines(t, 1); !strings.Contains(got[0], `"id":"rpctap-replay-1","method":"elicitation/create"`) {
		t.Fatalf("after the call, replay wrote %s", got[0])
	}
	// The host has not answered yet: a ping is answered before the call.
	s.send(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	if got := s.lines(t, 2); got[1] != `{"jsonrpc":"2.0","id":5,"result":{}}`+"\n" {
		t.Fatalf("before the host answered the elicitation, replay wrote %s, want the ping's answer", got[1])
	}
	s.send(`{"jsonrpc":"2.0","id":"rpctap-replay-1","result":{"action":"accept","content":{"confirmed":true}}}`)
	if got := s.lines(t, 3); !strings.Contains(got[2], `"id":4,"result"`) {
		t.Errorf("after the host's answer, replay wrote %s, want the call's answer", got[2])
	}
}

func TestReplayServerAnswersTheHandshakeWhateverTheProtocolVersionEvenWhenStrict(t *testing.T) {
	s := startReplayServer(t, "ndjson", mcpConversation(nil), ServeOptions{Match: MatchStrict})
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := s.lines(t, 1)[0]; !strings.Contains(got, `"result":{"protocolVersion":"2025-11-25"`) {
		t.Errorf("got %s", got)
	}
}

func TestReplayServerStrictVersionRefusesAnotherProtocolVersion(t *testing.T) {
	s := startReplayServer(t, "ndjson", mcpConversation(nil), ServeOptions{StrictVersion: true})
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2099-01-01","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	got := s.lines(t, 1)[0]
	if !strings.Contains(got, `"error"`) || !strings.Contains(got, `protocol version \"2025-11-25\", the host asks for \"2099-01-01\"`) {
		t.Errorf("got %s", got)
	}
}

func TestReplayServerFramesAnswersWithContentLengthForAnLSPRecording(t *testing.T) {
	frames := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null}}`},
		{10, 's', `{"jsonrpc":"2.0","id":1,"result":{"capabilities":{}}}`},
	}
	s := startReplayServer(t, "lsp", frames, ServeOptions{})
	s.send(`{"jsonrpc":"2.0","id":12345,"method":"initialize","params":{"processId":7}}`)
	want := "Content-Length: 57\r\n\r\n" + `{"jsonrpc":"2.0","id":12345,"result":{"capabilities":{}}}`
	deadline := time.Now().Add(20 * time.Second)
	for s.out.String() != want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := s.out.String(); got != want {
		t.Errorf("replay wrote %q, want %q", got, want)
	}
}

// blockedSource never gives a frame, as a host that keeps its input open.
type blockedSource struct{}

func (blockedSource) Next() ([]byte, error) { select {} }

func TestReplayServerEndsWhenStoppedWhileTheHostsInputIsStillOpen(t *testing.T) {
	path := writeSession(t, "ndjson", mcpConversation(nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Serve(ctx, path, blockedSource{}, &syncBuffer{}, ServeOptions{})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeReplay: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ServeReplay went on waiting for the host's input after it was stopped")
	}
}

func TestReplayServerForwardsWhatItCannotAnswerToTheRealServerAfterTheHandshake(t *testing.T) {
	toReal, realIn := io.Pipe()
	realOut, fromReal := io.Pipe()
	var mu sync.Mutex
	var seen []string
	go func() { // the real server: answers every request with "real"
		defer fromReal.Close()
		br := bufioReader(toReal)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			mu.Lock()
			seen = append(seen, strings.TrimSuffix(line, "\n"))
			mu.Unlock()
			if id := classifyID(line); id != "" {
				io.WriteString(fromReal, `{"jsonrpc":"2.0","id":`+id+`,"result":"real"}`+"\n")
			}
		}
	}()
	fw := &Forward{To: realIn, From: lineSource{bufioReader(realOut)}, Close: realIn.Close}
	s := startReplayServer(t, "ndjson", mcpConversation(nil), ServeOptions{Match: MatchStrict, Forward: fw})
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"bye"}}}`)
	got := s.lines(t, 2)
	if !strings.Contains(got[0], `"protocolVersion":"2025-11-25"`) || got[1] != `{"jsonrpc":"2.0","id":4,"result":"real"}`+"\n" {
		t.Errorf("the host got:\n%s", strings.Join(got, ""))
	}
	s.close(t)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 || !strings.Contains(seen[0], `"id":"rpctap-forward-1","method":"initialize"`) ||
		!strings.Contains(seen[1], "notifications/initialized") || !strings.Contains(seen[2], `"bye"`) {
		t.Errorf("the real server read:\n%s", strings.Join(seen, "\n"))
	}
	if n := len(s.lines(t, 2)); n != 2 {
		t.Errorf("the host got %d frames; the answer to replay's own initialize must not reach it", n)
	}
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }

// classifyID is the id of a request line, or "".
func classifyID(line string) string {
	m := classify.Classify([]byte(strings.TrimSpace(line)), classify.H2S, classify.JSONRPC)
	if m.Kind != classify.KindRequest {
		return ""
	}
	return string(m.ID().Raw)
}

func TestReplayServerMasksSecretsInItsOwnSessionFileAsATapDoes(t *testing.T) {
	red, err := sessions.NewRedactor([]string{"API_TOKEN=tok-1234567890"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(t.TempDir(), "replay.jsonl")
	s := startReplayServer(t, "ndjson", mcpConversation(nil), ServeOptions{Record: true, RecordPath: record, Redactor: red, Log: func(string) {}})
	s.send(`{"jsonrpc":"2.0","id":"tok-1234567890","method":"nosuch","params":{"auth":"tok-1234567890"}}`)
	s.lines(t, 1)
	s.close(t)
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("tok-1234567890")) {
		t.Errorf("the replay's session file holds the secret:\n%s", b)
	}
	if !bytes.Contains(b, []byte("***API_TOKEN***")) || !bytes.Contains(b, []byte(`"redacted":true`)) {
		t.Errorf("the replay's session file does not say it masked the secret:\n%s", b)
	}
}

func TestReplayServerNeverGivesAServerRequestAnIdTheHostUsed(t *testing.T) {
	frames := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{10, 's', `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{20, 's', `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`},
	}
	s := startReplayServer(t, "ndjson", frames, ServeOptions{})
	// A host whose ids look like replay's own.
	s.send(`{"jsonrpc":"2.0","id":"rpctap\u002dreplay-1","method":"ping"}`)
	got := s.lines(t, 2)
	if got[0] != `{"jsonrpc":"2.0","id":"rpctap\u002dreplay-1","result":{}}`+"\n" {
		t.Fatalf("the answer: %s", got[0])
	}
	if strings.Contains(got[1], `"rpctap-replay-1"`) || !strings.Contains(got[1], `"id":"rpctap-replay-2"`) {
		t.Errorf("the server request took the host's id: %s", got[1])
	}
}

func TestReplayServerAnswersAHostBatchWithABatchMemberByMember(t *testing.T) {
	s := startReplayServer(t, "ndjson", mcpConversation(nil), ServeOptions{})
	s.send(`[{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"nosuch"}]`)
	got := s.lines(t, 1)[0]
	m := classify.Classify([]byte(strings.TrimSpace(got)), classify.S2H, classify.JSONRPC)
	if m.Kind != classify.KindBatch || len(m.Members) != 2 {
		t.Fatalf("the answer to a batch: %s", got)
	}
	if string(m.Members[0].Frame) != `{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"5"}]}}` {
		t.Errorf("add's answer: %s", m.Members[0].Frame)
	}
	if b := m.Members[1]; string(b.ID().Raw) != `"b"` || classify.Member(b.Frame, "error") == nil {
		t.Errorf("nosuch's answer: %s", b.Frame)
	}
}

func TestReplayServerWritesItsSessionFileAsItGoesAsATapDoes(t *testing.T) {
	record := filepath.Join(t.TempDir(), "replay.jsonl")
	s := startReplayServer(t, "ndjson", mcpConversation(nil), ServeOptions{Record: true, RecordPath: record})
	s.send(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
	s.lines(t, 1)
	// The replay goes on; what it recorded is in the file already.
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(record)
		if bytes.Contains(b, []byte(`\"id\":9,\"result\"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("20 s after the answer, the replay's session file holds:\n%s", b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serveRecords runs ServeReplay on the session file at path for a test
// host.
func serveRecords(t *testing.T, path string, opts ServeOptions) *replayServer {
	t.Helper()
	opts.NoDelay = true
	s := &replayServer{in: make(chanSource), out: &syncBuffer{}, done: make(chan error, 1)}
	go func() {
		_, err := Serve(context.Background(), path, s.in, s.out, opts)
		s.done <- err
	}()
	t.Cleanup(func() { s.close(t) })
	return s
}

func TestReplayServerAnswersFromWhatTheServerAnsweredAnInjectedRequestAndNeverFromTheUsersFrames(t *testing.T) {
	inject := func(r sessions.FrameRecord) sessions.FrameRecord { r.Src = sessions.SrcInject; return r }
	captured := func(r sessions.FrameRecord) sessions.FrameRecord { r.Captured = true; return r }
	dropped := func(r sessions.FrameRecord) sessions.FrameRecord { r.Held = sessions.HeldAnswered; return r }
	path := writeRecords(t, nil, []sessions.FrameRecord{
		inject(h2s(0, `{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`)),
		captured(s2h(10, `{"jsonrpc":"2.0","id":"rpctap-1","result":"Echo: x"}`)),
		// The user answered this one in the server's place.
		dropped(h2s(20, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1}}}`)),
		inject(s2h(30, `{"jsonrpc":"2.0","id":2,"result":"the user's"}`)),
	})
	s := serveRecords(t, path, ServeOptions{})
	s.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`)
	s.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1}}}`)
	got := s.lines(t, 2)
	if got[0] != `{"jsonrpc":"2.0","id":7,"result":"Echo: x"}`+"\n" {
		t.Errorf("the injected call's answer: %s", got[0])
	}
	if !strings.Contains(got[1], "no tools/call request for get-sum") {
		t.Errorf("answered from a frame the server never read: %s", got[1])
	}
}

func TestReplayServerTakesASecretTheRecordingMaskedInARequestForAnyValue(t *testing.T) {
	masked := func(r sessions.FrameRecord) sessions.FrameRecord { r.Redacted = true; return r }
	path := writeRecords(t, []string{"DBPASS"}, []sessions.FrameRecord{
		masked(h2s(0, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"password":"***DBPASS***"}}}`)),
		s2h(10, `{"jsonrpc":"2.0","id":1,"result":"welcome"}`),
	})
	for _, match := range []string{MatchBest, MatchStrict} {
		s := serveRecords(t, path, ServeOptions{Match: match})
		s.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"login","arguments":{"password":"hunter2-s3cr3t-77"}}}`)
		s.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"login","arguments":{"user":"x","password":"hunter2-s3cr3t-77"}}}`)
		got := s.lines(t, 2)
		if got[0] != `{"jsonrpc":"2.0","id":7,"result":"welcome"}`+"\n" || !strings.Contains(got[1], "/params/arguments/user: added") {
			t.Errorf("--match %s answered:\n%s", match, strings.Join(got, ""))
		}
	}
}

func TestReplayServerLeavesOutLSPProgressTokensAsItDoesMeta(t *testing.T) {
	frames := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":1,"method":"textDocument/references","params":{"textDocument":{"uri":"file:///a.go"},"position":{"line":1,"character":2},"context":{"includeDeclaration":true},"workDoneToken":"w1","partialResultToken":"p1"}}`},
		{10, 's', `{"jsonrpc":"2.0","id":1,"result":[]}`},
	}
	s := startReplayServer(t, "ndjson", frames, ServeOptions{Match: MatchStrict})
	s.send(`{"jsonrpc":"2.0","id":2,"method":"textDocument/references","params":{"textDocument":{"uri":"file:///a.go"},"position":{"line":1,"character":2},"context":{"includeDeclaration":true},"workDoneToken":"w9","partialResultToken":"p9"}}`)
	if got := s.lines(t, 1)[0]; got != `{"jsonrpc":"2.0","id":2,"result":[]}`+"\n" {
		t.Errorf("other progress tokens, --match strict: %s", got)
	}
}

func TestReplayServerTakesNoArgumentsForArgumentsOfNothing(t *testing.T) {
	frames := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-env"}}`},
		{10, 's', `{"jsonrpc":"2.0","id":1,"result":"env"}`},
	}
	s := startReplayServer(t, "ndjson", frames, ServeOptions{})
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get-env","arguments":{}}}`)
	s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get-env","arguments":null}}`)
	got := s.lines(t, 2)
	if !strings.Contains(got[0], `"result":"env"`) || !strings.Contains(got[1], `"result":"env"`) {
		t.Errorf("a call with arguments {} or null, recorded with none:\n%s", strings.Join(got, ""))
	}
}

// meta26 is the _meta of a 2026-07-28 request of revision rev.
func meta26(rev string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + rev + `","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
}

// confirmCall is a call of tool confirm {action: deploy} made with id,
// and, with state, its input_required answer and its retry (id+1) with
// the host's confirmation, then the final answer.
func confirmCall(t0 int64, id int, state string, confirmed bool, final string) []frameAt {
	call := `"name":"confirm","arguments":{"action":"deploy"}`
	return []frameAt{
		{t0, 'h', fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s,%s}}`, id, meta26("2026-07-28"), call)},
		{t0 + 10, 's', fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"resultType":"input_required","requestState":%q,"inputRequests":{"confirm":{"method":"elicitation/create","params":{"message":"Confirm deploy?"}}}}}`, id, state)},
		{t0 + 20, 'h', fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s,%s,"inputResponses":{"confirm":{"action":"accept","content":{"confirmed":%t}}},"requestState":%q}}`, id+1, meta26("2026-07-28"), call, confirmed, state)},
		{t0 + 30, 's', fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"resultType":"complete","content":[{"type":"text","text":%q}]}}`, id+1, final)},
	}
}

// twoConfirmCalls is a 2026-07-28 session with two multi round-trip
// calls of the same tool with the same arguments: the first confirmed,
// the second not.
func twoConfirmCalls() []frameAt {
	frames := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta26("2026-07-28") + `}}`},
		{5, 's', `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`},
	}
	frames = append(frames, confirmCall(100, 2, "sA", true, "confirmed deploy")...)
	return append(frames, confirmCall(200, 4, "sB", false, "deploy not confirmed")...)
}

// hostCall is the host's confirm {action: deploy} with id, and retry
// (its inputResponses and requestState) when not "".
func hostCall(id, retry string) string {
	if retry != "" {
		retry = "," + retry
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + meta26("2026-07-28") + `,"name":"confirm","arguments":{"action":"deploy"}` + retry + `}}`
}

func confirmed(yes bool, state string) string {
	return fmt.Sprintf(`"inputResponses":{"confirm":{"action":"accept","content":{"confirmed":%t}}},"requestState":%q`, yes, state)
}

// A host's retry (a new id, its inputResponses, the requestState replay
// handed out) is answered from the recorded retry of the call replay
// asked for input, never from another call's retry with params as close;
// a retry whose input or requestState differs gets an error that says
// which, and the call can still be retried right.
func TestReplayServerAnswersARetryOnlyFromTheRecordedRetryOfTheSameCall(t *testing.T) {
	s := startReplayServer(t, "ndjson", twoConfirmCalls(), ServeOptions{})
	s.send(hostCall(`"a"`, ""))
	if got := s.lines(t, 1)[0]; !strings.Contains(got, `"id":"a"`) || !strings.Contains(got, `"requestState":"sA"`) {
		t.Fatalf("the first call was answered %s, want the first recorded input_required result (requestState sA)", got)
	}
	// Declined: the recorded retry of this call was confirmed. (The
	// second call's retry, declined, has params as close.)
	s.send(hostCall(`"b"`, confirmed(false, "sA")))
	got := s.lines(t, 2)[1]
	for _, want := range []string{`"id":"b"`, `"code":-32602`, "the retry of tools/call for confirm differs from the recorded retry of that call, line 6", `/params/inputResponses/confirm/content/confirmed: true recorded, false sent`} {
		if !strings.Contains(got, want) {
			t.Errorf("the declined retry's error lacks %s:\n%s", want, got)
		}
	}
	s.send(hostCall(`"c"`, confirmed(true, "sX")))
	got = s.lines(t, 3)[2]
	for _, want := range []string{`"id":"c"`, `requestState \"sX\", not \"sA\", the one replay handed out (the input_required result of line 5 of the recording)`} {
		if !strings.Contains(got, want) {
			t.Errorf("the retry with another requestState: its error lacks %s:\n%s", want, got)
		}
	}
	s.send(hostCall(`"d"`, confirmed(true, "sA")))
	if got := s.lines(t, 4)[3]; got != `{"jsonrpc":"2.0","id":"d","result":{"resultType":"complete","content":[{"type":"text","text":"confirmed deploy"}]}}`+"\n" {
		t.Errorf("the right retry was answered %s, want the first call's final result", got)
	}
	// The call is over: the same retry again retries nothing replay asked.
	s.send(hostCall(`"e"`, confirmed(true, "sA")))
	if got := s.lines(t, 5)[4]; !strings.Contains(got, "but replay answered no tools/call request for confirm with input_required") {
		t.Errorf("a retry of a call already over was answered %s", got)
	}
	// The second call: its own input_required result, then its retry.
	s.send(hostCall(`"f"`, ""))
	s.send(hostCall(`"g"`, confirmed(false, "sB")))
	got2 := s.lines(t, 7)
	if !strings.Contains(got2[5], `"requestState":"sB"`) || !strings.Contains(got2[6], `"deploy not confirmed"`) {
		t.Errorf("the second call was answered:\n%s", strings.Join(got2[5:], ""))
	}
}

// --match sequential answers the host's first requests of a call from
// the recorded first requests, never from a recorded retry: a retry
// answers only the retry of a call replay asked for input.
func TestReplayServerSequentialNeverAnswersAFirstRequestFromARecordedRetry(t *testing.T) {
	s := startReplayServer(t, "ndjson", twoConfirmCalls(), ServeOptions{Match: MatchSequential})
	s.send(hostCall("1", ""))
	s.send(hostCall("2", ""))
	got := s.lines(t, 2)
	if !strings.Contains(got[0], `"requestState":"sA"`) || !strings.Contains(got[1], `"requestState":"sB"`) {
		t.Errorf("two first requests were answered:\n%s\nwant the two recorded input_required results", strings.Join(got, ""))
	}
}

// --strict-version, under MCP 2026-07-28, answers a request only from a
// recorded one whose params._meta names the same revision, and says
// which revisions differ and why; without it the revision does not
// count, as no other _meta does.
func TestReplayServerStrictVersionRefusesARequestOfAnotherRevisionInItsMeta(t *testing.T) {
	other := strings.Replace(hostCall("7", ""), `"2026-07-28"`, `"2027-01-01"`, 1)
	s := startReplayServer(t, "ndjson", twoConfirmCalls(), ServeOptions{StrictVersion: true})
	s.send(other)
	got := s.lines(t, 1)[0]
	want := `the recording's tools/call request for confirm (line 4) carries revision \"2026-07-28\" in params._meta, the host's carries \"2027-01-01\" (--strict-version)`
	if !strings.Contains(got, `"error"`) || !strings.Contains(got, want) {
		t.Errorf("a request of another revision was answered %s\nwant an error saying %s", got, want)
	}
	s.send(hostCall("8", ""))
	if got := s.lines(t, 2)[1]; !strings.Contains(got, `"requestState":"sA"`) {
		t.Errorf("a request of the recorded revision was answered %s", got)
	}
	loose := startReplayServer(t, "ndjson", twoConfirmCalls(), ServeOptions{})
	loose.send(other)
	if got := loose.lines(t, 1)[0]; !strings.Contains(got, `"requestState":"sA"`) {
		t.Errorf("without --strict-version, a request of another revision was answered %s", got)
	}
}
