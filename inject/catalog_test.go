package inject

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// The catalog holds one entry for each edge case it is there to cover,
// each named below.
func TestCatalogHasAnEntryForEveryCaseOfTheIssue(t *testing.T) {
	want := []string{"null-id-request", "object-id", "array-id", "boolean-id", "number-method", "jsonrpc-spec-invalid",
		"batch", "empty-batch", "scalar-null", "scalar-number", "scalar-string", "scalar-true", "not-json",
		"error-null-id", "error-no-id", "result-null-id", "result-and-error", "stdout-log-null-id", "empty-object",
		"initialized-request", "notification-with-id", "request-without-id", "unknown-method", "string-and-number-id",
		"unsafe-integer-id", "fractional-id", "duplicate-member", "error-message-not-string", "leaky-error",
		"unsafe-text", "large-frame", "cancel-in-flight", "progress-in-flight", "id-reused"}
	var got []string
	for _, e := range Catalog() {
		if e.Rule == "" || strings.Contains(e.Rule, "\n") {
			t.Errorf("%s: the rule must be one line, and it is %q", e.Name, e.Rule)
		}
		if slices.Contains(got, e.Name) {
			t.Errorf("%s is in the catalog twice", e.Name)
		}
		got = append(got, e.Name)
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("the catalog has no entry %s", w)
		}
	}
	if _, err := LookupErr("no-such"); err == nil || !strings.Contains(err.Error(), "rpctap catalog lists them") {
		t.Errorf("an unknown name: %v", err)
	}
}

// A catalogSession is the session an entry's frames are read in: of no
// revision the tracker knows (the envelope's entries), of 2026-07-28
// (each request names it in _meta) or of an older revision (an
// initialize handshake of 2025-11-25, a host that declared roots).
type catalogSession int

const (
	sessionAny catalogSession = iota
	session2026
	sessionOlder
)

// catalogMeta is the _meta of the 2026-07-28 session's requests.
const catalogMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// catalogTools is the tools/list result of the sessions of the entries
// that call a listed tool.
const catalogTools = `{"tools":[{"name":"anything","inputSchema":{"type":"object"}},{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}]}`

