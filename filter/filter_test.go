package filter

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

func codes(cs ...classify.Code) classify.CodeSet {
	var set classify.CodeSet
	for _, c := range cs {
		set = set.With(c)
	}
	return set
}

func payload(s string) func() []byte {
	if s == "" {
		return nil
	}
	return func() []byte { return []byte(s) }
}

// corpus is the frames every expression of TestMatch is tried against, one
// of each sort the UI shows. A response's Method is its request's.
var corpus = []struct {
	name    string
	frame   Frame
	payload string
}{
	{"call", Frame{Dir: classify.H2S, Kind: classify.KindRequest, ID: `1`, Method: "tools/call", Status: "ok"},
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"Hello Wörld"}}}`},
	{"result", Frame{Dir: classify.S2H, Kind: classify.KindResponse, ID: `1`, Method: "tools/call", Status: "ok"},
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Hello Wörld"}]}}`},
	{"list-str", Frame{Dir: classify.H2S, Kind: classify.KindRequest, ID: `"1"`, Method: "tools/list", Status: "pending"},
		`{"jsonrpc":"2.0","id":"1","method":"tools/list"}`},
	{"list-esc", Frame{Dir: classify.H2S, Kind: classify.KindRequest, ID: `"\u0031"`, Method: "tools/list", Status: "ok"}, ""},
	{"frac", Frame{Dir: classify.H2S, Kind: classify.KindRequest, ID: `1.0`, Method: "ping", Status: "ok",
		Codes: codes(classify.CodeFractionalID), Worst: classify.Warn},
		`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`},
	{"progress", Frame{Dir: classify.S2H, Kind: classify.KindNotification, Method: "notifications/progress"},
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":50}}`},
	{"stderr", Frame{Dir: classify.Err}, "panic: boom\ngoroutine 1 [running]:"},
	{"log-line", Frame{Dir: classify.S2H, Kind: classify.KindNotJSON,
		Codes: codes(classify.CodeNotJSON), Worst: classify.Error},
		"Starting server on port 8080"},
	{"stray", Frame{Dir: classify.S2H, Kind: classify.KindStray,
		Codes: codes(classify.CodeStrayObject), Worst: classify.Warn},
		`{"level":"info","msg":"ready"}`},
	{"bad-version", Frame{Dir: classify.H2S, Kind: classify.KindInvalid, ID: `0`, Method: "initialize",
		Codes: codes(classify.CodeBadJSONRPC), Worst: classify.Error},
		`{"jsonrpc":"1.0","id":0,"method":"initialize"}`},
	{"scalar", Frame{Dir: classify.H2S, Kind: classify.KindNonObject,
		Codes: codes(classify.CodeNonObject), Worst: classify.Error}, `42`},
	// A batch is not an invalid kind; its bad member's code makes it
	// invalid for flag:invalid.
	{"batch-bad", Frame{Dir: classify.H2S, Kind: classify.KindBatch,
		Codes: codes(classify.CodeBatch, classify.CodeBadID), Worst: classify.Error},
		`[{"jsonrpc":"2.0","id":{},"method":"x"}]`},
	{"hung", Frame{Dir: classify.H2S, Kind: classify.KindRequest, ID: `7`, Method: "tools/call", Status: "pending",
		Codes: codes(classify.CodeTimeout), Worst: classify.Warn},
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}`},
	{"late", Frame{Dir: classify.S2H, Kind: classify.KindResponse, ID: `7`, Method: "tools/call", Status: "late",
		Codes: codes(classify.CodeLateResponse), Worst: classify.Warn},
		`{"jsonrpc":"2.0","id":7,"result":{}}`},
	{"orphan", Frame{Dir: classify.S2H, Kind: classify.KindResponse, ID: `99`,
		Codes: codes(classify.CodeUnmatchedResponse), Worst: classify.Error}, ""},
	{"twice", Frame{Dir: classify.S2H, Kind: classify.KindResponse, ID: `1`, Method: "tools/call",
		Codes: codes(classify.CodeDuplicateResponse), Worst: classify.Error},
		`{"jsonrpc":"2.0","id":1,"result":{}}`},
	{"leak", Frame{Dir: classify.S2H, Kind: classify.KindResponse, ID: `3`, Method: "resources/read", Status: "error",
		Codes: codes(classify.CodeLeakyError), Worst: classify.Warn},
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Traceback (most recent call last): File \"/srv/app.py\""}}`},
	{"opaque", Frame{Dir: classify.S2H, Kind: classify.KindResponse, ID: `null`, Method: "resources/list", Status: "error",
		Codes: codes(classify.CodeOpaqueError), Worst: classify.Info},
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`},
	{"masked", Frame{Dir: classify.H2S, Kind: classify.KindRequest, ID: `5`, Method: "tools/call", Status: "ok",
		Codes: codes(classify.CodeRedacted), Worst: classify.Info},
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"login","arguments":{"token":"[REDACTED]"}}}`},
	{"cancelled", Frame{Dir: classify.H2S, Kind: classify.KindRequest, ID: `6`, Method: "prompts/get", Status: "cancelled",
		Codes: codes(classify.CodeCancelled), Worst: classify.Info},
		`{"jsonrpc":"2.0","id":6,"method":"prompts/get"}`},
	{"unicode", Frame{Dir: classify.H2S, Kind: classify.KindRequest, ID: `"ä b"`, Method: "工具/调用", Status: "ok"},
		`{"jsonrpc":"2.0","id":"ä b","method":"工具/调用"}`},
}

