package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/sessions"
)

// liveHost is a long-lived host: the test holds the pipes of `rpctap run
// -- SERVER`, does the MCP handshake, and keeps the session open while
// rpctap inject sends frames into it.
type liveHost struct {
	name, record string
	cmd          *exec.Cmd
	stdin        io.WriteCloser
	mu           sync.Mutex
	got          []string // lines the host read
	changed      chan struct{}
	done         chan struct{}
	stderr       *lockedBuffer
	// meta is the _meta members of the host's requests when it speaks
	// 2026-07-28 (see discover), "" when it did a handshake.
	meta string
}

func startLiveHost(t *testing.T, name string, server ...string) *liveHost {
	t.Helper()
	return startLiveHostWith(t, name, nil, server...)
}

// startLiveHostWith is startLiveHost with more flags for rpctap run.
func startLiveHostWith(t *testing.T, name string, flags []string, server ...string) *liveHost {
	t.Helper()
	bin := rpctapBinary(t)
	h := &liveHost{name: name, record: filepath.Join(t.TempDir(), name+".jsonl"), changed: make(chan struct{}, 1), done: make(chan struct{})}
	args := append([]string{"run", "--name", name, "--record", h.record}, flags...)
	h.cmd = exec.Command(bin, append(append(args, "--"), server...)...)
	h.cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	h.stderr = &lockedBuffer{b: new(bytes.Buffer)}
	h.cmd.Stderr = h.stderr
	h.stdin, _ = h.cmd.StdinPipe()
	out, _ := h.cmd.StdoutPipe()
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(h.done)
		br := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				h.mu.Lock()
				h.got = append(h.got, line)
				h.mu.Unlock()
				select {
				case h.changed <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { h.cmd.Process.Kill(); h.cmd.Wait() })
	return h
}

func (h *liveHost) send(t *testing.T, frame string) {
	t.Helper()
	if _, err := io.WriteString(h.stdin, frame+"\n"); err != nil {
		t.Fatal(err)
	}
}

// waitLine waits until the host has read a line holding substr.
func (h *liveHost) waitLine(t *testing.T, substr string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		h.mu.Lock()
		for _, l := range h.got {
			if strings.Contains(l, substr) {
				h.mu.Unlock()
				return
			}
		}
		h.mu.Unlock()
		select {
		case <-h.changed:
		case <-deadline:
			t.Fatalf("the host never read a line with %s; it read %q", substr, h.lines())
		}
	}
}

// lastStderr is the server's last line on stderr (not rpctap's),
// escaped and cut for a table.
func (h *liveHost) lastStderr() string {
	last := ""
	for _, l := range strings.Split(h.stderr.String(), "\n") {
		if l != "" && !strings.HasPrefix(l, "rpctap:") {
			last = l
		}
	}
	return "`" + classify.EscapeString(last, 100) + "`"
}

func (h *liveHost) lines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.got...)
}

// handshake does the MCP initialize handshake, and waits until the tap
// has recorded the host's initialized notification, so that injections
// come after it on the wire.
func (h *liveHost) handshake(t *testing.T) {
	t.Helper()
	h.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rpctap-e2e-host","version":"1"}}}`)
	h.waitLine(t, `"protocolVersion"`)
	h.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.waitRecorded(t, "notifications/initialized")
}