// anythingTool and echoTool are the tools catalogTools lists: one that
// takes any arguments, and one that requires a string.
var (
	anythingTool = Tool{Name: "anything", Schema: json.RawMessage(`{"type":"object"}`)}
	echoTool     = Tool{Name: "echo", Schema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`)}
)

// raised reads e's frames as their receiver reads them (the server, for
// entries that make sense either way) under MCP, in session s, with the
// request its id names in flight from the entry's side; it returns the
// findings raised on them, and the strict answers classify owes them.
func raised(t *testing.T, e Entry, s catalogSession) (map[classify.Code]bool, []*classify.Answer) {
	t.Helper()
	dir := e.Dir
	if dir == Either {
		dir = classify.H2S
	}
	tr := classify.NewTracker(classify.TrackerOptions{Profile: classify.MCP, Timeout: time.Second})
	seq := int64(0)
	observe := func(frame string, d classify.Direction) []classify.SessionFinding {
		seq++
		m := classify.Classify([]byte(frame), d, classify.MCP)
		return tr.Observe(seq, time.Duration(seq)*time.Millisecond, &m).Findings
	}
	p := Params{ID: `"rpctap-9"`, Size: 4096}
	switch s {
	case session2026:
		p.Meta = []byte(catalogMeta)
		observe(`{"jsonrpc":"2.0","id":"host-discover","method":"server/discover","params":{"_meta":`+catalogMeta+`}}`, classify.H2S)
		observe(`{"jsonrpc":"2.0","id":"host-discover","result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`, classify.S2H)
	case sessionOlder:
		observe(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}`, classify.H2S)
		observe(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`, classify.S2H)
		observe(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, classify.H2S)
	}
	if e.NeedsTools {
		p.Tools = []Tool{anythingTool, echoTool}
		list := `{"jsonrpc":"2.0","id":"host-tools","method":"tools/list"}`
		if s == session2026 {
			list = `{"jsonrpc":"2.0","id":"host-tools","method":"tools/list","params":{"_meta":` + catalogMeta + `}}`
		}
		observe(list, classify.H2S)
		observe(`{"jsonrpc":"2.0","id":"host-tools","result":`+catalogTools+`}`, classify.S2H)
	}
	inFlight := `{"jsonrpc":"2.0","id":"rpctap-9","method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"rpctap-9"}}}`
	if s == session2026 {
		inFlight = `{"jsonrpc":"2.0","id":"rpctap-9","method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"rpctap-9","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	}
	frames, err := e.Frames(p)
	if err != nil {
		t.Fatal(err)
	}
	// A response, or a progress notification, is about a request from
	// the other side; any other frame about one from its own side.
	if first := classify.Classify(frames[0], dir, classify.MCP); first.Kind == classify.KindResponse || first.MethodIs("notifications/progress") {
		observe(inFlight, dir.Opposite())
	} else {
		observe(inFlight, dir)
	}
	got := map[classify.Code]bool{}
	var answers []*classify.Answer
	for _, f := range frames {
		seq++
		m := classify.Classify(f, dir, classify.MCP)
		for _, x := range append([]classify.Message{m}, m.Members...) {
			for _, fd := range x.Findings {
				got[fd.Code] = true
			}
		}
		if m.Answer != nil {
			answers = append(answers, m.Answer)
		}
		for _, sf := range tr.Observe(seq, time.Duration(seq)*time.Millisecond, &m).Findings {
			got[sf.Code] = true
		}
	}
	return got, answers
}

// Each entry's frame raises the findings it is there to test, read as its
// receiver reads it (the server, for entries that make sense either way)
// under MCP, in a session where the request its id names is in flight from
// the entry's side; an entry of a revision's rule raises Codes in a
// session of that revision and OlderCodes (and none of the other Codes)
// in a session of an older one; and an entry whose rule says a strict
// receiver answers -32600 or -32700 carries that strict answer.
func TestCatalogEntriesRaiseTheirFindingsAndStrictAnswers(t *testing.T) {
	for _, e := range Catalog() {
		t.Run(e.Name, func(t *testing.T) {
			sessions := map[catalogSession][]classify.Code{sessionAny: e.Codes}
			if e.Revision != "" {
				sessions = map[catalogSession][]classify.Code{session2026: e.Codes, sessionOlder: e.OlderCodes}
			}
			for s, want := range sessions {
				got, answers := raised(t, e, s)
				for _, c := range want {
					if !got[c] {
						t.Errorf("in session %d the frame does not raise %s; it raises %v", s, c, got)
					}
				}
				for _, c := range slices.Concat(e.Codes, e.OlderCodes) {
					if got[c] && !slices.Contains(want, c) {
						t.Errorf("in session %d the frame raises %s, which the entry does not say of that session", s, c)
					}
				}
				dir := e.Dir
				if dir == Either {
					dir = classify.H2S
				}
				for code, needle := range map[int]string{classify.InvalidRequest: "-32600", classify.ParseError: "-32700"} {
					if !strings.Contains(e.Rule, needle) || dir != classify.H2S {
						continue
					}
					if len(answers) == 0 || answers[0].Code != code && answers[0].Batch == nil {
						t.Errorf("the rule says %s, and classify owes %v", needle, answers)
					}
				}
			}
		})
	}
}

func TestCatalogEntriesThatNeedAnIDOrASizeSaySo(t *testing.T) {
	e, _ := Lookup("cancel-in-flight")
	if _, err := e.Frames(Params{}); err == nil || !strings.Contains(err.Error(), "--id") {
		t.Errorf("no id: %v", err)
	}
	if _, err := e.Frames(Params{ID: `{"a":1}`}); err == nil {
		t.Error("an object id for a request in flight was taken")
	}
	f, err := e.Frames(Params{ID: "7"})
	if err != nil || !strings.Contains(string(f[0]), `"requestId":7,`) {
		t.Errorf("cancel of 7: %s %v", f, err)
	}
	big, _ := Lookup("large-frame")
	for _, size := range []int{minLarge, 1000, 3 << 20} {
		f, err := big.Frames(Params{Size: size})
		if err != nil || len(f[0]) != size || !classify.Valid(f[0]) {
			t.Errorf("large frame of %d bytes: %d bytes, valid %v, %v", size, len(f[0]), classify.Valid(f[0]), err)
		}
	}
	if f, _ := big.Frames(Params{}); len(f[0]) != DefaultSize {
		t.Errorf("the default large frame is %d bytes", len(f[0]))
	}
	if _, err := big.Frames(Params{Size: 10}); err == nil || !strings.Contains(err.Error(), "--size") {
		t.Errorf("a size too small: %v", err)
	}
}

func TestListShowsEveryEntryWithItsFrame(t *testing.T) {
	l := List()
	if len(l) != len(Catalog()) {
		t.Fatalf("%d listed of %d", len(l), len(Catalog()))
	}
	for _, x := range l {
		if x.Frame == "" || x.Rule == "" || x.Dir == "" {
			t.Errorf("%+v", x)
		}
		if x.Name == "id-reused" && (!strings.Contains(x.Frame, `"id":ID`) || x.Needs == "") {
			t.Errorf("id-reused is listed as %+v", x)
		}
	}
}

// The entry that breaks a tool's schema needs the session's tools, says
// so when it has none, calls the first listed tool some arguments break
// (or the one named), and carries the session's _meta when its requests
// do.
func TestBadToolArgumentsCallsAListedToolWithArgumentsItsSchemaRefuses(t *testing.T) {
	e, _ := Lookup("bad-tool-arguments")
	if _, err := e.Frames(Params{}); !errors.Is(err, ErrNoTools) || !strings.Contains(err.Error(), "tools/list") {
		t.Errorf("no tools listed: %v", err)
	}
	anything, echo := anythingTool, echoTool
	f, err := e.Frames(Params{Tools: []Tool{anything, echo}})
	if err != nil || string(f[0]) != `{"jsonrpc":"2.0","id":"rpctap-bad-arguments","method":"tools/call","params":{"name":"echo","arguments":{}}}` {
		t.Errorf("the first tool a call can break: %s %v", f, err)
	}
	f, err = e.Frames(Params{Tools: []Tool{anything, echo}, Meta: []byte(catalogMeta)})
	if err != nil || !strings.HasSuffix(string(f[0]), `"arguments":{},"_meta":`+catalogMeta+`}}`) {
		t.Errorf("in a 2026-07-28 session: %s %v", f, err)
	}
	if _, err := e.Frames(Params{Tools: []Tool{anything}}); err == nil || !strings.Contains(err.Error(), "takes any arguments") {
		t.Errorf("only a tool that takes anything: %v", err)
	}
	if _, err := e.Frames(Params{Tools: []Tool{anything, echo}, Tool: "anything"}); err == nil || !strings.Contains(err.Error(), "--tool") {
		t.Errorf("naming a tool that takes anything: %v", err)
	}
	if _, err := e.Frames(Params{Tools: []Tool{echo}, Tool: "nope"}); err == nil || !strings.Contains(err.Error(), "(the server lists: echo)") {
		t.Errorf("naming a tool not listed: %v", err)
	}
}

// Arguments that break a schema: the required ones left out, else a
// property of the wrong type, else one the schema does not allow; none
// for a schema that takes any object or does not compile.
func TestBreakingArgumentsBreakTheSchemaAsClassifyJudgesIt(t *testing.T) {
	for _, c := range []struct{ schema, want string }{
		{`{"type":"object","required":["a"]}`, `{}`},
		{`{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"}}}`, `{"a":42}`},
		{`{"type":"object","properties":{"n":{"type":"number"}}}`, `{"n":"rpctap: a value of the wrong type"}`},
		{`{"type":"object","properties":{"any":{}},"additionalProperties":false}`, `{"rpctap-unexpected":true}`},
		{`{"type":"object"}`, ``},
		{`{"type":"object","properties":{"a":{"type":"nonsense"}}}`, ``},
	} {
		args, ok := breakingArguments(Tool{Name: "t", Schema: json.RawMessage(c.schema)})
		if string(args) != c.want || ok != (c.want != "") {
			t.Errorf("%s: %s %v, want %s", c.schema, args, ok, c.want)
		}
	}
}

