package diff

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/sessions"
)

func diffOf(t *testing.T, a, b []frameAt) *Report {
	t.Helper()
	rep, err := Files(writeSession(t, "ndjson", a), writeSession(t, "ndjson", b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// dropFinding leaves out the new finding of code, which a case expects
// besides the difference it is about (the tracker's rules see the same
// change: a call of a tool no longer listed is unknown-tool).
func dropFinding(ds []Difference, code string) []Difference {
	var out []Difference
	for _, d := range ds {
		if code == "" || d.Kind != DiffFinding || d.Name != code {
			out = append(out, d)
		}
	}
	return out
}

func describe(ds []Difference) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "\n  %s %q regression=%v %s %v", d.Kind, d.Name, d.Regression, d.Detail, d.Changes)
	}
	return b.String()
}

func TestDiffReportsEachKnownDifferenceOnceAndNothingElse(t *testing.T) {
	base := mcpConversation(nil)
	tests := []struct {
		name       string
		change     func([]frameAt) []frameAt
		kind, what string
		regression bool
		path       string // the one change expected, if any
		also       string // a new finding expected besides, if any
	}{
		{"a tool added", func(f []frameAt) []frameAt {
			f[4].frame = `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + echoTool + `,` + addTool + `,{"name":"sleep","inputSchema":{"type":"object"}}]}}`
			return f
		}, DiffToolAdded, "sleep", false, "", ""},
		{"a tool removed", func(f []frameAt) []frameAt {
			f[4].frame = `{"jsonrpc":"2.0","id":1,"result":{"tools":[` + echoTool + `]}}`
			return f
		}, DiffToolRemoved, "add", true, "", "unknown-tool"},
		{"a schema changed", func(f []frameAt) []frameAt {
			f[4].frame = strings.Replace(f[4].frame, `"a":{"type":"number"}`, `"a":{"type":"string"}`, 1)
			return f
		}, DiffToolChanged, "add", false, "/inputSchema/properties/a/type", "tool-arguments-invalid"},
		{"a description changed", func(f []frameAt) []frameAt {
			f[4].frame = strings.Replace(f[4].frame, `"Echoes"`, `"Echoes, and mails it away"`, 1)
			return f
		}, DiffToolChanged, "echo", false, "/description", ""},
		{"an outcome changed", func(f []frameAt) []frameAt {
			f[6].frame = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"HI"}]}}`
			return f
		}, DiffOutcome, "tools/call echo", true, "/result/content/0/text", ""},
		{"a latency regression", func(f []frameAt) []frameAt {
			f[8].t = f[7].t + 500_000
			return f
		}, DiffSlower, "tools/call add", true, "", ""},
		{"a new error finding", func(f []frameAt) []frameAt {
			return append(f, frameAt{9000, 's', `{"jsonrpc":"2.0","id":99,"result":{}}`})
		}, DiffFinding, "unmatched-response", true, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := diffOf(t, base, mcpConversation(tc.change))
			rep.Differences = dropFinding(rep.Differences, tc.also)
			if len(rep.Differences) != 1 {
				t.Fatalf("want one difference, %s %s; got %d:%s", tc.kind, tc.what, len(rep.Differences), describe(rep.Differences))
			}
			d := rep.Differences[0]
			if d.Kind != tc.kind || d.Name != tc.what || d.Regression != tc.regression {
				t.Errorf("want %s %q regression=%v; got%s", tc.kind, tc.what, tc.regression, describe(rep.Differences))
			}
			if tc.path != "" && (len(d.Changes) != 1 || d.Changes[0].Path != tc.path) {
				t.Errorf("want the one change at %s; got %v", tc.path, d.Changes)
			}
		})
	}
}