func corpusNames() []string {
	var names []string
	for _, c := range corpus {
		names = append(names, c.name)
	}
	return names
}

// except is every frame of the corpus but those named.
func except(names ...string) []string {
	return slices.DeleteFunc(corpusNames(), func(n string) bool { return slices.Contains(names, n) })
}

var (
	h2sFrames      = []string{"call", "list-str", "list-esc", "frac", "bad-version", "scalar", "batch-bad", "hung", "masked", "cancelled", "unicode"}
	s2hFrames      = []string{"result", "progress", "log-line", "stray", "late", "orphan", "twice", "leak", "opaque"}
	toolsFrames    = []string{"call", "result", "list-str", "list-esc", "hung", "late", "twice", "masked"}
	errorFrames    = []string{"log-line", "bad-version", "scalar", "batch-bad", "orphan", "twice"}
	warnFrames     = append([]string{"frac", "stray", "hung", "late", "leak"}, errorFrames...)
	infoFrames     = append([]string{"opaque", "masked", "cancelled"}, warnFrames...)
	noFindings     = []string{"call", "result", "list-str", "list-esc", "progress", "stderr", "unicode"}
	invalidFrames  = []string{"log-line", "stray", "bad-version", "scalar", "batch-bad"}
	helloFrames    = []string{"call", "result"}
	responseFrames = []string{"result", "late", "orphan", "twice", "leak", "opaque"}
)

