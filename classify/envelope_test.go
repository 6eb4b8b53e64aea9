package classify

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the expectations in testdata from what the code does now")

// An envelope case is three lines in testdata/envelope/*.txt:
//
//	h2s mcp {"jsonrpc":"2.0","id":null,"method":"ping"}
//	=> request null-id:error
//	answer {"jsonrpc":"2.0",...}
//
// The first names the direction, the profile and the frame (the rest of the
// line; q"..." is a Go-quoted frame for bytes a text file can't hold; in
// prefix*.txt, the first bytes of a frame over the parse limit). The
// second is the kind and every finding with its severity, sorted. The answer
// line is present exactly when a strict answer is owed. Comment lines (#) say
// which rule a group of cases pins.
type envelopeCase struct {
	line    int
	dir     Direction
	profile Profile
	frame   []byte
	want    string
	answer  string
}

func readEnvelopeCases(t *testing.T, path string) (lines []string, cases []envelopeCase) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "=>") || strings.HasPrefix(l, "answer ") {
			continue
		}
		parts := strings.SplitN(l, " ", 3)
		if len(parts) < 2 {
			t.Fatalf("%s:%d: want `DIR PROFILE FRAME`", path, i+1)
		}
		c := envelopeCase{line: i + 1}
		c.dir, err = ParseDirection(parts[0])
		if err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		c.profile, err = ParseProfile(parts[1])
		if err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		if len(parts) == 3 {
			c.frame = []byte(parts[2])
			if strings.HasPrefix(parts[2], `q"`) {
				s, err := strconv.Unquote(parts[2][1:])
				if err != nil {
					t.Fatalf("%s:%d: bad quoted frame: %v", path, i+1, err)
				}
				c.frame = []byte(s)
			}
		}
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "=> ") {
			c.want = strings.TrimPrefix(lines[i+1], "=> ")
		}
		if i+2 < len(lines) && strings.HasPrefix(lines[i+2], "answer ") {
			c.answer = strings.TrimPrefix(lines[i+2], "answer ")
		}
		cases = append(cases, c)
	}
	return lines, cases
}

// summary is the "=>" line for a message: kind then sorted code:severity.
func summary(m *Message) string {
	var codes []string
	for _, f := range m.Findings {
		codes = append(codes, f.Code.String()+":"+f.Severity.String())
	}
	sort.Strings(codes)
	s := m.Kind.String()
	if len(codes) > 0 {
		s += " " + strings.Join(codes, " ")
	}
	for i := range m.Members {
		s += " | " + summary(&m.Members[i])
	}
	return s
}

// judgeCase classifies a case's frame: whole, or in prefix*.txt as the
// first bytes of a frame of 1 GiB, over the parse limit.
func judgeCase(path string, c envelopeCase) Message {
	if strings.HasPrefix(filepath.Base(path), "prefix") {
		return ClassifyPrefix(c.frame, 1<<30, c.dir, c.profile)
	}
	return Classify(c.frame, c.dir, c.profile)
}

func answerText(m *Message) string {
	if m.Answer == nil {
		return ""
	}
	return string(m.Answer.JSON())
}

func TestEnvelopeCasesFromTestdata(t *testing.T) {
	files, _ := filepath.Glob("testdata/envelope/*.txt")
	if len(files) == 0 {
		t.Fatal("no envelope cases found")
	}
	for _, path := range files {
		lines, cases := readEnvelopeCases(t, path)
		if *update {
			var out []string
			for i := 0; i < len(lines); i++ {
				l := lines[i]
				if strings.HasPrefix(l, "=> ") || strings.HasPrefix(l, "answer ") {
					continue
				}
				out = append(out, l)
				for _, c := range cases {
					if c.line == i+1 {
						m := judgeCase(path, c)
						out = append(out, "=> "+summary(&m))
						if a := answerText(&m); a != "" {
							out = append(out, "answer "+a)
						}
					}
				}
			}
			if err := os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s:%d", filepath.Base(path), c.line), func(t *testing.T) {
				m := judgeCase(path, c)
				if got := summary(&m); got != c.want {
					t.Errorf("%s %s %q\n got  %s\n want %s", c.dir, c.profile, c.frame, got, c.want)
				}
				if got := answerText(&m); got != c.answer {
					t.Errorf("%s %s %q: answer\n got  %s\n want %s", c.dir, c.profile, c.frame, got, c.answer)
				}
				if a := answerText(&m); a != "" && !json.Valid([]byte(a)) {
					t.Errorf("the answer is not valid JSON: %s", a)
				}
			})
		}
	}
}

