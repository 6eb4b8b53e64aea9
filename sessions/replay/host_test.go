package replay

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// lineSource reads newline-framed frames.
type lineSource struct{ br *bufio.Reader }

func (l lineSource) Next() ([]byte, error) {
	line, err := l.br.ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	return line[:len(line)-1], nil
}

// fakeServer answers each frame it reads with what handle returns.
type fakeServer struct {
	mu   sync.Mutex
	read []string
}

func (f *fakeServer) frames() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.read...)
}

// playAgainst runs PlayHost on frames against a fake server.
func playAgainst(t *testing.T, frames []frameAt, opts HostOptions, handle func(frame string, send func(string))) (*HostReport, *fakeServer) {
	t.Helper()
	path := writeSession(t, "ndjson", frames)
	toServer, hostIn := io.Pipe()
	fromServer, serverOut := io.Pipe()
	fs := &fakeServer{}
	go func() {
		defer serverOut.Close()
		var wmu sync.Mutex
		send := func(s string) {
			wmu.Lock()
			defer wmu.Unlock()
			io.WriteString(serverOut, s+"\n")
		}
		br := bufio.NewReader(toServer)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			fs.mu.Lock()
			fs.read = append(fs.read, line)
			fs.mu.Unlock()
			handle(line, send)
		}
	}()
	rep, err := PlayHost(context.Background(), path, lineSource{bufio.NewReader(fromServer)}, hostIn, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep, fs
}

// answerAs answers each request with result, by method.
func answerAs(results map[string]string) func(string, func(string)) {
	return func(frame string, send func(string)) {
		m := classify.Classify([]byte(frame), classify.H2S, classify.JSONRPC)
		if m.Kind != classify.KindRequest {
			return
		}
		if r, ok := results[m.Method()]; ok {
			send(`{"jsonrpc":"2.0","id":` + string(m.ID().Raw) + `,` + r + `}`)
		}
	}
}

var conversationAnswers = map[string]string{
	"initialize": `"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}`,
	"tools/list": `"result":{"tools":[` + echoTool + `,` + addTool + `]}`,
}

func TestPlayHostReportsSameChangedNewErrorAndMissingAnswers(t *testing.T) {
	answers := map[string]string{}
	for k, v := range conversationAnswers {
		answers[k] = v
	}
	rep, _ := playAgainst(t, mcpConversation(nil), HostOptions{Timeout: 300 * time.Millisecond}, func(frame string, send func(string)) {
		switch {
		case strings.Contains(frame, `"echo"`) && strings.Contains(frame, "tools/call"):
			send(`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}`)
		case strings.Contains(frame, `"add"`) && strings.Contains(frame, "tools/call"):
			// never answered
		default:
			answerAs(answers)(frame, send)
		}
	})
	if len(rep.Calls) != 4 || rep.Calls[0].Outcome != OutcomeSame || rep.Calls[1].Outcome != OutcomeSame ||
		rep.Calls[2].Outcome != OutcomeNewError || rep.Calls[3].Outcome != OutcomeMissing {
		t.Errorf("outcomes: %+v", rep.Calls)
	}
	if rep.Same != 2 || rep.NewErrors != 1 || rep.Missing != 1 || !rep.Differs() {
		t.Errorf("counts: %+v", rep)
	}
}

func TestPlayHostShowsTheChangedPathsOfAnAnswer(t *testing.T) {
	answers := map[string]string{}
	for k, v := range conversationAnswers {
		answers[k] = v
	}
	answers["tools/call"] = `"result":{"content":[{"type":"text","text":"hi"}]}`
	rep, _ := playAgainst(t, mcpConversation(nil), HostOptions{}, answerAs(answers))
	// add's recorded answer was "5"; the fake says "hi".
	c := rep.Calls[3]
	if c.Outcome != OutcomeChanged || len(c.Changes) != 1 || c.Changes[0] != (sessions.Change{Path: "/result/content/0/text", Was: `"5"`, Now: `"hi"`}) {
		t.Errorf("add: %+v", c)
	}
	if rep.Same != 3 || rep.Changed != 1 {
		t.Errorf("counts: %+v", rep)
	}
}

