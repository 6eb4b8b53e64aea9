package sessions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/rpctap/rpctap/classify"
)

func TestRedactorMasksSecretLookingEnvironmentValuesAndNamedOnes(t *testing.T) {
	env := []string{"API_TOKEN=tok-123456", "HOME=/home/u", "DB_PASSWORD=hunter22", "PORT=8080", "SHORT_KEY=abc"}
	r, err := NewRedactor(env, []string{"HOME", "CUSTOM=literal-value"})
	if err != nil {
		t.Fatal(err)
	}
	in := []byte(`{"a":"tok-123456","b":"/home/u/x","c":"hunter22","d":"8080","e":"abc","f":"literal-value"}`)
	out, ok := r.Mask(in)
	if !ok {
		t.Fatal("nothing was masked")
	}
	for _, gone := range []string{"tok-123456", "/home/u", "hunter22", "literal-value"} {
		if bytes.Contains(out, []byte(gone)) {
			t.Errorf("%q is still in %s", gone, out)
		}
	}
	for _, kept := range []string{"8080", `"abc"`, "***API_TOKEN***", "***DB_PASSWORD***", "***HOME***", "***CUSTOM***"} {
		if !bytes.Contains(out, []byte(kept)) {
			t.Errorf("%q should be in %s", kept, out)
		}
	}
	if !classify.Valid(out) {
		t.Errorf("masking broke the JSON: %s", out)
	}
	if _, err := NewRedactor(nil, []string{"NOPE_NOT_SET_ANYWHERE"}); err == nil || !strings.Contains(err.Error(), "no environment variable") {
		t.Errorf("naming a variable that does not exist: %v", err)
	}
}

// A secret is found however JSON spells it. Each spelling below decodes, as
// a JSON string, to the secret.
func TestRedactorFindsASecretInEveryJSONSpellingOfIt(t *testing.T) {
	const value = "tok/en\"x\\yé😀z"
	r, err := NewRedactor([]string{"API_TOKEN=" + value}, nil)
	if err != nil {
		t.Fatal(err)
	}
	spellings := []string{
		`tok\/en\"x\\yé😀z`,
		`\u0074ok\/en\"x\\yé😀z`,
		`tok\u002Fen\u0022x\u005cy\u00E9\uD83D\uDE00z`,
		`\u0074\u006f\u006b\u002f\u0065\u006e\u0022\u0078\u005c\u0079\u00e9\ud83d\ude00\u007a`,
		`tok/en\"x\\y\u00e9😀\u007A`,
	}
	for _, sp := range spellings {
		var decoded string
		if err := json.Unmarshal([]byte(`"`+sp+`"`), &decoded); err != nil || decoded != value {
			t.Fatalf("test spelling %s decodes to %q (%v), not the secret", sp, decoded, err)
		}
		frame := []byte(`{"jsonrpc":"2.0","method":"x","params":{"a":"<` + sp + `>","b":"` + sp + `"}}`)
		out, ok := r.Mask(frame)
		want := `{"jsonrpc":"2.0","method":"x","params":{"a":"<***API_TOKEN***>","b":"***API_TOKEN***"}}`
		if !ok || string(out) != want {
			t.Errorf("spelling %s:\n got %s\nwant %s", sp, out, want)
		}
	}
	// A spelling that begins right after a backslash escaping its first
	// byte (a peer's literal \u0074ok...) reads as the secret: it is
	// masked with that backslash, which keeps the string well formed.
	if out, _ := r.Mask([]byte(`{"a":"\\u0074ok\/en\"x\\yé😀z"}`)); string(out) != `{"a":"***API_TOKEN***"}` {
		t.Errorf("after an escaping backslash: %s", out)
	}
	// What decodes to something else is left alone.
	for _, near := range []string{`tok\/en\"x\\yé😀`, `tok\\/en\"x\\yé😀z`, `tok\/en\"x\\y\u00e8😀z`} {
		frame := []byte(`{"a":"` + near + `"}`)
		if out, ok := r.Mask(frame); ok || !bytes.Equal(out, frame) {
			t.Errorf("%s was masked: %s", near, out)
		}
	}
}

// Where one secret's value holds another's, the longer is masked whole, in
// whatever spelling.
func TestRedactorMasksTheLongerOfTwoSecretsThatStartTogether(t *testing.T) {
	r, _ := NewRedactor([]string{"SHORT_KEY=abcd", "LONG_KEY=abcdef"}, nil)
	for in, want := range map[string]string{
		`"abcdef abcd abcdxy"`:  `"***LONG_KEY*** ***SHORT_KEY*** ***SHORT_KEY***xy"`,
		`"abcd\u0065f"`:         `"***LONG_KEY***"`,
		`"\u0061bcd\u0065f ab"`: `"***LONG_KEY*** ab"`,
	} {
		if out, _ := r.Mask([]byte(in)); string(out) != want {
			t.Errorf("%s: got %s, want %s", in, out, want)
		}
	}
}