func TestFindingMessagesNeverRepeatPeerText(t *testing.T) {
	evil := "\x1b[2J\u202e<script>"
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"` + evil + `"}`,
		`{"jsonrpc":"` + evil + `","id":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":"` + evil + `","message":"` + evil + `"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":"` + evil + `"}`,
		`"` + evil + `"`,
		evil,
	}
	for _, f := range frames {
		for _, p := range []Profile{JSONRPC, MCP, LSP} {
			m := Classify([]byte(f), H2S, p)
			for _, fd := range m.Findings {
				if strings.Contains(fd.Message, "<script>") || strings.ContainsAny(fd.Message, "\x1b\u202e") {
					t.Errorf("finding %s repeats peer text: %q", fd.Code, fd.Message)
				}
			}
			if m.Answer != nil && bytes.Contains(m.Answer.JSON(), []byte("<script>")) {
				t.Errorf("answer repeats peer text: %s", m.Answer.JSON())
			}
		}
	}
}

func TestIDsCompareByExactValueAndType(t *testing.T) {
	same := [][2]string{
		{`1`, `1.0`}, {`1`, `1e0`}, {`1`, `10e-1`}, {`100`, `1e2`}, {`0`, `-0`}, {`0`, `0.000`},
		{`"1"`, `"\u0031"`}, {`"a/b"`, `"a\/b"`}, {`null`, `null`}, {`-12.5`, `-125e-1`},
		{`"😀"`, `"\ud83d\ude00"`},
		{`0.5`, `5e-1`},
		// ten or more trailing zeros: the exponent has two digits
		{`10000000000`, `1e10`}, {`1000000000000000000`, `1e18`}, {`1000000000000000000`, `10e17`},
	}
	differ := [][2]string{
		{`1`, `"1"`}, {`9007199254740993`, `9007199254740992`}, {`1`, `-1`}, {`null`, `"null"`},
		{`0`, `null`}, {`1.5`, `15`}, {`12345678901234567890123`, `12345678901234567890124`},
		// a string whose text reads like a number is still a string
		{`1`, `"1e0"`},
	}
	id := func(raw string) ID {
		m := Classify([]byte(`{"jsonrpc":"2.0","id":`+raw+`,"result":1}`), S2H, JSONRPC)
		return m.ID()
	}
	for _, p := range same {
		if !id(p[0]).Equal(id(p[1])) {
			t.Errorf("ids %s and %s should be equal (keys %q, %q)", p[0], p[1], id(p[0]).Key(), id(p[1]).Key())
		}
	}
	for _, p := range differ {
		if id(p[0]).Equal(id(p[1])) {
			t.Errorf("ids %s and %s should differ (key %q)", p[0], p[1], id(p[0]).Key())
		}
	}
	if got := string(id(`1.0`).Raw); got != `1.0` {
		t.Errorf("the id is shown as on the wire: got %s", got)
	}
}

func TestClassifyNeverAllocatesForValidFrames(t *testing.T) {
	for _, resp := range []bool{false, true} {
		frame := frame1KiB(resp)
		allocs := testing.AllocsPerRun(100, func() {
			m := Classify(frame, H2S, MCP)
			_ = m.Method()
		})
		if allocs != 0 {
			t.Errorf("response=%v: %v allocations per frame, want 0", resp, allocs)
		}
	}
}

func TestMethodDecodesEscapes(t *testing.T) {
	m := Classify([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools\/c\u0061ll"}`), H2S, MCP)
	if m.Method() != "tools/call" || !m.MethodIs("tools/call") {
		t.Errorf("Method() = %q", m.Method())
	}
}