// matchCases: each expression, and exactly the corpus frames it matches.
var matchCases = []struct {
	name  string
	expr  string
	match []string
}{
	{"empty expression matches everything", "", corpusNames()},
	{"blank expression matches everything", " \t ", corpusNames()},

	{"method exact", "method:tools/call", []string{"call", "result", "hung", "late", "twice", "masked"}},
	{"method of a response is its request's", "method:resources/read", []string{"leak"}},
	{"method glob star at the end", "method:tools/*", toolsFrames},
	{"method glob star at the start", "method:*/list", []string{"list-str", "list-esc", "opaque"}},
	{"method glob star at both ends", "method:*call*", []string{"call", "result", "hung", "late", "twice", "masked"}},
	{"method glob star in the middle", "method:r*s/*", []string{"leak", "opaque"}},
	{"method glob star crosses slashes", "method:p*et", []string{"cancelled"}},
	{"method glob question mark is one character", "method:*s/?et", []string{"cancelled"}},
	{"method glob question mark is one rune", "method:??/??", []string{"unicode"}},
	{"method glob question mark needs a character", "method:tools/cal?", []string{"call", "result", "hung", "late", "twice", "masked"}},
	{"method glob is anchored", "method:tools", nil},
	{"method glob is case-sensitive", "method:Tools/*", nil},
	{"method star matches an absent method", "method:*", corpusNames()},
	{"method quoted empty matches no method", `method:""`, []string{"stderr", "log-line", "stray", "scalar", "batch-bad", "orphan"}},
	{"method quoted value", `method:"notifications/progress"`, []string{"progress"}},
	{"method negated", "!method:tools/*", except(toolsFrames...)},

	{"dir h2s", "dir:h2s", h2sFrames},
	{"dir > is h2s", "dir:>", h2sFrames},
	{"dir → is h2s", "dir:→", h2sFrames},
	{"dir s2h", "dir:s2h", s2hFrames},
	{"dir < is s2h", "dir:<", s2hFrames},
	{"dir ← is s2h", "dir:←", s2hFrames},
	{"dir err", "dir:err", []string{"stderr"}},
	{"dir negated", "!dir:err", except("stderr")},
	{"key and value are case-insensitive", "DIR:H2S", h2sFrames},

	{"kind request", "kind:request", []string{"call", "list-str", "list-esc", "frac", "hung", "masked", "cancelled", "unicode"}},
	{"kind response", "kind:response", responseFrames},
	{"kind notification", "kind:notification", []string{"progress"}},
	{"kind not-json", "kind:not-json", []string{"log-line"}},
	{"kind stray", "kind:stray", []string{"stray"}},
	{"kind invalid", "kind:invalid", []string{"bad-version"}},
	{"kind non-object", "kind:non-object", []string{"scalar"}},
	{"kind batch", "kind:batch", []string{"batch-bad"}},
	{"kind blank", "kind:blank", nil},
	{"kind negated", "!kind:response", except(responseFrames...)},

	{"id number matches the number only", "id:1", []string{"call", "result", "twice"}},
	{"id number compares wire text", "id:1.0", []string{"frac"}},
	{"id quoted matches the string only", `id:"1"`, []string{"list-str", "list-esc"}},
	{"id quoted with a space", `id:"ä b"`, []string{"unicode"}},
	{"id null", "id:null", []string{"opaque"}},
	{"id quoted null is a string", `id:"null"`, nil},
	{"id negative number", "id:-1", nil},
	{"id negated", "!id:1", except("call", "result", "twice")},

	{"flag finding code", "flag:leaky-error", []string{"leak"}},
	{"flag code is case-insensitive", "FLAG:Stray-Object", []string{"stray"}},
	{"flag session code", "flag:duplicate-response", []string{"twice"}},
	{"flag code cancelled", "flag:cancelled", []string{"cancelled"}},
	{"flag code late-response", "flag:late-response", []string{"late"}},
	{"flag unmatched is unmatched or duplicate", "flag:unmatched", []string{"orphan", "twice"}},
	{"flag invalid is a bad kind or a bad-member code", "flag:invalid", invalidFrames},
	{"flag redacted is redacted, opaque or leaky", "flag:redacted", []string{"leak", "opaque", "masked"}},
	{"flag timeout is timeout or late", "flag:timeout", []string{"hung", "late"}},
	{"flag negated", "!flag:invalid", except(invalidFrames...)},

	{"sev error", "sev:error", errorFrames},
	{"sev warn is at least warn", "sev:warn", warnFrames},
	{"sev warning is warn", "sev:warning", warnFrames},
	{"sev info is any finding", "sev:info", infoFrames},
	{"sev negated is below", "!sev:info", noFindings},

	{"status pending", "status:pending", []string{"list-str", "hung"}},
	{"status ok", "status:ok", []string{"call", "result", "list-esc", "frac", "masked", "unicode"}},
	{"status error", "status:error", []string{"leak", "opaque"}},
	{"status late", "status:late", []string{"late"}},
	{"status cancelled", "status:cancelled", []string{"cancelled"}},
	{"status cancel is cancelled", "status:cancel", []string{"cancelled"}},
	{"status gap: a request whose answer may be among frames the file is missing", "status:gap", nil},
	{"status negated", "!status:ok", except("call", "result", "list-esc", "frac", "masked", "unicode")},

	{"text searches the payload", "hello", helloFrames},
	{"text ignores case", "HeLLo", helloFrames},
	{"text ignores case past the first letter", "redacted", []string{"masked"}},
	{"text folds non-ASCII case", "WÖRLD", helloFrames},
	{"text folds the first letter of a non-ASCII phrase", "wÖRLD", helloFrames},
	{"text searches the method", "tools/list", []string{"list-str", "list-esc"}},
	{"text searches the id", "99", []string{"orphan"}},
	{"text quoted phrase with spaces", `"most recent call"`, []string{"leak"}},
	{"text quoted phrase with escaped quotes", `"\"name\":\"echo\""`, []string{"call"}},
	{"text quoted looks like a key", `"panic:"`, []string{"stderr"}},
	{"text with a colon after a digit is not a key", "8080", []string{"log-line"}},
	{"text quoted empty matches everything", `""`, corpusNames()},
	{"text negated", "!hello", except(helloFrames...)},
	{"text two phrases", `hello "text"`, []string{"result"}},

	{"tokens are ANDed", "method:tools/* !dir:err flag:timeout", []string{"hung", "late"}},
	{"text and index tokens are ANDed", "hello dir:s2h", []string{"result"}},
	{"tokens separated by tabs", "dir:s2h\tkind:stray", []string{"stray"}},
	{"three negations", "!flag:invalid !dir:err sev:error", []string{"orphan", "twice"}},
}