// Bytes that come in pieces (a frame too large to hold) are masked as the
// whole would be, wherever the pieces are cut.
func TestMaskWriterFindsASecretCutAcrossPieces(t *testing.T) {
	r, _ := NewRedactor([]string{"API_TOKEN=supersecret123", "OTHER_SECRET=é😀é😀"}, nil)
	whole := []byte(`{"a":"supersecret123","b":"\u0073uper\u0073ecret123","c":"xsupersecret12","d":"\u00e9\ud83d\ude00é😀","e":"\\\\\u0073upersecret123","f":"\\\u0073upersecret123","g":"\\u0073upersecret123"}supersecret123`)
	want, ok := r.Mask(whole)
	if !ok || bytes.Contains(want, []byte("ecret123")) || bytes.Contains(want, []byte(`\ud83d`)) {
		t.Fatalf("mask of the whole: %s", want)
	}
	for cut1 := 0; cut1 <= len(whole); cut1++ {
		for _, cut2 := range []int{cut1, cut1 + 1, cut1 + 7, len(whole)} {
			cut2 = min(max(cut2, cut1), len(whole))
			var got bytes.Buffer
			mw := r.Writer(&got)
			mw.Write(whole[:cut1])
			mw.Write(whole[cut1:cut2])
			mw.Write(whole[cut2:])
			mw.Close()
			if !bytes.Equal(got.Bytes(), want) || !mw.Masked() {
				t.Fatalf("cut at %d and %d:\n got %s\nwant %s", cut1, cut2, got.Bytes(), want)
			}
		}
	}
}

// BenchmarkMask masks frames that hold no secret, with a few secrets
// known, as most frames are.
func BenchmarkMask(b *testing.B) {
	r, _ := NewRedactor([]string{"API_TOKEN=supersecret123", "SSH_AUTH_SOCK=/tmp/ssh-XXXXabcd/agent.1234", "DB_PASSWORD=hunter2hunter2"}, nil)
	frames := map[string][]byte{
		"plain":   bytes.Repeat([]byte(`{"type":"text","text":"some words, a path /tmp/x and numbers 123"},`), 16),
		"escaped": bytes.Repeat([]byte(`{"type":"text","text":"{\"a\":\"b\\/c\",\"d\":\"\\u00e9\"}"},`), 16),
	}
	for name, f := range frames {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(f)))
			for b.Loop() {
				if _, ok := r.Mask(f); ok {
					b.Fatal("masked")
				}
			}
		})
	}
}