// DecodeEscape reads exactly one escape, a surrogate pair as one, and
// decodes it as encoding/json does; anything else is not an escape.
func TestDecodeEscapeReadsOneEscape(t *testing.T) {
	for _, c := range []struct {
		in   string
		r    rune
		n    int
		fail bool
	}{
		{in: `\n rest`, r: '\n', n: 2},
		{in: `\/`, r: '/', n: 2},
		{in: `\"`, r: '"', n: 2},
		{in: `\u00e9x`, r: 'é', n: 6},
		{in: `\u202E`, r: '\u202e', n: 6},
		{in: `\ud83d\ude00!`, r: '😀', n: 12},
		{in: `\ud83d\u0041`, r: utf8.RuneError, n: 6},
		{in: `\ud83d`, r: utf8.RuneError, n: 6},
		{in: `\ude00\ud83d`, r: utf8.RuneError, n: 6},
		{in: `\u12`, fail: true},
		{in: `\u12G4`, fail: true},
		{in: `\x`, fail: true},
		{in: `\`, fail: true},
		{in: `n`, fail: true},
	} {
		r, n, ok := DecodeEscape(c.in)
		if ok == c.fail || (ok && (r != c.r || n != c.n)) {
			t.Errorf("%q: got %q, %d, %v; want %q, %d, ok %v", c.in, r, n, ok, c.r, c.n, !c.fail)
		}
		if !c.fail {
			var want string
			if err := json.Unmarshal([]byte(`"`+c.in[:c.n]+`"`), &want); err != nil || want != string(c.r) {
				t.Errorf("%q: encoding/json reads %q (%v), DecodeEscape %q", c.in[:c.n], want, err, r)
			}
		}
	}
}

// Every escape in a string, in a method, an id or deep in params, is
// judged as encoding/json judges it (the nine letters JSON has after a
// backslash, \u with four hex digits, every other letter makes the frame
// not JSON), and the escapes of invisible characters (\b, \f, \r,
// \u001b) make the frame's text unsafe while the others do not.
func TestEscapesAreJudgedAsJSONDoes(t *testing.T) {
	escapes := []string{`\u0041`, `\uZZZZ`, `\u12`, `\u001b`, `\u202e`}
	for c := range 256 {
		if c != 'u' {
			escapes = append(escapes, `\`+string([]byte{byte(c)}))
		}
	}
	unsafe := map[string]bool{`\b`: true, `\f`: true, `\r`: true, `\u001b`: true, `\u202e`: true}
	for _, esc := range escapes {
		for _, frame := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"a` + esc + `"}`,
			`{"jsonrpc":"2.0","id":"a` + esc + `","method":"m"}`,
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"text":"abcdefghijklmnop` + esc + `qrstuvwxyz"}}`,
		} {
			m := Classify([]byte(frame), H2S, JSONRPC)
			valid := json.Valid([]byte(frame))
			if (m.Kind == KindNotJSON) == valid {
				t.Errorf("%q: kind %s, while encoding/json says valid = %v", frame, m.Kind, valid)
			}
			if valid && m.Has(CodeUnsafeText) != unsafe[esc] {
				t.Errorf("%q: unsafe-text %v, want %v", frame, m.Has(CodeUnsafeText), unsafe[esc])
			}
		}
	}
}

// Long strings are scanned sixteen bytes at a time where there is
// assembly for it, short ones a word or a byte at a time: a special byte or
// escape is judged the same wherever it sits, in plain text and among
// escapes, and as encoding/json judges it.
func TestStringVerdictDoesNotDependOnWhereTheSpecialSits(t *testing.T) {
	var specials []string
	for c := range 256 {
		if c != '\\' { // a backslash is judged with the letter after it, below
			specials = append(specials, string([]byte{byte(c)}))
		}
	}
	for c := range 256 {
		if c != 'u' { // \u is judged with the four digits after it, below
			specials = append(specials, `\`+string([]byte{byte(c)}))
		}
	}
	specials = append(specials, `\u0041`, `\u202e`, `\ud83d\ude00`, "é", "\u202e", "\u2028", "\U0001F600")
	verdict := func(method string) (string, Message) {
		frame := `{"jsonrpc":"2.0","id":1,"method":"` + method + `"}`
		m := Classify([]byte(frame), H2S, JSONRPC)
		if (m.Kind == KindNotJSON) == json.Valid([]byte(frame)) {
			t.Fatalf("%q: kind %s, while encoding/json says valid = %v", frame, m.Kind, !(m.Kind == KindNotJSON))
		}
		if m.Kind != KindNotJSON {
			var want struct{ Method string }
			json.Unmarshal([]byte(frame), &want)
			if got := m.Method(); got != want.Method && utf8.ValidString(frame) {
				t.Fatalf("%q: method %q, encoding/json reads %q", frame, got, want.Method)
			}
		}
		return frame, m
	}
	for _, fill := range []string{"abcd", `a\n\"`} {
		for _, sp := range specials {
			_, short := verdict("a" + sp + "b")
			for at := 0; at <= 48; at++ {
				frame, m := verdict(repeatTo(fill, at) + sp + repeatTo(fill, 48-at))
				if (m.Kind == KindNotJSON) != (short.Kind == KindNotJSON) || m.Has(CodeUnsafeText) != short.Has(CodeUnsafeText) {
					t.Fatalf("%q: %s, but %s in a short string", frame, summary(&m), summary(&short))
				}
			}
		}
	}
}