func TestMatch(t *testing.T) {
	for _, tc := range matchCases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse(tc.expr)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.expr, err)
			}
			var got []string
			for _, c := range corpus {
				fr := c.frame
				fr.Payload = payload(c.payload)
				if f.Match(&fr) {
					got = append(got, c.name)
				}
			}
			want := slices.Clone(tc.match)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%q matches %v, want %v", tc.expr, got, want)
			}
		})
	}
}

func TestIndexOnlyFiltersNeverReadThePayload(t *testing.T) {
	for _, tc := range matchCases {
		f, err := Parse(tc.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.expr, err)
		}
		if f.NeedsPayload() {
			continue
		}
		for _, c := range corpus {
			fr := c.frame
			fr.Payload = func() []byte {
				t.Errorf("%q read the payload of %s", tc.expr, c.name)
				return nil
			}
			f.Match(&fr)
		}
	}
}

func TestNeedsPayloadOnlyForText(t *testing.T) {
	for expr, want := range map[string]bool{
		"":                                     false,
		"method:tools/* !dir:err flag:timeout": false,
		"kind:request id:1 sev:warn status:ok": false,
		`""`:                                   false,
		"hello":                                true,
		"!hello":                               true,
		`dir:h2s "a b"`:                        true,
	} {
		f, err := Parse(expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", expr, err)
		}
		if got := f.NeedsPayload(); got != want {
			t.Errorf("%q: NeedsPayload() = %v, want %v", expr, got, want)
		}
	}
}