// meta20260728 is the _meta members of a 2026-07-28 request of the host.
const meta20260728 = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`

// discover asks the server what revisions it speaks, as a 2026-07-28
// host does: with a server that offers 2026-07-28, the host speaks it
// (h.meta), else it falls back to the initialize handshake.
func (h *liveHost) discover(t *testing.T) {
	t.Helper()
	h.send(t, `{"jsonrpc":"2.0","id":"host-discover","method":"server/discover","params":{"_meta":{`+meta20260728+`}}}`)
	h.waitLine(t, `"host-discover"`)
	for _, l := range h.lines() {
		if strings.Contains(l, `"host-discover"`) && strings.Contains(l, `"supportedVersions"`) && strings.Contains(l, `"2026-07-28"`) {
			h.meta = meta20260728
			h.waitRecorded(t, "supportedVersions")
			return
		}
	}
	h.handshake(t)
}

// params are a request's params with the host's _meta, and more
// members (as JSON object members, "" for none).
func (h *liveHost) params(members string) string {
	if h.meta == "" {
		return "{" + members + "}"
	}
	if members != "" {
		members += ","
	}
	return `{` + members + `"_meta":{` + h.meta + `}}`
}

// listTools has the host list the server's tools, and waits until the
// tap has recorded the list.
func (h *liveHost) listTools(t *testing.T) {
	t.Helper()
	h.send(t, `{"jsonrpc":"2.0","id":"host-tools","method":"tools/list","params":`+h.params("")+`}`)
	h.waitLine(t, `"host-tools"`)
	h.waitRecorded(t, "inputSchema")
}

// waitRecorded waits until the session file holds substr.
func (h *liveHost) waitRecorded(t *testing.T, substr string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(h.record); bytes.Contains(b, []byte(substr)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session file never held %s", substr)
		}
	}
}

// close ends the session as a host does, closing the server's stdin.
func (h *liveHost) close(t *testing.T) {
	t.Helper()
	h.stdin.Close()
	select {
	case <-h.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the tap did not end after the host closed its stdin")
	}
	h.cmd.Wait()
}

// inject runs the built binary's inject against the host's tap, and
// returns its stdout, then its stderr, and its exit status.
func (h *liveHost) inject(t *testing.T, args ...string) ([]byte, int) {
	t.Helper()
	cmd := exec.Command(rpctapBinary(t), append([]string{"inject", "--tap", h.name}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return append(out.Bytes(), errb.Bytes()...), ee.ExitCode()
	case err != nil:
		t.Fatalf("rpctap inject %q: %v", args, err)
	}
	return append(out.Bytes(), errb.Bytes()...), 0
}

// A catalogServer is a real server the catalog is injected into.
type catalogServer struct {
	name string
	argv []string
	// slow is a tools/call's name and arguments (object members) for a
	// call that takes a second, to have a request in flight for the
	// entries that name one.
	slow string
}

func catalogServers(t *testing.T) []catalogServer {
	return []catalogServer{
		{"server-everything", []string{needPeer(t, "node_modules/.bin/mcp-server-everything"), "stdio"},
			`"name":"trigger-long-running-operation","arguments":{"duration":1,"steps":2}`},
		{"Go SDK server", []string{needPeer(t, "bin/server")},
			`"name":"sleep","arguments":{"duration":"1s"}`},
	}
}

// judgeTimeout is the timeout check judges the catalog sessions by.
const judgeTimeout = 2 * time.Second

// The catalog results table (docs/catalog-results.md) is what this test
// sees: every catalog entry injected toward server-everything and toward
// the Go SDK server, each followed by a captured ping; the session file
// records what each server answered, and rpctap check on it says whether
// the server followed the strict rule. Run with -update to rewrite the
// table; without, the test fails when the servers' behaviour no longer
// matches it.
func TestCatalogResultsAgainstRealServers(t *testing.T) {
	servers := catalogServers(t)
	results := make([]map[string]string, len(servers))
	for i, s := range servers {
		results[i] = runCatalog(t, s)
	}
	var b strings.Builder
	b.WriteString(catalogResultsHead)
	fmt.Fprintf(&b, "| entry | what the rule requires | %s | %s |\n|---|---|---|---|\n", servers[0].name, servers[1].name)
	for _, e := range inject.Catalog() {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", e.Name, mdCell(e.Rule), mdCell(results[0][e.Name]), mdCell(results[1][e.Name]))
	}
	path := "../../docs/catalog-results.md"
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, _ := os.ReadFile(path)
	if string(old) != b.String() {
		t.Errorf("the servers' answers differ from %s; if the change is right, run: go test ./cmd/rpctap -run TestCatalogResultsAgainstRealServers -update\n--- now:\n%s", path, b.String())
	}
}

const catalogResultsHead = `# The edge-case catalog against real servers