// repeatTo repeats s to n bytes, an escape cut in two made a plain byte.
func repeatTo(s string, n int) string {
	r := strings.Repeat(s, n/len(s)+1)[:n]
	if strings.HasSuffix(r, `\`) {
		r = r[:n-1] + "x"
	}
	return r
}

func TestOversizeFrameIsJudgedFromItsPrefix(t *testing.T) {
	head := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"blob":"` + strings.Repeat("x", 1000))
	m := ClassifyPrefix(head, 300<<20, H2S, MCP)
	if m.Kind != KindRequest || !m.Has(CodeOversize) || m.Method() != "tools/call" || string(m.ID().Raw) != "7" {
		t.Errorf("got %s (method %q, id %s)", summary(&m), m.Method(), m.ID().Raw)
	}
	for _, f := range m.Findings {
		if f.Code == CodeOversize && f.Severity != Warn {
			t.Errorf("oversize is a warning, got %s", f.Severity)
		}
	}
	bad := ClassifyPrefix([]byte(`{"jsonrpc" 1`), 300<<20, H2S, MCP)
	if bad.Kind != KindNotJSON {
		t.Errorf("a prefix with a syntax error is not-json, got %s", summary(&bad))
	}
	// A batch cut at the parse limit is still a batch, and its text is
	// still looked at.
	batch := []byte(`[{"jsonrpc":"2.0","id":1,"method":"ping","params":{"t":"\u001b[2J"}},{"jsonrpc":"2.0","id":2,"meth`)
	for _, c := range []struct {
		p    Profile
		want string
	}{{MCP, "batch batch:error oversize:warn unsafe-text:warn"}, {JSONRPC, "batch batch:info oversize:warn unsafe-text:warn"}} {
		if m := ClassifyPrefix(batch, 300<<20, H2S, c.p); summary(&m) != c.want {
			t.Errorf("%s: a batch cut short: got %s, want %s", c.p, summary(&m), c.want)
		}
	}
	// A prefix that is the whole frame is no oversize.
	whole := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`)
	if m := ClassifyPrefix(whole, int64(len(whole)), H2S, MCP); m.Has(CodeOversize) || m.Kind != KindRequest {
		t.Errorf("a whole frame given as its own prefix: %s", summary(&m))
	}
}

// Classify itself judges a frame beyond the parse limit from its first
// MaxParse bytes.
func TestClassifyCutsAFrameLargerThanTheParseLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 64 MiB")
	}
	head := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"blob":"`
	frame := make([]byte, MaxParse+16)
	copy(frame, head)
	for i := len(head); i < len(frame); i++ {
		frame[i] = 'x'
	}
	copy(frame[len(frame)-4:], `"}}`)
	m := Classify(frame[:len(frame)-1], H2S, MCP)
	if m.Kind != KindRequest || !m.Has(CodeOversize) || m.Size != int64(len(frame)-1) || len(m.Frame) != MaxParse {
		t.Errorf("got %s, size %d, judged %d bytes", summary(&m), m.Size, len(m.Frame))
	}
	// A limit above MaxParse is MaxParse.
	if m := ClassifyWithin(frame[:len(frame)-1], 2*MaxParse, H2S, MCP); !m.Has(CodeOversize) || len(m.Frame) != MaxParse {
		t.Errorf("with a limit of 2×MaxParse: got %s, judged %d bytes", summary(&m), len(m.Frame))
	}
}

