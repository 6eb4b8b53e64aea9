package sessions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

// lexerVerdict feeds b to a lexer in pieces cut at cuts and says where it
// found b stopped being JSON (len(b): nowhere) and whether it ended after
// a whole value.
func lexerVerdict(b []byte, cuts ...int) (bad int, whole bool) {
	var l jsonLexer
	at := 0
	for _, c := range append(cuts, len(b)) {
		c = min(max(c, at), len(b))
		if k := l.feed(b[at:c], nil); k < c-at {
			return at + k, false
		}
		at = c
	}
	// A number at the very end is whole too.
	switch l.state {
	case lxZero, lxInt, lxFrac, lxExp:
		return len(b), l.depth == 0
	}
	return len(b), l.state == lxEnd
}

// The masker's lexer agrees with classify.Valid (encoding/json's Valid):
// it says a valid frame is JSON to its end, wherever its pieces are cut,
// and says an invalid one either stopped being JSON or was cut short;
// the byte it stops at is one no prefix of a valid text has there.
func TestMaskLexerAgreesWithClassifyValid(t *testing.T) {
	seeds := []string{
		`{}`, `[]`, `""`, `0`, `-0.5e+10`, `true`, `null`, ` {"a" : [1, 2.0, {"b":null}], "c":"\u00e9\n\\\"x"} `,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"listChanged":true,"n":-12.5E-3,"s":"\ud83d\ude00"}}`,
		`[[[[[]]]]]`, `{"a":{"b":{"c":[true,false,null]}}}`, `"\/\b\f\r\t"`, `1e5`, `[0,1,-1,10]`,
	}
	bad := []string{
		`{`, `{"a"}`, `{"a":}`, `[1,]`, `{"a":1,}`, `01`, `-`, `1.`, `1e`, `1e+`, `tru`, `truex`, `nul1`,
		`"a` + "\x00" + `"`, `"\x"`, `"\u12g4"`, `{} {}`, `{"a":1]`, `[1}`, `{'a':1}`, "\xef\xbb\xbf{}", `+1`,
		`.5`, `{"a":supersecret123}`, `{"a":"b"}supersecret123`, `[1 2]`, `{"a" "b"}`, `{1:2}`, `]`, `}`,
	}
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(b []byte) {
		t.Helper()
		valid := classify.Valid(b)
		for range 4 {
			cut1 := rng.IntN(len(b) + 1)
			cut2 := cut1 + rng.IntN(len(b)-cut1+1)
			at, whole := lexerVerdict(b, cut1, cut2)
			switch {
			case valid && (at < len(b) || !whole):
				t.Fatalf("%q is valid; the lexer says bad at %d (whole %v), cut at %d and %d", b, at, whole, cut1, cut2)
			case !valid && at == len(b) && whole:
				t.Fatalf("%q is not valid; the lexer took it whole", b)
			case !valid && at < len(b):
				// b[:at] must still begin some JSON text: the lexer
				// says nothing of it.
				if a2, _ := lexerVerdict(b[:at]); a2 != at {
					t.Fatalf("%q: bad at %d, but its prefix is bad at %d", b, at, a2)
				}
			}
		}
	}
	for _, s := range append(seeds, bad...) {
		check([]byte(s))
	}
	// Mutations of the seeds: a byte changed, dropped or doubled.
	alphabet := []byte("{}[]\",:\\ 0123456789-+.eEtrufalsn\x00\x1f\xffaz/")
	for range 200000 {
		b := []byte(seeds[rng.IntN(len(seeds))])
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(b))
			switch rng.IntN(3) {
			case 0:
				b[i] = alphabet[rng.IntN(len(alphabet))]
			case 1:
				b = append(b[:i], b[i+1:]...)
			default:
				b = append(b[:i+1], b[i:]...)
			}
			if len(b) == 0 {
				b = []byte{alphabet[rng.IntN(len(alphabet))]}
			}
		}
		check(b)
	}
	// Nesting as deep as JSON allows is JSON; one more level is not.
	deep := strings.Repeat("[", maxJSONDepth) + strings.Repeat("]", maxJSONDepth)
	check([]byte(deep))
	check([]byte("[" + deep + "]"))
}

// A variable with a secret-looking name whose value is a JSON literal, a
// common word or a short number is no secret: nothing in a frame is
// masked for it, and a frame that says true still says true.
func TestCommonValuesAreNoSecrets(t *testing.T) {
	env := []string{"AUTH_ENABLED=true", "USE_API_KEY=false", "SOME_KEY=null", "ONE_KEY=1", "KEY_MODE=Enabled",
		"MAX_TOKENS=4096", "AUTH_PORT=8443", "TOKEN_METHOD=method", "AUTH_FLAG=on"}
	r, err := NewRedactor(env, nil)
	if err != nil {
		t.Fatal(err)
	}
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"roots":{"listChanged":true}},"x":false,"y":null,"n":4096,"text":"true, enabled, 8443 and 1","method":"on"}}`)
	if out, ok := r.Mask(frame); ok || !bytes.Equal(out, frame) {
		t.Errorf("a frame was masked for a common value: %s", out)
	}
	// Long numbers are secrets, as are words not on the list.
	r, _ = NewRedactor([]string{"PIN_KEY=73519246", "AUTH_WORD=hunter"}, nil)
	if out, _ := r.Mask([]byte(`{"a":"73519246 hunter"}`)); string(out) != `{"a":"***PIN_KEY*** ***AUTH_WORD***"}` {
		t.Errorf("long number and word: %s", out)
	}
}