Generated by ` + "`go test ./cmd/rpctap -run TestCatalogResultsAgainstRealServers -update`" + `
from real runs: a long-lived host (the test) does the MCP handshake through
` + "`rpctap run`" + `, then the built binary's ` + "`rpctap inject --catalog NAME`" + ` sends
each entry toward the server, followed by a captured ping. For entries that
name a request in flight, the host first starts a tools/call that takes a
second. The large frame is 2 MiB. A server that exits on an entry is
counted as not following its rule, and started again, in a new session,
for the next entry. The entries of a revision's rule (` + "`*-2026`" + `) and
` + "`bad-tool-arguments`" + ` run in a session of their own, built from what it
showed: the host asks ` + "`server/discover`" + ` first and speaks 2026-07-28 (its
_meta on every request) with a server that offers that revision (the Go
SDK server), else falls back to the initialize handshake of 2025-11-25
(server-everything), and lists the tools; in a 2026-07-28 session the
ping after each entry is a tools/list.

Each cell says whether ` + "`rpctap check --timeout 2s`" + ` on the session found that
the server followed the rule, then what the server answered (answers paired
with the entry's frames by id, and errors that name no request linked to
it). How a cell is judged:

- a frame a strict server must refuse (rpctap owes it a strict answer):
  **yes** when check reports no ` + "`unanswered-invalid`" + ` for it;
- a valid request: **yes** when check reports no ` + "`timeout`" + ` (it was
  answered), and for ` + "`unknown-method`" + ` the answer is -32601;
  ` + "`null-id-request`" + `, ` + "`duplicate-member`" + ` and ` + "`batch`" + ` (an MCP peer
  of 2025-11-25 refuses them) need an error;
- a notification or a response: **yes** when check flags no answer to it
  (` + "`unmatched-response`" + `, ` + "`error-names-no-request`" + `);
- ` + "`ping-2026`" + `, in a 2026-07-28 session: **yes** when the answer is
  -32601 (the revision removed ping); ` + "`bad-tool-arguments`" + `: **yes** when
  the answer is an error, or a tool error (isError: true);
- **either** where the rule allows both (a notification's name sent with an
  id may or may not be answered), **—** where the rule asks nothing of the
  receiver (` + "`id-reused`" + `: the tracker flags the sender).

`

func mdCell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }

// runCatalog injects every entry into a session with s, and judges what
// it did with each: entry name → table cell. A server that exits on an
// entry is started again, in a new session, for the next one.
func runCatalog(t *testing.T, s catalogServer) map[string]string {
	cells := map[string]string{}
	var h *liveHost
	var sent []int       // entries sent in h's session
	fromSession := false // h's session is the one of the entries built from it
	judge := func() {
		for k, v := range judgeCatalog(t, h.record, sent, h.meta != "") {
			cells[k] = v
		}
		h, sent = nil, nil
	}
	end := func() {
		time.Sleep(judgeTimeout + 1500*time.Millisecond) // the slow calls end, the timeout passes
		h.close(t)
		judge()
	}
	for i, e := range inject.Catalog() {
		if h != nil && fromSession != e.FromSession() {
			end()
		}
		if h == nil {
			h = startLiveHost(t, fmt.Sprintf("catalog-%d-%d", time.Now().UnixNano(), i), s.argv...)
			if fromSession = e.FromSession(); fromSession {
				h.discover(t)
				h.listTools(t)
			} else {
				h.handshake(t)
			}
		}
		args := []string{"--catalog", e.Name, "--dir", "h2s"} // every entry toward the server, a server's ones too
		if e.NeedsID {
			id := fmt.Sprintf(`"host-slow-%d"`, i)
			meta := `"_meta":{"progressToken":` + id + `}`
			if h.meta != "" {
				meta = `"_meta":{"progressToken":` + id + `,` + h.meta + `}`
			}
			h.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{`+s.slow+`,`+meta+`}}`)
			h.waitRecorded(t, strings.Trim(id, `"`))
			args = append(args, "--id", id)
		}
		if e.Sized {
			args = append(args, "--size", "2097152")
		}
		// A server that exits on the entry may end the session before the
		// tap has answered the inject (it then says the tap did not
		// answer): that counts as the server exiting, as does a ping
		// after the entry that gets no answer.
		what := "the inject of " + e.Name
		out, code := h.inject(t, args...)
		if code == 0 {
			sent = append(sent, i)
			barrier := fmt.Sprintf(`{"jsonrpc":"2.0","id":"rpctap-barrier-%d","method":"ping"}`, i)
			if h.meta != "" { // 2026-07-28 has no ping
				barrier = fmt.Sprintf(`{"jsonrpc":"2.0","id":"rpctap-barrier-%d","method":"tools/list","params":%s}`, i, h.params(""))
			}
			what = "the ping after " + e.Name
			if out, code = h.inject(t, "--capture", "--json", "--wait", "20s", barrier); code == 0 {
				continue
			}
		} else {
			sent = append(sent, i)
		}
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s failed (exit %d), and the server still runs: %s", what, code, out)
		}
		h.cmd.Wait()
		status, said := h.cmd.ProcessState.ExitCode(), h.lastStderr()
		judge()
		cells[e.Name] = fmt.Sprintf("**no**: the server exited (status %d) and said on stderr: %s", status, said)
	}
	if h != nil {
		end()
	}
	return cells
}