// ClassifyWithin judges a frame larger than its limit from that many
// bytes, and a frame within it whole.
func TestClassifyWithinCutsAtItsLimit(t *testing.T) {
	frame := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"blob":"xxxxxxxxxxxxxxxx"}}`)
	if m := ClassifyWithin(frame, 70, H2S, MCP); m.Kind != KindRequest || !m.Has(CodeOversize) || len(m.Frame) != 70 {
		t.Errorf("limit 70: got %s, judged %d bytes", summary(&m), len(m.Frame))
	}
	for _, limit := range []int{0, len(frame)} {
		if m := ClassifyWithin(frame, limit, H2S, MCP); m.Has(CodeOversize) || len(m.Frame) != len(frame) {
			t.Errorf("limit %d: got %s, judged %d bytes", limit, summary(&m), len(m.Frame))
		}
	}
}

// A frame whose LSP header block is malformed is not-json with finding
// bad-header; a body cut short of its Content-Length is judged from what
// arrived, as oversize.
func TestClassifyFramedJudgesTheFraming(t *testing.T) {
	m := ClassifyFramed(nil, FrameInfo{Framing: FramingLSP, Size: 20, HeaderLen: 20, Bad: frameBadNotHeader}, H2S, LSP)
	if m.Kind != KindNotJSON || len(m.Findings) != 1 || m.Findings[0].Code != CodeBadHeader || m.Findings[0].Severity != Error {
		t.Errorf("bad header: %s %+v", summary(&m), m.Findings)
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"`)
	m = ClassifyFramed(body, FrameInfo{Framing: FramingLSP, BodyLen: 1000}, H2S, LSP)
	if m.Kind != KindRequest || !m.Has(CodeOversize) || m.Size != 1000 {
		t.Errorf("a body given in part: %s, size %d", summary(&m), m.Size)
	}
}

// IsNotificationName is the name rule behind notification-as-request.
func TestIsNotificationNameAgreesWithTheFinding(t *testing.T) {
	for _, name := range []string{"notifications/initialized", "notifications/x", "$/progress", "$/x", "initialized", "exit",
		"textDocument/didOpen", "window/logMessage", "ping", "tools/call", "textDocument/hover", "x"} {
		for _, p := range []Profile{JSONRPC, MCP, LSP} {
			m := Classify([]byte(`{"jsonrpc":"2.0","id":1,"method":"`+name+`"}`), H2S, p)
			if got, want := IsNotificationName(name, p), m.Has(CodeNotificationAsRequest); got != want {
				t.Errorf("%s %s: IsNotificationName %v, finding %v", p, name, got, want)
			}
		}
	}
}