// The entries of a revision's rule take the session's revision from the
// _meta of its requests, and build the older revision's frame in any
// other session.
func TestRevisionEntriesTakeTheSessionsRevision(t *testing.T) {
	seen := NewSeen()
	see := func(frame string, dir classify.Direction) {
		m := classify.Classify([]byte(frame), dir, classify.MCP)
		seen.See(&m)
	}
	e, _ := Lookup("no-meta-2026")
	f, _ := e.Frames(seen.CatalogParams())
	if !strings.Contains(string(f[0]), `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`) {
		t.Errorf("in a session that showed nothing: %s", f)
	}
	see(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}}}`, classify.H2S)
	if f, _ = e.Frames(seen.CatalogParams()); string(f[0]) != `{"jsonrpc":"2.0","id":"rpctap-no-meta","method":"tools/list"}` {
		t.Errorf("in a 2026-07-28 session: %s", f)
	}
	ping, _ := Lookup("ping-2026")
	if f, _ = ping.Frames(seen.CatalogParams()); !strings.Contains(string(f[0]), `"io.modelcontextprotocol/clientCapabilities":{"roots":{}}`) {
		t.Errorf("ping in a 2026-07-28 session does not carry the session's _meta: %s", f)
	}
	see(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`, classify.H2S)
	if f, _ = e.Frames(seen.CatalogParams()); !strings.Contains(string(f[0]), `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`) {
		t.Errorf("after a handshake: %s", f)
	}
	if f, _ = ping.Frames(seen.CatalogParams()); !strings.Contains(string(f[0]), `"_meta":`+meta20260728) {
		t.Errorf("ping after a handshake: %s", f)
	}
	for _, l := range List() {
		if e, _ := Lookup(l.Name); e.Revision != "" && (l.Revision == "" || l.OlderCodes == nil) {
			t.Errorf("%s is listed with no revision or no codes for an older one: %+v", l.Name, l)
		}
		if l.Name == "no-meta-2026" && (l.OlderFrame == "" || l.OlderFrame == l.Frame) {
			t.Errorf("no-meta-2026 is listed with no frame of an older revision: %+v", l)
		}
	}
}