func TestTextReadsThePayloadOnceAndOnlyWhenNeeded(t *testing.T) {
	calls := 0
	fr := Frame{Dir: classify.H2S, Kind: classify.KindRequest, ID: `1`, Method: "tools/call",
		Payload: func() []byte { calls++; return []byte(`{"params":{"name":"echo"}}`) }}
	for _, tc := range []struct {
		expr  string
		match bool
		calls int
	}{
		{"echo params", true, 1},   // two text tokens share one fetch
		{"echo dir:s2h", false, 0}, // index tokens run first, even when written last
		{"tools", true, 0},         // found in the method
		{"!tools", false, 0},       // found in the method, negated
		{"!absent", true, 1},       // a negated phrase has to look
		{"echo !params kind:request", false, 1},
	} {
		calls = 0
		f, err := Parse(tc.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.expr, err)
		}
		if got := f.Match(&fr); got != tc.match {
			t.Errorf("%q: Match = %v, want %v", tc.expr, got, tc.match)
		}
		if calls != tc.calls {
			t.Errorf("%q: Payload called %d times, want %d", tc.expr, calls, tc.calls)
		}
	}
}

func TestTextWithoutPayloadSearchesMethodAndID(t *testing.T) {
	fr := Frame{ID: `"Req-7"`, Method: "tools/call"}
	for expr, want := range map[string]bool{"req-7": true, "CALL": true, "echo": false, "!echo": true} {
		f, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Match(&fr); got != want {
			t.Errorf("%q with no payload: Match = %v, want %v", expr, got, want)
		}
	}
}

// TestSummaryFlagsCoverTheirFindings: each summary flag matches a frame
// with any one of its codes or kinds, and not one with a neighbouring code.
func TestSummaryFlagsCoverTheirFindings(t *testing.T) {
	for _, tc := range []struct {
		flag  string
		codes []classify.Code
		kinds []classify.Kind
		not   []classify.Code
	}{
		{"unmatched", []classify.Code{classify.CodeUnmatchedResponse, classify.CodeDuplicateResponse}, nil,
			[]classify.Code{classify.CodeLateResponse, classify.CodeErrorNamesNoRequest}},
		{"invalid",
			[]classify.Code{classify.CodeBadMethod, classify.CodeBadID, classify.CodeBadJSONRPC, classify.CodeBadParams, classify.CodeEmptyBatch},
			[]classify.Kind{classify.KindInvalid, classify.KindNotJSON, classify.KindNonObject, classify.KindStray},
			[]classify.Code{classify.CodeBadErrorObject, classify.CodeBatch, classify.CodeDuplicateMember}},
		{"redacted", []classify.Code{classify.CodeRedacted, classify.CodeOpaqueError, classify.CodeLeakyError}, nil,
			[]classify.Code{classify.CodeBadErrorObject, classify.CodeUnsafeText}},
		{"timeout", []classify.Code{classify.CodeTimeout, classify.CodeLateResponse}, nil,
			[]classify.Code{classify.CodeCancelled, classify.CodeUnansweredInvalid}},
	} {
		f, err := Parse("flag:" + tc.flag)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range tc.codes {
			if !f.Match(&Frame{Kind: classify.KindResponse, Codes: codes(c)}) {
				t.Errorf("flag:%s does not match a response with %s", tc.flag, c)
			}
		}
		for _, k := range tc.kinds {
			if !f.Match(&Frame{Kind: k}) {
				t.Errorf("flag:%s does not match a frame of kind %s with no findings", tc.flag, k)
			}
		}
		for _, c := range tc.not {
			if f.Match(&Frame{Kind: classify.KindResponse, Codes: codes(c)}) {
				t.Errorf("flag:%s matches a response with %s", tc.flag, c)
			}
		}
		if f.Match(&Frame{Kind: classify.KindRequest}) {
			t.Errorf("flag:%s matches a clean request", tc.flag)
		}
	}
}

// TestEveryFindingCodeIsAFlag: flag:CODE matches exactly the frames with
// that code, for every code classify defines, except the names taken by
// summary flags.
func TestEveryFindingCodeIsAFlag(t *testing.T) {
	for _, c := range classify.Codes() {
		f, err := Parse("flag:" + c.String())
		if err != nil {
			t.Errorf("flag:%s: %v", c, err)
			continue
		}
		if !f.Match(&Frame{Codes: codes(c)}) {
			t.Errorf("flag:%s does not match a frame with that code", c)
		}
		if c == classify.CodeRedacted || c == classify.CodeTimeout {
			continue // summary flags, tested above
		}
		if f.Match(&Frame{Codes: codes(c).Not()}) {
			t.Errorf("flag:%s matches a frame with every other code", c)
		}
	}
}