func TestPlayHostWaitsForEachAnswerBeforeSendingWhatCameAfterIt(t *testing.T) {
	var mu sync.Mutex
	answered := map[string]bool{}
	early := ""
	answers := answerAs(map[string]string{"tools/call": `"result":"ok"`})
	frames := twoEchoes()
	rep, _ := playAgainst(t, frames, HostOptions{}, func(frame string, send func(string)) {
		m := classify.Classify([]byte(frame), classify.H2S, classify.JSONRPC)
		id := string(m.ID().Raw)
		mu.Lock()
		if id == "2" && !answered["1"] {
			early = frame
		}
		mu.Unlock()
		go func() {
			time.Sleep(50 * time.Millisecond) // a slow server
			mu.Lock()
			answered[id] = true
			mu.Unlock()
			answers(frame, send)
		}()
	})
	if early != "" {
		t.Errorf("request 2 was sent before request 1 was answered: %s", early)
	}
	if len(rep.Calls) != 2 || rep.Missing != 0 {
		t.Errorf("calls: %+v", rep.Calls)
	}
}

func TestPlayHostAnswersTheServersRequestAsTheHostDidWithTheLiveId(t *testing.T) {
	frames := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`},
		{10, 's', `{"jsonrpc":"2.0","id":0,"method":"roots/list"}`},
		{20, 'h', `{"jsonrpc":"2.0","id":0,"result":{"roots":[{"uri":"file:///r"}]}}`},
		{30, 's', `{"jsonrpc":"2.0","id":1,"result":{}}`},
	}
	rep, fs := playAgainst(t, frames, HostOptions{}, func(frame string, send func(string)) {
		if strings.Contains(frame, "initialize") {
			send(`{"jsonrpc":"2.0","id":"srv-9","method":"roots/list"}`)
		}
		if strings.Contains(frame, "roots") {
			send(`{"jsonrpc":"2.0","id":1,"result":{}}`)
		}
	})
	got := fs.frames()
	if len(got) != 2 || got[1] != `{"jsonrpc":"2.0","id":"srv-9","result":{"roots":[{"uri":"file:///r"}]}}` {
		t.Errorf("the server read:\n%s", strings.Join(got, "\n"))
	}
	if rep.Same != 1 || rep.Differs() {
		t.Errorf("report: %+v", rep)
	}
}

func TestPlayHostComparesTheOrderOfNotificationsWhenAsked(t *testing.T) {
	frames := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{10, 's', `{"jsonrpc":"2.0","method":"a"}`},
		{20, 's', `{"jsonrpc":"2.0","method":"b"}`},
		{30, 's', `{"jsonrpc":"2.0","id":1,"result":{}}`},
	}
	serve := func(frame string, send func(string)) {
		send(`{"jsonrpc":"2.0","method":"b"}`)
		send(`{"jsonrpc":"2.0","method":"a"}`)
		send(`{"jsonrpc":"2.0","id":1,"result":{}}`)
	}
	rep, _ := playAgainst(t, frames, HostOptions{}, serve)
	if rep.Notifications != nil || rep.Differs() {
		t.Errorf("notifications compared without being asked: %+v", rep.Notifications)
	}
	rep, _ = playAgainst(t, frames, HostOptions{Notifications: true}, serve)
	n := rep.Notifications
	if n == nil || n.Same || n.At != 0 || n.Was != "a" || n.Is != "b" || !rep.Differs() {
		t.Errorf("notifications: %+v", n)
	}
}

func TestPlayHostPairsABatchMemberByMember(t *testing.T) {
	frames := []frameAt{
		{0, 'h', `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add"}},{"jsonrpc":"2.0","method":"notifications/progress"}]`},
		{10, 's', `[{"jsonrpc":"2.0","id":2,"result":{"sum":5}},{"jsonrpc":"2.0","id":1,"result":{"text":"hi"}}]`},
		{20, 'h', `{"jsonrpc":"2.0","id":3,"method":"ping"}`},
		{30, 's', `{"jsonrpc":"2.0","id":3,"result":{}}`},
	}
	rep, fs := playAgainst(t, frames, HostOptions{Timeout: 2 * time.Second}, func(frame string, send func(string)) {
		if strings.HasPrefix(frame, "[") {
			// The live server answers in another order, add's answer changed.
			send(`[{"jsonrpc":"2.0","id":1,"result":{"text":"hi"}},{"jsonrpc":"2.0","id":2,"result":{"sum":6}}]`)
			return
		}
		send(`{"jsonrpc":"2.0","id":3,"result":{}}`)
	})
	if got := fs.frames(); len(got) != 2 || got[0] != frames[0].frame {
		t.Errorf("the server read:\n%s", strings.Join(got, "\n"))
	}
	if len(rep.Calls) != 3 {
		t.Fatalf("calls: %+v", rep.Calls)
	}
	echo, add := rep.Calls[0], rep.Calls[1]
	if echo.Name != "echo" || echo.ID != "1" || echo.Outcome != OutcomeSame {
		t.Errorf("echo: %+v", echo)
	}
	if add.Name != "add" || add.ID != "2" || add.Outcome != OutcomeChanged || len(add.Changes) != 1 || add.Changes[0] != (sessions.Change{Path: "/result/sum", Was: "5", Now: "6"}) {
		t.Errorf("add: %+v", add)
	}
	if rep.Same != 2 || rep.Changed != 1 || rep.Missing != 0 {
		t.Errorf("counts: %+v", rep)
	}
}