// Random spellings of secrets, among random JSON escapes, are all masked,
// and nothing else is; whole or in pieces.
func TestRedactorMasksRandomSpellingsAndNothingElse(t *testing.T) {
	values := []string{"supersecret123", "s3/cr\"t\\é😀", "abcd"}
	r, _ := NewRedactor([]string{"A_TOKEN=" + values[0], "B_TOKEN=" + values[1], "C_TOKEN=" + values[2]}, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	spell := func(v string) string {
		var b strings.Builder
		for _, c := range v {
			switch rng.IntN(3) {
			case 0:
				if c == '"' || c == '\\' {
					b.WriteString(`\` + string(c))
				} else {
					b.WriteRune(c)
				}
			case 1:
				if c > 0xffff {
					r1, r2 := utf16.EncodeRune(c)
					fmt.Fprintf(&b, `\u%04x\u%04X`, r1, r2)
				} else {
					fmt.Fprintf(&b, `\u%04X`, c)
				}
			default:
				if q := map[rune]string{'/': `\/`, '"': `\"`, '\\': `\\`}[c]; q != "" {
					b.WriteString(q)
				} else if c > 0xffff {
					r1, r2 := utf16.EncodeRune(c)
					fmt.Fprintf(&b, `\u%04X\u%04x`, r1, r2)
				} else {
					fmt.Fprintf(&b, `\u%04x`, c)
				}
			}
		}
		return b.String()
	}
	fillers := []string{"x", " ", `\"`, `\\`, `\/`, `\n`, `\u0041`, "é", `\u00e9`, "s", "super", "sec", `\\u0073`}
	for range 2000 {
		var in, want strings.Builder
		in.WriteString(`{"a":"`)
		want.WriteString(`{"a":"`)
		for range rng.IntN(12) {
			if rng.IntN(3) == 0 {
				k := rng.IntN(len(values))
				in.WriteString(spell(values[k]))
				want.WriteString("***" + string(rune('A'+k)) + "_TOKEN***")
			} else {
				f := fillers[rng.IntN(len(fillers))]
				in.WriteString(f)
				want.WriteString(f)
			}
			in.WriteString("|") // no filler runs into a value
			want.WriteString("|")
		}
		in.WriteString(`"}`)
		want.WriteString(`"}`)
		got, _ := r.Mask([]byte(in.String()))
		if string(got) != want.String() {
			t.Fatalf("in   %s\ngot  %s\nwant %s", in.String(), got, want.String())
		}
		var pieces bytes.Buffer
		mw := r.Writer(&pieces)
		for b := []byte(in.String()); len(b) > 0; {
			n := min(len(b), 1+rng.IntN(20))
			mw.Write(b[:n])
			b = b[n:]
		}
		mw.Close()
		if pieces.String() != want.String() {
			t.Fatalf("in pieces: in %s\ngot  %s\nwant %s", in.String(), pieces.String(), want.String())
		}
	}
}

// A person edits a held frame as the view shows it, masked. Unmask puts
// back, for each mask the edit left as it was, the secret it masked,
// spelled as it was (escapes too), in order; a mask the person changed, or
// one for a secret the frame did not carry, stays as typed.
func TestUnmaskPutsBackTheSecretsAnEditLeftMasked(t *testing.T) {
	r, err := NewRedactor([]string{"API_TOKEN=tok-123456", "DB_PASSWORD=hunter22"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	original := []byte(`{"a":"tok-123456","b":"\u0074ok-123456","c":"x"}`)
	masked, _ := r.Mask(original)
	if string(masked) != `{"a":"***API_TOKEN***","b":"***API_TOKEN***","c":"x"}` {
		t.Fatalf("masked: %s", masked)
	}
	for _, c := range []struct{ edit, want string }{
		{string(masked), string(original)},
		{`{"a":"***API_TOKEN***","b":"***API_TOKEN***","c":"edited"}`, `{"a":"tok-123456","b":"\u0074ok-123456","c":"edited"}`},
		{`{"b":"***API_TOKEN***"}`, `{"b":"tok-123456"}`},
		{`{"a":"***API_TOKEN***","b":"***API_TOKEN***","c":"***API_TOKEN***"}`, `{"a":"tok-123456","b":"\u0074ok-123456","c":"\u0074ok-123456"}`},
		{`{"a":"***API_TOKEN**","c":"***DB_PASSWORD***"}`, `{"a":"***API_TOKEN**","c":"***DB_PASSWORD***"}`},
	} {
		if got := r.Unmask([]byte(c.edit), original); string(got) != c.want {
			t.Errorf("Unmask(%s) = %s, want %s", c.edit, got, c.want)
		}
	}
	// A backslash the mask took (a peer's literal \\u0074...) comes back.
	odd := []byte(`{"a":"\\u0074ok-123456"}`)
	m, _ := r.Mask(odd)
	if got := r.Unmask(m, odd); !bytes.Equal(got, odd) {
		t.Errorf("Unmask(%s) = %s, want %s", m, got, odd)
	}
	if got := (*Redactor)(nil).Unmask([]byte("***API_TOKEN***"), original); string(got) != "***API_TOKEN***" {
		t.Errorf("a nil Redactor unmasked: %s", got)
	}
}

// The redactor keeps the name of a secret it left in clear because a
// frame wrote it as a number, and only then: not for one it masked in a
// string, nor in text that is no frame (masked wherever it is).
func TestTheRedactorSaysWhichSecretItLeftInClear(t *testing.T) {
	r, err := NewRedactor([]string{"DB_PIN_KEY=123456789012", "API_TOKEN=tok-abcdef-1234"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Mask([]byte(`{"pin":"123456789012","token":"tok-abcdef-1234"}`))
	r.MaskString("pin 123456789012")
	if got := r.InClear(); got != "" {
		t.Errorf("InClear is %q after secrets masked in strings and text", got)
	}
	if out, _ := r.Mask([]byte(`{"pin":123456789012}`)); string(out) != `{"pin":123456789012}` {
		t.Errorf("a number was changed: %s", out)
	}
	if got := r.InClear(); got != "DB_PIN_KEY" {
		t.Errorf("InClear is %q after a secret written as a number, want DB_PIN_KEY", got)
	}
}