func TestDiffOfASessionWithItselfOrWithOtherIdsAndMetaFindsNothing(t *testing.T) {
	base := mcpConversation(nil)
	if rep := diffOf(t, base, base); len(rep.Differences) != 0 {
		t.Errorf("a session differs from itself:%s", describe(rep.Differences))
	}
	unmatched := func(f []frameAt) []frameAt {
		return append(f, frameAt{9000, 's', `{"jsonrpc":"2.0","id":99,"result":{}}`})
	}
	if rep := diffOf(t, mcpConversation(unmatched), mcpConversation(unmatched)); len(rep.Differences) != 0 {
		t.Errorf("a finding both sessions have is reported:%s", describe(rep.Differences))
	}
	renumbered := mcpConversation(func(f []frameAt) []frameAt {
		f[5].frame = `{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"_meta":{"progressToken":7},"arguments":{"message":"hi"},"name":"echo"}}`
		f[6].frame = `{"id":"two","jsonrpc":"2.0","result":{"_meta":{"at":"now"},"content":[{"text":"h\u0069","type":"text"}]}}`
		return f
	})
	if rep := diffOf(t, base, renumbered); len(rep.Differences) != 0 {
		t.Errorf("ids, _meta, member order and escapes count as differences:%s", describe(rep.Differences))
	}
	// A tool is compared as a baseline compares it: by what a model
	// reads of it and what its calls must be, not its _meta or icons.
	relisted := mcpConversation(func(f []frameAt) []frameAt {
		f[4].frame = `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"_meta":{"build":7},"icons":[{"src":"e.png"}],"inputSchema":{"properties":{"message":{"type":"string"}},"type":"object"},"description":"Echoes","name":"echo"},` + addTool + `]}}`
		return f
	})
	if rep := diffOf(t, base, relisted); len(rep.Differences) != 0 {
		t.Errorf("a tool's _meta, icons and member order count as differences:%s", describe(rep.Differences))
	}
}