func TestPlayHostComparesALiveAnswerMaskedAsTheRecordingWasAndNeverReportsTheSecret(t *testing.T) {
	red, err := sessions.NewRedactor([]string{"API_TOKEN=tok-1234567890"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	frames := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":1,"method":"whoami"}`},
		{10, 's', `{"jsonrpc":"2.0","id":1,"result":{"token":"***API_TOKEN***"}}`},
		{20, 'h', `{"jsonrpc":"2.0","id":2,"method":"env"}`},
		{30, 's', `{"jsonrpc":"2.0","id":2,"result":{"env":"none"}}`},
	}
	rep, _ := playAgainst(t, frames, HostOptions{Redactor: red}, func(frame string, send func(string)) {
		if strings.Contains(frame, "whoami") {
			send(`{"jsonrpc":"2.0","id":1,"result":{"token":"tok-1234567890"}}`)
		} else {
			send(`{"jsonrpc":"2.0","id":2,"result":{"env":"API_TOKEN=tok-1234567890"}}`)
		}
	})
	if rep.Calls[0].Outcome != OutcomeSame {
		t.Errorf("the answer with the secret masked as recorded: %+v", rep.Calls[0])
	}
	if c := rep.Calls[1]; c.Outcome != OutcomeChanged || len(c.Changes) != 1 || strings.Contains(c.Changes[0].Now, "tok-") || !strings.Contains(c.Changes[0].Now, "***API_TOKEN***") {
		t.Errorf("the changed answer: %+v", c)
	}
}

func TestPlayHostReportsWhatAServerThatStoppedReadingNeverAnswered(t *testing.T) {
	path := writeSession(t, "ndjson", mcpConversation(nil))
	toServer, hostIn := io.Pipe()
	fromServer, serverOut := io.Pipe()
	go func() {
		// The server reads the first frame, and exits.
		bufio.NewReader(toServer).ReadString('\n')
		toServer.Close()
		serverOut.Close()
	}()
	rep, err := PlayHost(context.Background(), path, lineSource{bufio.NewReader(fromServer)}, hostIn, HostOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("PlayHost: %v", err)
	}
	if len(rep.Calls) != 4 || rep.Missing != 4 || !rep.Differs() {
		t.Errorf("report: %+v", rep)
	}
}

func TestHostConnTakesTheServersFramesInAnyPiecesAndTheTapReadsEachBurstAtOnce(t *testing.T) {
	for _, framing := range []string{"ndjson", "lsp"} {
		t.Run(framing, func(t *testing.T) {
			f, _ := classify.ParseFraming(framing)
			frame := func(body string) string {
				if f == classify.FramingLSP {
					return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
				}
				return body + "\n"
			}
			frames := []frameAt{
				{0, 'h', `{"jsonrpc":"2.0","id":1,"method":"a"}`},
				{1, 'h', `{"jsonrpc":"2.0","id":2,"method":"b"}`},
				{2, 's', `{"jsonrpc":"2.0","id":1,"result":1}`},
				{3, 's', `{"jsonrpc":"2.0","id":2,"result":2}`},
				{4, 'h', `{"jsonrpc":"2.0","id":3,"method":"c"}`},
				{5, 's', `{"jsonrpc":"2.0","id":3,"result":3}`},
			}
			path := writeSession(t, framing, frames)
			conn, err := NewHostConn(path, f, HostOptions{Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			var reads []string
			go func() {
				// A tap: each read of the host's output, answered byte by byte.
				in, out := conn.ServerInput(), conn.ServerOutput()
				defer out.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := in.Read(buf)
					if err != nil {
						return
					}
					got := string(buf[:n])
					reads = append(reads, got)
					var answer string
					for _, id := range []string{"1", "2", "3"} {
						if strings.Contains(got, `"id":`+id+`,`) {
							answer += frame(`{"jsonrpc":"2.0","id":` + id + `,"result":` + id + `}`)
						}
					}
					for i := range len(answer) {
						out.Write([]byte{answer[i]})
					}
				}
			}()
			rep, err := conn.Play(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if rep.Same != 3 || rep.Differs() {
				t.Errorf("report: %+v", rep)
			}
			want := []string{frame(frames[0].frame) + frame(frames[1].frame), frame(frames[4].frame)}
			if !slices.Equal(reads, want) {
				t.Errorf("the server read %q, want %q", reads, want)
			}
		})
	}
}

// countingWriter counts the writes to w.
type countingWriter struct {
	io.WriteCloser
	mu     sync.Mutex
	writes []string
}

func (c *countingWriter) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.writes = append(c.writes, string(b))
	c.mu.Unlock()
	return c.WriteCloser.Write(b)
}

func TestPlayHostWritesTheFramesSentBeforeAnAnswerInOneWrite(t *testing.T) {
	frames := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":1,"method":"a"}`},
		{1, 'h', `{"jsonrpc":"2.0","method":"n"}`},
		{2, 'h', `{"jsonrpc":"2.0","id":2,"method":"b"}`},
		{3, 's', `{"jsonrpc":"2.0","id":1,"result":1}`},
		{4, 's', `{"jsonrpc":"2.0","id":2,"result":2}`},
		{5, 'h', `{"jsonrpc":"2.0","id":3,"method":"c"}`},
		{6, 's', `{"jsonrpc":"2.0","id":3,"result":3}`},
	}
	path := writeSession(t, "ndjson", frames)
	toServer, hostIn := io.Pipe()
	fromServer, serverOut := io.Pipe()
	go func() {
		defer serverOut.Close()
		br := bufio.NewReader(toServer)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			m := classify.Classify([]byte(strings.TrimSpace(line)), classify.H2S, classify.JSONRPC)
			if m.HasID() {
				io.WriteString(serverOut, `{"jsonrpc":"2.0","id":`+string(m.ID().Raw)+`,"result":`+string(m.ID().Raw)+"}\n")
			}
		}
	}()
	cw := &countingWriter{WriteCloser: hostIn}
	rep, err := PlayHost(context.Background(), path, lineSource{bufio.NewReader(fromServer)}, cw, HostOptions{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Same != 3 || rep.Differs() {
		t.Errorf("report: %+v", rep)
	}
	want := []string{frames[0].frame + "\n" + frames[1].frame + "\n" + frames[2].frame + "\n", frames[5].frame + "\n"}
	if !slices.Equal(cw.writes, want) {
		t.Errorf("writes %q, want %q", cw.writes, want)
	}
}

// writeRecords writes a session file of frame records, under a header
// that names redact as its masks.
func writeRecords(t *testing.T, redact []string, recs []sessions.FrameRecord) string {
	t.Helper()
	return writeHeaderRecords(t, sessions.Header{Redact: redact}, recs)
}

// writeHeaderRecords writes a session file of frame records under the
// header h (its id, start and name those of a test).
func writeHeaderRecords(t *testing.T, h sessions.Header, recs []sessions.FrameRecord) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h.ID, h.Started, h.Name = "test", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), "test"
	w, err := sessions.NewWriter(f, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.WriteFrame(r); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func h2s(t int64, frame string) sessions.FrameRecord {
	return sessions.FrameRecord{T: t, Dir: classify.H2S, Frame: []byte(frame)}
}

func s2h(t int64, frame string) sessions.FrameRecord {
	return sessions.FrameRecord{T: t, Dir: classify.S2H, Frame: []byte(frame)}
}

// playRecords runs PlayHost on the session file at path against a fake
// server.
func playRecords(t *testing.T, path string, opts HostOptions, handle func(frame string, send func(string))) (*HostReport, *fakeServer) {
	t.Helper()
	toServer, hostIn := io.Pipe()
	fromServer, serverOut := io.Pipe()
	fs := &fakeServer{}
	go func() {
		defer serverOut.Close()
		br := bufio.NewReader(toServer)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSuffix(line, "\n")
			fs.mu.Lock()
			fs.read = append(fs.read, line)
			fs.mu.Unlock()
			handle(line, func(s string) { io.WriteString(serverOut, s+"\n") })
		}
	}()
	rep, err := PlayHost(context.Background(), path, lineSource{bufio.NewReader(fromServer)}, hostIn, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep, fs
}

// echoServer answers every request with its method as its result.
func echoServer(frame string, send func(string)) {
	m := classify.Classify([]byte(frame), classify.H2S, classify.JSONRPC)
	if m.Kind == classify.KindRequest {
		send(`{"jsonrpc":"2.0","id":` + string(m.ID().Raw) + `,"result":"` + m.Method() + `"}`)
	}
}

func TestPlayHostComparesTheAnswersToInjectedRequestsAndSendsNothingTheServerNeverRead(t *testing.T) {
	inject := func(r sessions.FrameRecord) sessions.FrameRecord { r.Src = sessions.SrcInject; return r }
	captured := func(r sessions.FrameRecord) sessions.FrameRecord { r.Captured = true; return r }
	held := func(r sessions.FrameRecord, fate string) sessions.FrameRecord { r.Held = fate; return r }
	path := writeRecords(t, nil, []sessions.FrameRecord{
		h2s(0, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
		s2h(10, `{"jsonrpc":"2.0","id":1,"result":"ping"}`),
		// Injected with --capture: the server read it, its answer was kept from the host.
		inject(h2s(20, `{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/list"}`)),
		captured(s2h(30, `{"jsonrpc":"2.0","id":"rpctap-1","result":"tools/list"}`)),
		// Injected toward the host: the server never sent it, nor read its answer.
		inject(s2h(40, `{"jsonrpc":"2.0","id":"rpctap-2","method":"roots/list"}`)),
		captured(h2s(50, `{"jsonrpc":"2.0","id":"rpctap-2","result":{"roots":[]}}`)),
		// Dropped, and answered in place: the server never read them.
		held(h2s(60, `{"jsonrpc":"2.0","id":2,"method":"dropped"}`), sessions.HeldDropped),
		held(h2s(70, `{"jsonrpc":"2.0","id":3,"method":"answered"}`), sessions.HeldAnswered),
		inject(s2h(80, `{"jsonrpc":"2.0","id":3,"result":"the user's"}`)),
		h2s(90, `{"jsonrpc":"2.0","id":4,"method":"ping"}`),
		s2h(100, `{"jsonrpc":"2.0","id":4,"result":"ping"}`),
	})
	rep, fs := playRecords(t, path, HostOptions{Timeout: 2 * time.Second}, echoServer)
	if rep.Same != 3 || rep.Missing != 0 || rep.Differs() {
		t.Errorf("want the two pings and the injected tools/list the same, nothing missing; got %+v", rep.Calls)
	}
	for _, f := range fs.frames() {
		if strings.Contains(f, "dropped") || strings.Contains(f, "answered") || strings.Contains(f, "roots") {
			t.Errorf("the server was sent %s, which it never read", f)
		}
	}
}

func TestPlayHostComparesAListOfToolsByNameNotPosition(t *testing.T) {
	path := writeRecords(t, nil, []sessions.FrameRecord{
		h2s(0, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`),
		s2h(10, `{"jsonrpc":"2.0","id":1,"result":{"tools":[`+echoTool+`,`+addTool+`]}}`),
		h2s(20, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`),
		s2h(30, `{"jsonrpc":"2.0","id":2,"result":{"tools":[`+echoTool+`,`+addTool+`]}}`),
	})
	sleep := `{"name":"sleep","inputSchema":{"type":"object"}}`
	n := 0
	rep, _ := playRecords(t, path, HostOptions{}, func(frame string, send func(string)) {
		n++
		id := fmt.Sprint(n)
		if n == 1 { // the same tools in another order
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[` + addTool + `,` + echoTool + `]}}`)
		} else { // one added first
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[` + sleep + `,` + echoTool + `,` + addTool + `]}}`)
		}
	})
	if c := rep.Calls[0]; c.Outcome != OutcomeSame {
		t.Errorf("the same tools in another order: %+v", c)
	}
	if c := rep.Calls[1]; c.Outcome != OutcomeChanged || len(c.Changes) != 1 ||
		c.Changes[0] != (sessions.Change{Path: "/result/tools/0", Now: `{"inputSchema":{"type":"object"},"name":"sleep"}`, Item: "name=sleep"}) {
		t.Errorf("a tool added first: want that one change; got %+v", c)
	}
}