func TestNilFilterMatchesEverything(t *testing.T) {
	var f *Filter
	if !f.Match(&Frame{}) || f.NeedsPayload() || f.String() != "" {
		t.Error("a nil filter must match everything, need no payload and print as empty")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		expr string
		col  int
		msg  string
	}{
		{"meth:x", 1, `unknown key "meth" at column 1 (did you mean method?): use method, dir, kind, id, flag, sev, status, fate, or quote the token to search for it as text`},
		{"dir:h2s !Meth:x", 10, `unknown key "Meth" at column 10 (did you mean method?): use method, dir, kind, id, flag, sev, status, fate, or quote the token to search for it as text`},
		{"panic: boom", 1, `unknown key "panic" at column 1: use method, dir, kind, id, flag, sev, status, fate, or quote the token to search for it as text`},
		{"→ dir:x", 7, `unknown direction "x" at column 7: use h2s (or >), s2h (or <), or err`},
		{"dir:s2g", 5, `unknown direction "s2g" at column 5 (did you mean s2h?): use h2s (or >), s2h (or <), or err`},
		{"kind:reqest", 6, `unknown kind "reqest" at column 6 (did you mean request?): use request, response, notification, invalid, not-json, stray, batch, blank, or non-object`},
		{"id:abc", 4, `id "abc" is not a number or null at column 4: write id:"abc" for a string id`},
		{"id:01", 4, `id "01" is not a number or null at column 4: write id:"01" for a string id`},
		{"flag:unmatchd", 6, `unknown flag "unmatchd" at column 6 (did you mean unmatched?): use a finding code or unmatched, invalid, redacted, timeout`},
		{"flag:nope", 6, `unknown flag "nope" at column 6: use a finding code or unmatched, invalid, redacted, timeout`},
		{"sev:fatal", 5, `unknown severity "fatal" at column 5: use error, warn, or info`},
		{"status:done", 8, `unknown status "done" at column 8: use pending, ok, error, late, cancelled, or gap`},
		{"status:pend", 8, `unknown status "pend" at column 8 (did you mean pending?): use pending, ok, error, late, cancelled, or gap`},
		{"method:", 8, `missing value after "method:" at column 8: write a glob, as in method:tools/*`},
		{"id: 1", 4, `missing value after "id:" at column 4: use a number, null, or a quoted string, as in id:"abc"`},
		{`dir:""`, 5, `missing value after "dir:" at column 5: use h2s (or >), s2h (or <), or err`},
		{"!", 1, `"!" with nothing after it at column 1: write it right before a token, as in !dir:err`},
		{"a ! b", 3, `"!" with nothing after it at column 3: write it right before a token, as in !dir:err`},
		{"!!x", 2, `second negation at column 2: negate a token once, and quote a phrase that starts with "!"`},
		{`"abc`, 1, `unclosed quote at column 1: end it with another "`},
		{`x "ab\"`, 3, `unclosed quote at column 3: end it with another "`},
		{`"ab\`, 1, `unclosed quote at column 1: end it with another "`},
		{`"a"b`, 4, `text right after a closing quote at column 4: separate tokens with a space`},
		{`a"b"`, 2, `quote inside a word at column 2: quote the whole phrase or value instead`},
		{`method:a"b"`, 9, `quote inside a word at column 9: quote the whole phrase or value instead`},
	} {
		f, err := Parse(tc.expr)
		if err == nil {
			t.Errorf("Parse(%q) = %q, want error %q", tc.expr, f, tc.msg)
			continue
		}
		if err.Error() != tc.msg {
			t.Errorf("Parse(%q) error:\n got %s\nwant %s", tc.expr, err, tc.msg)
		}
		var se *SyntaxError
		if !errors.As(err, &se) || se.Column != tc.col {
			t.Errorf("Parse(%q): error %#v, want a *SyntaxError at column %d", tc.expr, err, tc.col)
		}
	}
}

func TestStringIsCanonicalAndRoundTrips(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"", ""},
		{"  dir:err  ", "dir:err"},
		{"METHOD:tools/*  DIR:>", "method:tools/* dir:h2s"},
		{"dir:→ dir:< dir:←", "dir:h2s dir:s2h dir:s2h"},
		{"kind:Not-JSON", "kind:not-json"},
		{"sev:warning", "sev:warn"},
		{"status:cancel", "status:cancelled"},
		{"FLAG:Leaky-Error flag:TIMEOUT", "flag:leaky-error flag:timeout"},
		{`method:"tools/call"`, "method:tools/call"},
		{`method:"a b"`, `method:"a b"`},
		{`method:""`, `method:""`},
		{`method:!x`, `method:!x`},
		{`id:1 id:"1" id:""`, `id:1 id:"1" id:""`},
		{`id:"say \"hi\""`, `id:"say \"hi\""`},
		{`"hello"`, "hello"},
		{`"a b"`, `"a b"`},
		{`"meth:x"`, `"meth:x"`},
		{`"!x"`, `"!x"`},
		{`x!`, `x!`},
		{`12:30`, `12:30`},
		{`"say \"hi\""`, `"say \"hi\""`},
		{`"back\\slash"`, `back\slash`},
		{`""`, `""`},
		{"!hello !dir:err", "!hello !dir:err"},
		{"HeLLo", "HeLLo"},
		{"\"tab\there\"", "\"tab\there\""},
	} {
		f, err := Parse(tc.expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.expr, err)
		}
		got := f.String()
		if got != tc.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.expr, got, tc.want)
		}
		g, err := Parse(got)
		if err != nil {
			t.Fatalf("Parse(%q) (the canonical form of %q): %v", got, tc.expr, err)
		}
		if !reflect.DeepEqual(f.terms, g.terms) {
			t.Errorf("%q and its canonical form %q parse to different filters", tc.expr, got)
		}
	}
}