// judgeCatalog reads the session file and rpctap check's report of it.
// in2026 says the host spoke 2026-07-28 in it.
func judgeCatalog(t *testing.T, record string, sent []int, in2026 bool) map[string]string {
	out, _ := exec.Command(rpctapBinary(t), "check", "--json", "--timeout", judgeTimeout.String(), "--fail-on", "none", record).Output()
	var doc checkDoc
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("rpctap check --json: %v\n%s", err, out)
	}
	found := map[int][]checkFinding{}
	for _, f := range doc.Findings {
		found[f.Line] = append(found[f.Line], f)
	}

	f, err := os.Open(record)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := sessions.NewReader(f)
	hdr, _ := rd.Header()
	tr := classify.NewTracker(classify.TrackerOptions{Timeout: judgeTimeout})
	catalog := inject.Catalog()
	type entryRun struct {
		lines   []int
		frames  []classify.Message
		answers []string
		flagged []string // check's findings about answers to it
	}
	runs := make([]entryRun, len(sent))
	owner := map[int64]int{} // frame line → entry index
	cur := -1                // the entry injected last
	pendingFrames := 0       // frames of the current entry still to come
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !ev.IsFrame() || ev.Dir == classify.Err {
			tr.Advance(time.Duration(ev.T) * time.Microsecond)
			continue
		}
		m := hdr.Classify(bytes.Clone(ev.Frame), ev.Dir, tr.Profile())
		obs := tr.Observe(int64(ev.Line), time.Duration(ev.T)*time.Microsecond, &m)
		switch {
		case ev.Dir == classify.H2S && ev.Src == sessions.SrcInject && bytes.Contains(ev.Frame, []byte("rpctap-barrier")):
			continue
		case ev.Dir == classify.H2S && ev.Src == sessions.SrcInject:
			if pendingFrames == 0 {
				cur++
				fs, _ := catalog[sent[cur]].Frames(inject.Params{ID: `"x"`, Size: 2097152, Tools: []inject.Tool{{Name: "x", Schema: json.RawMessage(`{"type":"object","required":["a"]}`)}}})
				pendingFrames = len(fs)
			}
			pendingFrames--
			owner[int64(ev.Line)] = cur
			runs[cur].lines = append(runs[cur].lines, ev.Line)
			runs[cur].frames = append(runs[cur].frames, m)
			continue
		case ev.Dir == classify.H2S && bytes.Contains(ev.Frame, []byte("host-slow-")):
			owner[int64(ev.Line)] = cur + 1 // the slow call is started for the next entry
			continue
		case ev.Dir != classify.S2H || (m.Kind != classify.KindResponse && m.Kind != classify.KindBatch):
			continue
		}
		who, ok := -1, false
		for _, p := range obs.Pairs {
			if who, ok = owner[p.Request]; ok {
				break
			}
		}
		if !ok {
			if len(obs.Pairs) > 0 {
				continue // the answer to the host's own request, or a ping's
			}
			for _, sf := range obs.Findings {
				if sf.Code == classify.CodeErrorNamesNoRequest && sf.Related != 0 {
					who, ok = owner[sf.Related]
				}
			}
		}
		if !ok {
			if bytes.Contains(ev.Frame, []byte("rpctap-barrier")) || cur < 0 {
				continue
			}
			who = cur // an answer no id links: to the entry sent last
		}
		answer := answerText(&m)
		for _, cf := range found[ev.Line] {
			switch cf.Code {
			case "unmatched-response", "error-names-no-request", "duplicate-response":
				runs[who].flagged = append(runs[who].flagged, cf.Code)
			case "tool-error":
				answer += " with isError: true"
			}
		}
		runs[who].answers = append(runs[who].answers, answer)
	}
	if cur != len(sent)-1 {
		t.Fatalf("the session file holds %d catalog entries, want %d", cur+1, len(sent))
	}
	cells := map[string]string{}
	for i, ei := range sent {
		e, r := catalog[ei], runs[i]
		var codes []string
		for _, l := range r.lines {
			for _, cf := range found[l] {
				codes = append(codes, cf.Code)
			}
		}
		// In sorted order: a server may answer requests that are in
		// flight together in any order (the Go SDK's does).
		answered := strings.Join(slices.Sorted(slices.Values(r.answers)), "; ")
		if answered == "" {
			answered = "nothing"
		}
		cells[e.Name] = verdict(e, r.frames, codes, r.answers, r.flagged, in2026) + ": " + answered
	}
	return cells
}