func TestPlayHostTakesASecretTheRecordingMaskedForAnyValueAndMasksItAgain(t *testing.T) {
	masked := func(r sessions.FrameRecord) sessions.FrameRecord { r.Redacted = true; return r }
	path := writeRecords(t, []string{"DBPASS"}, []sessions.FrameRecord{
		h2s(0, `{"jsonrpc":"2.0","id":1,"method":"env"}`),
		masked(s2h(10, `{"jsonrpc":"2.0","id":1,"result":{"text":"DBPASS=***DBPASS***\n","n":1}}`)),
		h2s(20, `{"jsonrpc":"2.0","id":2,"method":"env"}`),
		masked(s2h(30, `{"jsonrpc":"2.0","id":2,"result":{"text":"DBPASS=***DBPASS***\n","n":1}}`)),
	})
	red, err := sessions.NewRedactor([]string{"DBPASS=hunter2-s3cr3t-77"}, []string{"DBPASS"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		red  *sessions.Redactor
	}{{"with the secret's value", red}, {"with no value for it", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			rep, _ := playRecords(t, path, HostOptions{Redactor: tc.red}, func(frame string, send func(string)) {
				n++
				other := map[bool]string{true: "1", false: "2"}[n == 1]
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"text":"DBPASS=hunter2-s3cr3t-77\n","n":%s}}`, n, other))
			})
			if c := rep.Calls[0]; c.Outcome != OutcomeSame {
				t.Errorf("the answer with the masked secret: %+v", c)
			}
			if c := rep.Calls[1]; c.Outcome != OutcomeChanged || len(c.Changes) != 1 || c.Changes[0].Path != "/result/n" {
				t.Errorf("the answer that changed elsewhere: want /result/n changed; got %+v", c)
			}
			if got := fmt.Sprint(rep); tc.red != nil && strings.Contains(got, "hunter2") {
				t.Errorf("the report holds the secret: %s", got)
			}
		})
	}
}

func TestReplayMasksWhatTheRecordingsHeaderSaysItMasked(t *testing.T) {
	path := writeRecords(t, []string{"DBPASS", "API_TOKEN", "GONE", "GIVEN"}, []sessions.FrameRecord{h2s(0, `{"jsonrpc":"2.0","method":"x"}`)})
	h, _ := sessions.NewReader(strings.NewReader(mustRead(t, path))).Header()
	if !slices.Equal(h.Redact, []string{"DBPASS", "API_TOKEN", "GONE", "GIVEN"}) {
		t.Fatalf("the header read back names %q", h.Redact)
	}
	env := []string{"DBPASS=hunter2-s3cr3t-77", "API_TOKEN=tok-1234567890", "GIVEN=given-value"}
	red, err := RedactionOf(path, env, []string{"GIVEN=other-value", "MORE=more-value"})
	if err != nil {
		t.Fatal(err)
	}
	// API_TOKEN is masked as every secret of the environment is; GONE
	// has no value here.
	if !slices.Equal(red.Flags, []string{"GIVEN=other-value", "MORE=more-value", "DBPASS"}) || !slices.Equal(red.Unset, []string{"GONE"}) {
		t.Errorf("flags %q, unset %q", red.Flags, red.Unset)
	}
	r, err := sessions.NewRedactor(env, red.Flags)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.MaskString("hunter2-s3cr3t-77 tok-1234567890"); got != "***DBPASS*** ***API_TOKEN***" {
		t.Errorf("masked %q", got)
	}
	if got := r.Names(); !slices.Equal(got, []string{"API_TOKEN", "DBPASS", "GIVEN", "MORE"}) {
		t.Errorf("names %q", got)
	}
	// A file from before headers named their masks.
	old := writeRecords(t, nil, []sessions.FrameRecord{h2s(0, `{"jsonrpc":"2.0","method":"x"}`)})
	if red, err := RedactionOf(old, env, nil); err != nil || len(red.Flags) != 0 || len(red.Unset) != 0 {
		t.Errorf("an old file: %+v, %v", red, err)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The recording's masks are read once per replay: comparing an answer
// the recording masked costs what comparing one it did not mask costs,
// however many secrets its header names.
func TestReplayReadsTheRecordingsMasksOnce(t *testing.T) {
	var names []string
	for i := range 50 {
		names = append(names, fmt.Sprintf("SECRET_%d", i))
	}
	path := writeRecords(t, names, []sessions.FrameRecord{h2s(0, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)})
	p, err := newPlayer(path, HostOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.f.Close()
	recorded, now := []byte(`{"jsonrpc":"2.0","id":1,"result":{"n":1}}`), []byte(`{"jsonrpc":"2.0","id":1,"result":{"n":2}}`)
	allocs := func(masked bool) float64 {
		return testing.AllocsPerRun(20, func() {
			p.detailed = 0
			p.compare(&CallResult{}, recorded, now, masked)
		})
	}
	// Building the 50 masks again would cost 50 allocations or more; the
	// race detector's runtime may add one here or there.
	if plain, masked := allocs(false), allocs(true); masked > plain+5 {
		t.Errorf("comparing a masked answer made %.0f allocations, an unmasked one %.0f: the masks are built again for each answer", masked, plain)
	}
}

// confirmServer is a live server of tool confirm: with ask, the first
// call answers input_required with requestState live, and a retry that
// sends it back answers "confirmed deploy" (another state: an error
// result); without ask, every call answers "confirmed deploy" at once.
func confirmServer(ask bool) func(string, func(string)) {
	return func(frame string, send func(string)) {
		m := classify.Classify([]byte(frame), classify.H2S, classify.JSONRPC)
		if m.Kind != classify.KindRequest {
			return
		}
		id := string(m.ID().Raw)
		switch {
		case m.Method() == "server/discover":
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`)
		case !ask || strings.Contains(frame, `"requestState":"live"`):
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","content":[{"type":"text","text":"confirmed deploy"}]}}`)
		case strings.Contains(frame, `"requestState"`):
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"complete","isError":true,"content":[{"type":"text","text":"a requestState confirm never gave"}]}}`)
		default:
			send(`{"jsonrpc":"2.0","id":` + id + `,"result":{"resultType":"input_required","requestState":"live","inputRequests":{"confirm":{"method":"elicitation/create","params":{"message":"Confirm deploy?"}}}}}`)
		}
	}
}

// oneConfirmCall is a 2026-07-28 session with one multi round-trip call
// (lines 4 to 7), confirmed, whose recorded requestState is sA.
func oneConfirmCall() []frameAt {
	return twoConfirmCalls()[:6]
}

// A multi round-trip call is one call in the report, from its first
// request to its final answer: the retry sent is the recorded one with
// the live server's requestState, not the recorded one, and the final
// answers are compared.
func TestPlayHostRetriesAMultiRoundTripCallWithTheLiveRequestStateAndReportsOneCall(t *testing.T) {
	rep, fs := playAgainst(t, oneConfirmCall(), HostOptions{Timeout: 5 * time.Second}, confirmServer(true))
	var retry string
	for _, f := range fs.frames() {
		if strings.Contains(f, "inputResponses") {
			retry = f
		}
	}
	if !strings.Contains(retry, `"requestState":"live"`) || !strings.Contains(retry, `"id":3`) || !strings.Contains(retry, `"confirmed":true`) {
		t.Errorf("the retry sent was %s\nwant the recorded one (id 3, its inputResponses) with the live requestState", retry)
	}
	if len(rep.Calls) != 2 || rep.Retries != 1 {
		t.Fatalf("the report holds %d results and %d retries, want the discovery and one call, and 1 retry: %+v", len(rep.Calls), rep.Retries, rep.Calls)
	}
	c := rep.Calls[1]
	if c.Line != 4 || c.Outcome != OutcomeSame || c.Rounds != 2 || c.RecordedRounds != 2 || c.Recorded != 30*time.Microsecond {
		t.Errorf("the call: %+v\nwant line 4, same, 2 rounds on both sides, recorded 30µs from its first request to its final answer", c)
	}
	var text strings.Builder
	WriteHostText(&text, HostRun{File: "s.jsonl", Argv: []string{"server"}}, rep)
	for _, want := range []string{"tools/call confirm  id 2     same", ", 2 rounds)", "2 calls, 3 requests: 2 same, 0 changed"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, text.String())
		}
	}
}

// A live server that answers at once the call the recording took two
// rounds for: the recorded retry is not sent, the final answers are
// compared, and the call is changed only in its rounds.
func TestPlayHostComparesAMultiRoundTripCallAnsweredAtOnceByItsFinalAnswer(t *testing.T) {
	rep, fs := playAgainst(t, oneConfirmCall(), HostOptions{Timeout: 5 * time.Second}, confirmServer(false))
	for _, f := range fs.frames() {
		if strings.Contains(f, "inputResponses") {
			t.Errorf("a retry was sent to a server that answered at once: %s", f)
		}
	}
	if len(rep.Calls) != 2 {
		t.Fatalf("the report holds %d results, want 2: %+v", len(rep.Calls), rep.Calls)
	}
	if c := rep.Calls[1]; c.Outcome != OutcomeChanged || c.Rounds != 1 || c.RecordedRounds != 2 || len(c.Changes) != 0 {
		t.Errorf("the call: %+v\nwant changed in its rounds only (1 now, 2 recorded)", c)
	}
	var text strings.Builder
	WriteHostText(&text, HostRun{File: "s.jsonl", Argv: []string{"server"}}, rep)
	if !strings.Contains(text.String(), ", 1 round, recorded 2)") {
		t.Errorf("the report does not say the rounds differ:\n%s", text.String())
	}
}

// A multi round-trip call whose first request the live server never
// answers is missing from the report once, and its recorded retry is not
// sent (it retries nothing the live server began).
func TestPlayHostReportsAMultiRoundTripCallNeverAnsweredMissingOnceAndSendsNoRetry(t *testing.T) {
	answer := confirmServer(true)
	rep, fs := playAgainst(t, oneConfirmCall(), HostOptions{Timeout: 300 * time.Millisecond}, func(frame string, send func(string)) {
		if !strings.Contains(frame, "tools/call") {
			answer(frame, send)
		}
	})
	for _, f := range fs.frames() {
		if strings.Contains(f, "inputResponses") {
			t.Errorf("a retry was sent of a call the server never answered: %s", f)
		}
	}
	if len(rep.Calls) != 2 || rep.Missing != 1 || rep.Calls[1].Outcome != OutcomeMissing || rep.Calls[1].Line != 4 {
		t.Errorf("the report: %+v\nwant the discovery and the call of line 4, missing, once", rep.Calls)
	}
}