func TestMatchDoesNotAllocate(t *testing.T) {
	fr := corpus[0].frame
	p := []byte(corpus[0].payload)
	fr.Payload = func() []byte { return p }
	for _, expr := range []string{
		"method:tools/* !dir:err flag:timeout",
		"method:t*o?s/*l sev:warn status:ok",
		`id:"\u0031" id:1`,
		"absent",
		"wörld",
	} {
		f, err := Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { f.Match(&fr) }); n != 0 {
			t.Errorf("%q: Match allocates %v times per frame", expr, n)
		}
	}
}

func TestStringIDComparesDecodedContent(t *testing.T) {
	for _, tc := range []struct {
		wire, want string
		match      bool
	}{
		{`"1"`, "1", true},
		{`1`, "1", false},
		{`"\u0031"`, "1", true},
		{`"\u00e4 b"`, "ä b", true},
		{`"a\"b"`, `a"b`, true},
		{`"a\\b\/c"`, `a\b/c`, true},
		{`"\n\t\r\b\f"`, "\n\t\r\b\f", true},
		{`"\ud83d\ude00"`, "😀", true},
		{`"\ud83d"`, "\uFFFD", true},
		{`"\u12"`, "\u0012", false},
		{`"\x"`, "x", false},
		{`"12"`, "1", false},
		{`"1"`, "12", false},
		{`"\u0031"`, "12", false},
		{`"`, "", false},
		{``, "", false},
	} {
		if got := stringIDIs(tc.wire, tc.want); got != tc.match {
			t.Errorf("stringIDIs(%s, %q) = %v, want %v", tc.wire, tc.want, got, tc.match)
		}
	}
}