// In a JSON frame a secret is masked only inside a string (a key or a
// value), at character boundaries: never as a number or literal, across
// a string's quotes, or from inside an escape. The masked frame is JSON
// of the same kind. In a frame that is not JSON it is masked anywhere.
func TestMaskingKeepsAFramesJSONShape(t *testing.T) {
	r, err := NewRedactor([]string{"API_TOKEN=supersecret123", "PIN_KEY=73519246", "SPAN_KEY=ab\",\"cd", "TAIL_KEY=xyzw\\", "HEX_KEY=0e9abcd"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{`{"a":"supersecret123"}`, `{"a":"***API_TOKEN***"}`},
		{`{"supersecret123":1}`, `{"***API_TOKEN***":1}`},
		{`{"a":73519246,"b":"73519246"}`, `{"a":73519246,"b":"***PIN_KEY***"}`},
		{`{"a":[73519246]}`, `{"a":[73519246]}`},
		{`["ab","cd"]`, `["ab","cd"]`},                              // the value across two strings
		{`["ab\",\"cd"]`, `["***SPAN_KEY***"]`},                     // the value inside one, escaped
		{`{"a":"xyzw\\"}`, `{"a":"***TAIL_KEY***"}`},                // its backslash as the escape that spells it
		{`{"a":"xyzw\"q"}`, `{"a":"xyzw\"q"}`},                      // no backslash of the value there
		{`{"a":"\u00e9abcd"}`, `{"a":"\u00e9abcd"}`},                // 0e9abcd starts inside the escape
		{`{"a":"x0e9abcd"}`, `{"a":"x***HEX_KEY***"}`},              // and outside it is masked
		{`{"a":"\\u0073upersecret123"}`, `{"a":"***API_TOKEN***"}`}, // a nested spelling, with its backslash
		{`Error: supersecret123 73519246`, `Error: ***API_TOKEN*** ***PIN_KEY***`},
		{`{"a":supersecret123}`, `{"a":***API_TOKEN***}`}, // no JSON from there on
		{`{"a":"b"} 73519246`, `{"a":"b"} ***PIN_KEY***`},
		{`{"a":73519246`, `{"a":73519246`}, // cut short, not wrong: as JSON
	} {
		out, _ := r.Mask([]byte(c.in))
		if string(out) != c.want {
			t.Errorf("Mask(%s)\n got %s\nwant %s", c.in, out, c.want)
		}
		if classify.Valid([]byte(c.in)) != classify.Valid(out) {
			t.Errorf("Mask(%s) = %s: valid %v, was %v", c.in, out, classify.Valid(out), classify.Valid([]byte(c.in)))
		}
	}
}

// Random JSON frames with a secret in every place JSON can hold it (a
// string, a key, a number, spelled with escapes, across two strings) stay
// JSON of the same kind, masked, with no secret left in any string they
// hold; in pieces cut anywhere they mask as whole.
func TestMaskedRandomFramesStayJSONOfTheSameKind(t *testing.T) {
	secrets := []string{"supersecret123", "98765432100", `s3"c\r3t`, "tok/en"}
	var env []string
	for i, s := range secrets {
		env = append(env, fmt.Sprintf("K%d_TOKEN=%s", i, s))
	}
	r, _ := NewRedactor(env, nil)
	rng := rand.New(rand.NewPCG(5, 6))
	spell := func(s string) string {
		var b strings.Builder
		for _, c := range s {
			switch {
			case rng.IntN(3) == 0:
				fmt.Fprintf(&b, `\u%04x`, c)
			case c == '"' || c == '\\':
				b.WriteString(`\` + string(c))
			case c == '/' && rng.IntN(2) == 0:
				b.WriteString(`\/`)
			default:
				b.WriteRune(c)
			}
		}
		return b.String()
	}
	var value func(depth int) string
	str := func() string {
		var b strings.Builder
		b.WriteByte('"')
		for range rng.IntN(4) {
			switch rng.IntN(4) {
			case 0:
				b.WriteString(spell(secrets[rng.IntN(len(secrets))]))
			case 1:
				b.WriteString([]string{`\\`, `\"`, `\n`, `\u0041`, "é", " ", "x"}[rng.IntN(7)])
			default:
				b.WriteString("word")
			}
		}
		b.WriteByte('"')
		return b.String()
	}
	value = func(depth int) string {
		switch k := rng.IntN(8); {
		case k == 0 && depth < 4:
			var parts []string
			for range rng.IntN(4) {
				parts = append(parts, str()+":"+value(depth+1))
			}
			return "{" + strings.Join(parts, ",") + "}"
		case k == 1 && depth < 4:
			var parts []string
			for range rng.IntN(4) {
				parts = append(parts, value(depth+1))
			}
			return "[" + strings.Join(parts, ", ") + "]"
		case k == 2:
			return "98765432100"
		case k == 3:
			return []string{"true", "false", "null", "-1.5e3"}[rng.IntN(4)]
		}
		return str()
	}
	for range 3000 {
		frame := []byte(`{"jsonrpc":"2.0","id":` + []string{"1", `"supersecret123"`, "98765432100"}[rng.IntN(3)] + `,"method":"m","params":` + value(0) + `}`)
		if !classify.Valid(frame) {
			t.Fatalf("the test made a frame that is not JSON: %s", frame)
		}
		out, _ := r.Mask(frame)
		if !classify.Valid(out) {
			t.Fatalf("Mask broke the frame:\n in %s\nout %s", frame, out)
		}
		in, got := classify.ClassifyFramed(frame, classify.FrameInfo{}, classify.H2S, classify.JSONRPC), classify.ClassifyFramed(out, classify.FrameInfo{}, classify.H2S, classify.JSONRPC)
		if in.Kind != got.Kind {
			t.Fatalf("Mask made a %s a %s:\n in %s\nout %s", in.Kind, got.Kind, frame, out)
		}
		var v any
		json.Unmarshal(out, &v)
		if leak := stringHolding(v, secrets); leak != "" {
			t.Fatalf("a string holds a secret after Mask: %q\n in %s\nout %s", leak, frame, out)
		}
		var pieces bytes.Buffer
		mw := r.Writer(&pieces)
		for b := frame; len(b) > 0; {
			n := min(len(b), 1+rng.IntN(24))
			mw.Write(b[:n])
			b = b[n:]
		}
		mw.Close()
		if !bytes.Equal(pieces.Bytes(), out) {
			t.Fatalf("in pieces:\n got %s\nwant %s", pieces.Bytes(), out)
		}
	}
}

// stringHolding returns a string (key or value) in v that holds one of
// secrets, or "".
func stringHolding(v any, secrets []string) string {
	has := func(s string) bool {
		for _, sec := range secrets {
			if strings.Contains(s, sec) {
				return true
			}
		}
		return false
	}
	switch v := v.(type) {
	case string:
		if has(v) {
			return v
		}
	case []any:
		for _, e := range v {
			if s := stringHolding(e, secrets); s != "" {
				return s
			}
		}
	case map[string]any:
		for k, e := range v {
			if has(k) {
				return k
			}
			if s := stringHolding(e, secrets); s != "" {
				return s
			}
		}
	}
	return ""
}

// An LSP header block is masked in its header values: never in a name,
// nor in Content-Length's value; a line that is no header, whole.
func TestMaskHeaderMasksHeaderValuesOnly(t *testing.T) {
	r, _ := NewRedactor([]string{"API_TOKEN=supersecret123", "LEN_KEY=12345678"}, nil)
	in := "Content-Length: 12345678\r\nX-supersecret123: a supersecret123 b\r\nX-Len: 12345678\r\nsupersecret123\r\n\r\n"
	want := "Content-Length: 12345678\r\nX-supersecret123: a ***API_TOKEN*** b\r\nX-Len: ***LEN_KEY***\r\n***API_TOKEN***\r\n\r\n"
	if out, ok := r.MaskHeader([]byte(in)); !ok || string(out) != want {
		t.Errorf("MaskHeader:\n got %q\nwant %q", out, want)
	}
	if out, ok := r.MaskHeader([]byte("Content-Type: x\r\n\r\n")); ok || string(out) != "Content-Type: x\r\n\r\n" {
		t.Errorf("nothing to mask: %q %v", out, ok)
	}
}

// A mask is at home in a JSON string and a header: a --redact name with
// quotes, backslashes or line breaks gives a mask without them.
func TestMaskOfANameWithAwkwardBytesIsPlain(t *testing.T) {
	r, _ := NewRedactor(nil, []string{"a\"b\\c\r\nd=supersecret123"})
	out, _ := r.Mask([]byte(`{"a":"supersecret123"}`))
	if string(out) != `{"a":"***a_b_c__d***"}` || !classify.Valid(out) {
		t.Errorf("mask of an awkward name: %s", out)
	}
}

// BenchmarkMaskWriter streams a frame too large to hold, with no secret
// in it, through the masking writer in 64 KiB pieces: as a frame (the
// JSON rules, so the lexer reads every byte) and as text (no lexer), to
// compare in one run.
func BenchmarkMaskWriter(b *testing.B) {
	r, _ := NewRedactor([]string{"API_TOKEN=supersecret123", "DB_PASSWORD=hunter2hunter2"}, nil)
	var frame bytes.Buffer
	frame.WriteString(`{"jsonrpc":"2.0","id":1,"result":{"items":[`)
	for frame.Len() < 8<<20 {
		frame.WriteString(`{"name":"item","text":"some words, a path /tmp/x, \"quoted\" and numbers","n":123.5,"ok":true},`)
	}
	frame.WriteString(`{}]}}`)
	data := frame.Bytes()
	for _, mode := range []string{"frame", "text"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				w := r.Writer(io.Discard)
				if mode == "text" {
					w.lx = nil
				}
				for p := data; len(p) > 0; {
					n := min(len(p), 64<<10)
					w.Write(p[:n])
					p = p[n:]
				}
				w.Close()
				if w.Masked() {
					b.Fatal("masked")
				}
			}
		})
	}
}