// verdict judges an entry by the rules the table's head states.
func verdict(e inject.Entry, frames []classify.Message, codes, answers, flagged []string, in2026 bool) string {
	has := func(c string) bool {
		for _, x := range codes {
			if x == c {
				return true
			}
		}
		return false
	}
	anyError := false
	for _, a := range answers {
		if strings.HasPrefix(a, "error") || strings.HasPrefix(a, "array of errors") {
			anyError = true
		}
	}
	yes := func(ok bool) string {
		if ok {
			return "**yes**"
		}
		return "**no**"
	}
	m := frames[0]
	switch {
	case e.Name == "id-reused":
		return "—"
	case m.Answer != nil:
		return yes(!has("unanswered-invalid"))
	case e.Name == "null-id-request", e.Name == "duplicate-member", e.Name == "batch":
		return yes(anyError)
	case m.Has(classify.CodeNotificationAsRequest):
		return "either"
	case e.Name == "bad-tool-arguments":
		refused := anyError
		for _, a := range answers {
			refused = refused || strings.HasSuffix(a, "with isError: true")
		}
		return yes(refused)
	case e.Name == "unknown-method", e.Name == "ping-2026" && in2026:
		return yes(!has("timeout") && len(answers) > 0 && strings.HasPrefix(answers[0], "error -32601"))
	case m.Kind == classify.KindRequest:
		return yes(!has("timeout") && len(flagged) == 0)
	}
	return yes(len(flagged) == 0)
}

// answerText says what a response is: "result", "error -32600 (id null)",
// "array of errors: ...".
func answerText(m *classify.Message) string {
	if m.Kind == classify.KindBatch {
		var parts []string
		errs := true
		for i := range m.Members {
			parts = append(parts, answerText(&m.Members[i]))
			errs = errs && m.Members[i].HasError()
		}
		what := "array of results"
		if errs {
			what = "array of errors"
		}
		return what + " [" + strings.Join(parts, ", ") + "]"
	}
	s := "result"
	if m.HasError() {
		s = "error"
		if c, ok := m.ErrorCode(); ok {
			s = fmt.Sprintf("error %d", c)
		}
	}
	id := m.ID()
	switch {
	case !m.HasID():
		s += " (no id)"
	case id.IsNull():
		s += " (id null)"
	default:
		s += " (id " + classify.Escape(id.Raw, 40) + ")"
	}
	return s
}