func TestGlobShapesAgreeWithTheGeneralMatcher(t *testing.T) {
	pats := []string{"", "*", "**", "tools/*", "*/list", "*call*", "a*b", "a*b*c", "**x", "x**", "?", "t?ols/*", "*a*b*", "a**b"}
	subjects := []string{"", "a", "ab", "abc", "axbxc", "acb", "tools/list", "tools/call", "x", "xx",
		"resources/list", "my/tools/call", "tools/list/x", "list", "a/call/b"}
	for _, p := range pats {
		g := compileGlob(p)
		for _, s := range subjects {
			if got, want := g.match(s), globMatch(p, s); got != want {
				t.Errorf("glob %q (shape %d) on %q = %v, the general matcher says %v", p, g.shape, s, got, want)
			}
		}
	}
	if g := compileGlob("tools/*"); g.shape != globPrefix {
		t.Errorf("tools/* compiled to shape %d, want a prefix test", g.shape)
	}
}

func TestSuggestOnlyOneCandidate(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"meth", "method"},
		{"stat", "status"},
		{"s", ""},       // too short to guess
		{"x", ""},       // nothing close
		{"kin", "kind"}, // prefix
		{"erorr", "error"},
		{"zzzzzz", ""},
	} {
		if got := suggest(tc.in, []string{"method", "dir", "kind", "id", "flag", "sev", "status", "error"}); got != tc.want {
			t.Errorf("suggest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// fate: matches what became of a frame in the tap, by the words of
// sessions.FateWords; answered stands for answered-in-place, and an
// unknown word says which are known.
func TestFateTokensMatchWhatBecameOfAFrame(t *testing.T) {
	bit := func(word string) uint32 {
		s, ok := sessions.ParseFateWord(word)
		if !ok {
			t.Fatalf("no fate word %q", word)
		}
		return uint32(s)
	}
	frames := map[string]Frame{
		"wire":     {Dir: classify.H2S, Kind: classify.KindRequest},
		"injected": {Dir: classify.H2S, Kind: classify.KindRequest, Fate: bit("injected")},
		"captured": {Dir: classify.S2H, Kind: classify.KindResponse, Fate: bit("captured")},
		"dropped":  {Dir: classify.H2S, Kind: classify.KindRequest, Fate: bit("held") | bit("dropped")},
		"inplace":  {Dir: classify.H2S, Kind: classify.KindRequest, Fate: bit("held") | bit("answered-in-place")},
		"edited":   {Dir: classify.H2S, Kind: classify.KindRequest, Fate: bit("held") | bit("edited")},
		"expired":  {Dir: classify.H2S, Kind: classify.KindRequest, Fate: bit("held") | bit("expired")},
	}
	for expr, want := range map[string]string{
		"fate:held":              "dropped edited expired inplace",
		"fate:dropped":           "dropped",
		"fate:answered":          "inplace",
		"fate:ANSWERED-IN-PLACE": "inplace",
		"fate:injected":          "injected",
		"fate:captured":          "captured",
		"fate:edited":            "edited",
		"fate:expired":           "expired",
		"!fate:held dir:h2s":     "injected wire",
	} {
		f, err := Parse(expr)
		if err != nil {
			t.Fatalf("Parse(%q): %v", expr, err)
		}
		var got []string
		for name, fr := range frames {
			if f.Match(&fr) {
				got = append(got, name)
			}
		}
		slices.Sort(got)
		if s := strings.Join(got, " "); s != want {
			t.Errorf("%s matches %q, want %q", expr, s, want)
		}
	}
	if f, _ := Parse("fate:answered"); f.String() != "fate:answered-in-place" {
		t.Errorf("canonical form %q", f.String())
	}
	_, err := Parse("fate:droped")
	if err == nil || !strings.Contains(err.Error(), `unknown fate "droped" at column 6 (did you mean dropped?)`) || !strings.Contains(err.Error(), "answered-in-place") {
		t.Errorf("Parse(fate:droped) = %v", err)
	}
}