func TestDiffLatencyShiftNeedsBothThresholdAndRatio(t *testing.T) {
	base := mcpConversation(nil)
	slower := func(by int64) []frameAt {
		return mcpConversation(func(f []frameAt) []frameAt { f[8].t = f[7].t + by; return f })
	}
	// 1 ms → 50 ms: 50 times slower, but by less than 100 ms.
	if rep := diffOf(t, base, slower(50_000)); len(rep.Differences) != 0 {
		t.Errorf("a shift under --duration-threshold is reported:%s", describe(rep.Differences))
	}
	a := writeSession(t, "ndjson", mcpConversation(func(f []frameAt) []frameAt { f[8].t = f[7].t + 1_000_000; return f }))
	b := writeSession(t, "ndjson", mcpConversation(func(f []frameAt) []frameAt { f[8].t = f[7].t + 1_500_000; return f }))
	rep, err := Files(a, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 1 s → 1.5 s: 500 ms slower, but only 1.5 times.
	if len(rep.Differences) != 0 {
		t.Errorf("a shift under --duration-ratio is reported:%s", describe(rep.Differences))
	}
}

func TestDiffDetailsTheFirstChangedOutcomesInAsOrder(t *testing.T) {
	var a, b []frameAt
	n := sessions.MaxDetailed + 50
	for i := range n {
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"n":%d}}}`, i, i)
		a = append(a, frameAt{int64(i) * 10, 'h', req}, frameAt{int64(i)*10 + 1, 's', fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"n":%d}}`, i, i)})
		b = append(b, frameAt{int64(i) * 10, 'h', req}, frameAt{int64(i)*10 + 1, 's', fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"n":-%d}}`, i, i+1)})
	}
	rep := diffOf(t, a, b)
	if len(rep.Differences) != n {
		t.Fatalf("%d differences, want %d", len(rep.Differences), n)
	}
	for i, d := range rep.Differences {
		if want := int64(2*i + 2); d.Kind != DiffOutcome || d.LineA != want {
			t.Fatalf("difference %d: %s at A line %d, want an outcome at line %d", i, d.Kind, d.LineA, want)
		}
		if detailed := len(d.Changes) > 0; detailed != (i < sessions.MaxDetailed) {
			t.Fatalf("difference %d (A line %d) has %d changes; the first %d should have them, no others", i, d.LineA, len(d.Changes), sessions.MaxDetailed)
		}
	}
}

func TestDiffPairsCallsByWhatTheyCallAndReportsThoseMadeInOneSessionOnly(t *testing.T) {
	base := mcpConversation(nil)
	sum := mcpConversation(func(f []frameAt) []frameAt {
		f[5].frame = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":1}}}`
		f[6].frame = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"2"}]}}`
		return f
	})
	rep := diffOf(t, base, sum)
	rep.Differences = dropFinding(rep.Differences, "unknown-tool") // get-sum is not listed
	if got := describe(rep.Differences); len(rep.Differences) != 2 || rep.Differences[0].Kind != DiffCallOnlyA || rep.Differences[0].Name != "tools/call echo" ||
		rep.Differences[1].Kind != DiffCallOnlyB || rep.Differences[1].Name != "tools/call get-sum" || rep.Regressions() != 0 {
		t.Errorf("want echo only in A and get-sum only in B, no regression; got%s", got)
	}

	bye := mcpConversation(func(f []frameAt) []frameAt {
		f[5].frame = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"bye"}}}`
		f[6].frame = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"bye"}]}}`
		return f
	})
	rep = diffOf(t, base, bye)
	if len(rep.Differences) != 1 {
		t.Fatalf("want echo's arguments changed; got%s", describe(rep.Differences))
	}
	d := rep.Differences[0]
	if d.Kind != DiffArguments || d.Name != "tools/call echo" || d.Regression || len(d.Changes) != 2 ||
		d.Changes[0].Path != "/params/arguments/message" || d.Changes[1].Path != "/result/content/0/text" {
		t.Errorf("want echo's arguments and answer changed, no regression; got%s", describe(rep.Differences))
	}
}

func TestDiffCallsAChangeARegressionOnlyWhenItIsOne(t *testing.T) {
	answer := func(frame string) func([]frameAt) []frameAt {
		return func(f []frameAt) []frameAt { f[6].frame = frame; return f }
	}
	failed := answer(`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"broken"}}`)
	toolFailed := answer(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"broken"}],"isError":true}}`)
	tests := []struct {
		name       string
		a, b       func([]frameAt) []frameAt
		kind       string
		regression bool
	}{
		{"an error that became a result is a fix", failed, nil, DiffFixed, false},
		{"a tool error that became a result is a fix", toolFailed, nil, DiffFixed, false},
		{"a result that became an error", nil, failed, DiffNewError, true},
		{"a result that became a tool error", nil, toolFailed, DiffNewError, true},
		{"a member added to a result", nil, answer(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}],"structuredContent":{"x":1}}}`), DiffOutcome, false},
		{"a member removed from a result", answer(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}],"structuredContent":{"x":1}}}`), nil, DiffOutcome, true},
		{"an error changed", failed, answer(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"other"}}`), DiffOutcome, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := diffOf(t, mcpConversation(tc.a), mcpConversation(tc.b))
			rep.Differences = dropFinding(rep.Differences, "tool-error")
			if len(rep.Differences) != 1 || rep.Differences[0].Kind != tc.kind || rep.Differences[0].Regression != tc.regression {
				t.Errorf("want %s regression=%v; got%s", tc.kind, tc.regression, describe(rep.Differences))
			}
		})
	}
}

func TestDiffLeavesOutTheLatencyOfWhatWaitedForTheServerToStart(t *testing.T) {
	// B's server took 3 s to start: its initialize answered after 3 s.
	slowStart := mcpConversation(func(f []frameAt) []frameAt {
		for i := 1; i < len(f); i++ {
			f[i].t += 3_000_000
		}
		return f
	})
	if rep := diffOf(t, mcpConversation(nil), slowStart); len(rep.Differences) != 0 {
		t.Errorf("a slower start-up is reported as a call's latency:%s", describe(rep.Differences))
	}
}

func TestDiffRemovesADefinitionOnlyWhenBListedAndLackedIt(t *testing.T) {
	noListing := mcpConversation(func(f []frameAt) []frameAt { return append(f[:3:3], f[5:]...) })
	if rep := diffOf(t, mcpConversation(nil), noListing); len(rep.Differences) != 1 || rep.Differences[0].Kind != DiffMethodRemoved || rep.Regressions() != 0 {
		t.Errorf("B never listed its tools; want only tools/list's method removed, no regression; got%s", describe(rep.Differences))
	}
	if rep := diffOf(t, noListing, mcpConversation(nil)); len(rep.Differences) != 1 || rep.Differences[0].Kind != DiffMethodAdded {
		t.Errorf("A never listed its tools; want only tools/list's method added; got%s", describe(rep.Differences))
	}
}

func TestDiffTakesASecretEitherSessionMaskedForAnyValue(t *testing.T) {
	masked := func(r sessions.FrameRecord) sessions.FrameRecord { r.Redacted = true; return r }
	a := writeRecords(t, []string{"DBPASS"}, []sessions.FrameRecord{
		h2s(0, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-env","arguments":{}}}`),
		masked(s2h(10, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"DBPASS=***DBPASS***"}]}}`)),
	})
	b := writeRecords(t, nil, []sessions.FrameRecord{
		h2s(0, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get-env","arguments":{}}}`),
		s2h(10, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"DBPASS=hunter2-s3cr3t-77"}]}}`),
	})
	for _, pair := range [][2]string{{a, b}, {b, a}} {
		rep, err := Files(pair[0], pair[1], Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Differences) != 0 {
			t.Errorf("a secret masked in one session differs from its value in the other:%s", describe(rep.Differences))
		}
	}
}

// diff compares the servers, not what the user did: against the same
// session without the user's frames, a session where the user dropped a
// call, answered one in the server's place, edited one, and injected a
// frame the server refused differs by no regression, no finding of the
// user's frames, and no call the server never read.
func TestDiffLeavesOutWhatTheUserDid(t *testing.T) {
	b, err := os.ReadFile(fateSession)
	if err != nil {
		t.Fatal(err)
	}
	var without []string
	for i, line := range strings.SplitAfter(string(b), "\n") {
		switch i + 1 {
		case 5, 6, 7, 8, 9, 12, 13, 14, 15: // the user's frames and their answers
		default:
			without = append(without, line)
		}
	}
	pathA := filepath.Join(t.TempDir(), "without.jsonl")
	if err := os.WriteFile(pathA, []byte(strings.Join(without, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := Files(pathA, fateSession, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Regressions() != 0 {
		t.Errorf("%d regressions:%s", rep.Regressions(), describe(rep.Differences))
	}
	for _, d := range rep.Differences {
		switch {
		case d.Kind == DiffFinding:
			t.Errorf("a finding of the user's frames counts as the server's: %s %s line %d", d.Name, d.Detail, d.LineB)
		case d.Name == "tools/call echo":
			t.Errorf("a call the server never read (dropped, answered in place) counts as one: %s line %d", d.Kind, d.LineB)
		}
	}
}

// No arguments are arguments {}: a call made without them, with null and
// with {} is the same call, in diff as in replay.
func TestDiffTakesNoArgumentsForEmptyArguments(t *testing.T) {
	for _, args := range []string{``, `,"arguments":null`, `,"arguments":{}`} {
		for _, other := range []string{``, `,"arguments":null`, `,"arguments":{}`} {
			if args == other {
				continue
			}
			b := mcpConversation(func(f []frameAt) []frameAt {
				f[5].frame = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"` + args + `}}`
				return f
			})
			c := mcpConversation(func(f []frameAt) []frameAt {
				f[5].frame = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"` + other + `}}`
				return f
			})
			if rep := diffOf(t, b, c); len(rep.Differences) != 0 {
				t.Errorf("params {name%s} and {name%s} differ:%s", args, other, describe(rep.Differences))
			}
		}
	}
	// Arguments that say something still differ.
	b := mcpConversation(func(f []frameAt) []frameAt {
		f[5].frame = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`
		return f
	})
	rep := diffOf(t, b, mcpConversation(nil))
	if len(rep.Differences) != 1 || rep.Differences[0].Kind != DiffArguments {
		t.Errorf("no arguments against {message: hi}:%s", describe(rep.Differences))
	}
}

// Past the first maxDetailed changed answers, a pair's answers are
// compared only as far as telling the kind of difference takes: about
// what decoding them costs, not a change list of every value.
func TestDiffComparesAnswersPastTheDetailedOnesOnlyAsFarAsTheirKind(t *testing.T) {
	big := func(sign string, last string) string {
		var b strings.Builder
		b.WriteString(`{"jsonrpc":"2.0","id":1,"result":{`)
		for i := range 5000 {
			fmt.Fprintf(&b, `"k%04d":%s%d,`, i, sign, i+1)
		}
		b.WriteString(`"z":` + last + `}}`)
		return b.String()
	}
	req := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`
	pathA := writeSession(t, "ndjson", []frameAt{{0, 'h', req}, {1, 's', big("", "1")}})
	pathB := writeSession(t, "ndjson", []frameAt{{0, 'h', req}, {1, 's', big("-", "2")}})
	a, err := summarize(pathA, sessions.Ignore{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.f.Close()
	b, err := summarize(pathB, sessions.Ignore{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.f.Close()
	var ca, cb call
	for _, c := range a.calls {
		ca = c
	}
	for _, c := range b.calls {
		cb = c
	}
	var d Difference
	compared := testing.AllocsPerRun(3, func() { d, _ = compareCall(a, b, ca, cb, sessions.Ignore{}, false) })
	if d.Kind != DiffOutcome || !d.Regression || d.Changes != nil {
		t.Fatalf("past the detailed ones: %s regression=%v with %d changes; want a changed outcome, a regression, no changes", d.Kind, d.Regression, len(d.Changes))
	}
	decoded := testing.AllocsPerRun(3, func() {
		decodeJSON(readFrameAt(a.f, ca.respOff))
		decodeJSON(readFrameAt(b.f, cb.respOff))
	})
	t.Logf("comparing: %.0f allocations, reading and decoding: %.0f", compared, decoded)
	if compared > decoded+decoded/4 {
		t.Errorf("comparing the answers made %.0f allocations, reading and decoding them %.0f: the comparison listed every change", compared, decoded)
	}
}

// mrtrSession is a 2026-07-28 session with a call of tool confirm:
// with rounds 2, answered input_required, then retried (a new id) and
// answered final; with rounds 1, answered final at once.
func mrtrSession(rounds int, final string) []frameAt {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	call := `"name":"confirm","arguments":{"action":"deploy"}`
	f := []frameAt{
		{0, 'h', `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`},
		{5, 's', `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`},
		{100, 'h', `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{` + meta + `,` + call + `}}`},
	}
	answer := `"result":{"resultType":"complete","content":[{"type":"text","text":"` + final + `"}]}`
	if rounds == 1 {
		return append(f, frameAt{110, 's', `{"jsonrpc":"2.0","id":2,` + answer + `}`})
	}
	return append(f,
		frameAt{110, 's', `{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","requestState":"s","inputRequests":{"confirm":{"method":"elicitation/create","params":{}}}}}`},
		frameAt{120, 'h', `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + meta + `,` + call + `,"inputResponses":{"confirm":{"action":"accept","content":{"confirmed":true}}},"requestState":"s"}}`},
		frameAt{130, 's', `{"jsonrpc":"2.0","id":3,` + answer + `}`})
}

// A multi round-trip call is one call in the comparison: a call that
// took two rounds in A and that B answered at once is the same call,
// its final answers compared, and the rounds a change of its own, no
// regression (never a call only in A, its retry); two sessions of the
// same rounds differ in nothing, and a changed final answer is the
// call's outcome changed.
func TestDiffTakesAMultiRoundTripCallAsOneCallAndItsRoundsAsAChange(t *testing.T) {
	rep := diffOf(t, mrtrSession(2, "confirmed deploy"), mrtrSession(1, "confirmed deploy"))
	if len(rep.Differences) != 1 {
		t.Fatalf("differences:%s\nwant one: the rounds", describe(rep.Differences))
	}
	d := rep.Differences[0]
	if d.Kind != DiffRounds || d.Name != "tools/call confirm" || d.LineA != 4 || d.LineB != 4 || d.Regression || !strings.Contains(d.Detail, "2 rounds in A, 1 in B") {
		t.Errorf("the difference:%s\nwant rounds changed, tools/call confirm, A and B line 4, 2 rounds in A, 1 in B, no regression", describe(rep.Differences))
	}
	if rep := diffOf(t, mrtrSession(2, "confirmed deploy"), mrtrSession(2, "confirmed deploy")); len(rep.Differences) != 0 {
		t.Errorf("two sessions of the same call in two rounds differ:%s", describe(rep.Differences))
	}
	rep = diffOf(t, mrtrSession(1, "confirmed deploy"), mrtrSession(2, "deploy not confirmed"))
	if len(rep.Differences) != 1 || rep.Differences[0].Kind != DiffOutcome || !rep.Differences[0].Regression ||
		!strings.Contains(rep.Differences[0].Detail, "1 round in A, 2 in B") || len(rep.Differences[0].Changes) != 1 || rep.Differences[0].Changes[0].Path != "/result/content/0/text" {
		t.Errorf("a final answer changed, in other rounds:%s\nwant the outcome changed at /result/content/0/text, saying the rounds", describe(rep.Differences))
	}
}

// A multi round-trip call's latency runs from its first request to its
// final answer, once: a call B answers at once in the time A's two
// rounds took (the host's time to answer between them) is no slower nor
// faster.
func TestDiffTakesAMultiRoundTripCallsLatencyFromItsFirstRequestToItsFinalAnswer(t *testing.T) {
	a, b := mrtrSession(2, "confirmed deploy"), mrtrSession(1, "confirmed deploy")
	a[3].t, a[4].t, a[5].t = 100+10_000, 100+290_000, 100+300_000 // µs
	b[3].t = 100 + 300_000
	for _, d := range diffOf(t, a, b).Differences {
		if d.Kind == DiffSlower || d.Kind == DiffFaster {
			t.Errorf("a latency shift: %s %s: %s", d.Kind, d.Name, d.Detail)
		}
	}
}
