package classify

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// addEnvelopeSeeds seeds a fuzz target with every frame of the envelope
// cases.
func addEnvelopeSeeds(f *testing.F) {
	for _, frame := range envelopeFrames() {
		f.Add(frame)
	}
	f.Add(frame1KiB(false))
	f.Add(frame1KiB(true))
}

// envelopeFrames are the frames of the envelope cases.
func envelopeFrames() [][]byte {
	var frames [][]byte
	files, _ := filepath.Glob("testdata/envelope/*.txt")
	for _, path := range files {
		t := &testing.T{}
		_, cases := readEnvelopeCases(t, path)
		for _, c := range cases {
			frames = append(frames, c.frame)
		}
	}
	return frames
}

// FuzzClassify: any bytes give a Message without panicking, in every
// direction and profile; the reader's "valid JSON" verdict agrees with
// encoding/json; a strict answer is always valid JSON.
func FuzzClassify(f *testing.F) {
	addEnvelopeSeeds(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		valid := json.Valid(frame)
		if Valid(frame) != valid {
			t.Fatalf("Valid(%q) = %v, encoding/json says %v", frame, !valid, valid)
		}
		for _, dir := range []Direction{H2S, S2H} {
			for _, p := range []Profile{JSONRPC, MCP, LSP} {
				m := Classify(frame, dir, p)
				if (m.Kind == KindNotJSON || m.Kind == KindBlank) == valid {
					t.Fatalf("%s %s %q: kind %s but encoding/json says valid=%v", dir, p, frame, m.Kind, valid)
				}
				if m.Answer != nil && !json.Valid(m.Answer.JSON()) {
					t.Fatalf("answer is not JSON: %s", m.Answer.JSON())
				}
				if !json.Valid(m.AppendJSON(nil)) {
					t.Fatalf("classify output is not JSON: %s", m.AppendJSON(nil))
				}
				if m.HasID() && m.ID().Valid() {
					_ = m.ID().Key()
				}
				_ = m.Method()
			}
		}
		// A prefix of any frame classifies without panicking too.
		if len(frame) > 2 {
			_ = ClassifyPrefix(frame[:len(frame)/2], int64(len(frame)), H2S, MCP)
		}
	})
}

// FuzzIDKey: equal ids (by the rules) give equal keys; the key of a number
// never depends on how it is written, whatever its exponent.
func FuzzIDKey(f *testing.F) {
	f.Add("1", "1.0")
	f.Add("-0", "0e5")
	f.Add("123e-2", "1.23")
	f.Add("0e9227000000000000000", "0")
	f.Add("1e9223372036854775807", "1e9223372036854775800")
	f.Add("10e99999999999999999999", "1e100000000000000000000")
	f.Add("0.1e-1000000000000000000", "1e-1000000000000000001")
	f.Fuzz(func(t *testing.T, a, b string) {
		ma := Classify([]byte(`{"jsonrpc":"2.0","id":`+a+`,"result":1}`), S2H, JSONRPC)
		mb := Classify([]byte(`{"jsonrpc":"2.0","id":`+b+`,"result":1}`), S2H, JSONRPC)
		if ma.Kind != KindResponse || mb.Kind != KindResponse || !ma.ID().IsNumber() || !mb.ID().IsNumber() {
			return
		}
		var x, y json.Number
		if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
			return
		}
		// The oracle: math/big's exact arithmetic where the exponents are
		// small enough for it, else a decimal normalisation of its own;
		// the two must agree where both can answer.
		want := numbersEqual(string(x), string(y))
		if rat, ok := ratEqual(string(x), string(y)); ok && rat != want {
			t.Fatalf("numbers %s and %s: big.Rat says equal=%v, the decimal normalisation %v", a, b, rat, want)
		}
		if got := ma.ID().Equal(mb.ID()); got != want {
			t.Fatalf("ids %s and %s: Equal=%v, exact value equal=%v", a, b, got, want)
		}
	})
}
