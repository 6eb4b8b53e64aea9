package classify

import (
	"strings"
	"testing"
)

func numberID(raw string) ID {
	m := Classify([]byte(`{"jsonrpc":"2.0","id":`+raw+`,"result":1}`), S2H, JSONRPC)
	return m.ID()
}

func TestNumberIDsCompareExactlyWhateverTheirExponent(t *testing.T) {
	huge := strings.Repeat("9", 400)
	same := [][2]string{
		{`1e9223372036854775807`, `10e9223372036854775806`},
		{`1e9223372036854775808`, `10e9223372036854775807`},
		{`1e99999999999999999999`, `0.1e100000000000000000000`},
		{`1e-99999999999999999999`, `10e-100000000000000000000`},
		{`0e9227000000000000000`, `0`},
		{`-0e-9227000000000000000`, `0`},
		{`1e0000000000000000000000000005`, `100000`},
		{`12.5e999999999999999999`, `125e999999999999999998`},
		{`1e` + huge, `0.001e1` + strings.Repeat("0", 399) + `2`},
		{`1e-` + huge, `100e-1` + strings.Repeat("0", 399) + `1`},
		{`5e1000000000000000000`, `0.5e1000000000000000001`},
		{`5e-1000000000000000000`, `50e-1000000000000000001`},
		// exponents of 19 digits and more: carries and borrows
		{`10e99999999999999999999`, `1e100000000000000000000`},
		{`0.1e-99999999999999999999`, `1e-100000000000000000000`},
		{`10e12999999999999999999`, `1e13000000000000000000`},
		{`0.1e23000000000000000000`, `1e22999999999999999999`},
		{`1e1000000000000000000`, `10e999999999999999999`},
		{`0.1e1000000000000000000`, `1e999999999999999999`},
		{`-0.001e-1000000000000000001`, `-1e-1000000000000000004`},
	}
	differ := [][2]string{
		{`1e9223372036854775807`, `1e9223372036854775800`},
		{`1e99999999999999999999`, `1e99999999999999999998`},
		{`1e-99999999999999999999`, `1e-99999999999999999998`},
		{`1e1000000000000000000`, `1e999999999999999999`},
		{`1e1000000000000000000`, `-1e1000000000000000000`},
		{`1e` + huge, `1e` + huge[1:]},
		{`2e99999999999999999999`, `1e99999999999999999999`},
		{`1e9223372036854775807`, `1e-9223372036854775807`},
	}
	for _, p := range same {
		if a, b := numberID(p[0]), numberID(p[1]); !a.IsNumber() || !a.Equal(b) {
			t.Errorf("ids %s and %s should be equal (keys %.60q, %.60q)", p[0], p[1], a.Key(), b.Key())
		}
	}
	for _, p := range differ {
		if a, b := numberID(p[0]), numberID(p[1]); !a.IsNumber() || a.Equal(b) {
			t.Errorf("ids %.40s and %.40s should differ (key %.60q)", p[0], p[1], a.Key())
		}
	}
}

func TestTheNumberOracleIsRightForHugeExponents(t *testing.T) {
	for _, c := range []struct {
		a, b  string
		equal bool
	}{
		{"1e9223372036854775807", "1e9223372036854775800", false},
		{"1e99999999999999999999", "1e99999999999999999998", false},
		{"1e9223372036854775807", "10e9223372036854775806", true},
		{"0e9227000000000000000", "0", true},
		{"-0.0e-9227000000000000000", "0e5", true},
		{"1.50e-99999999999999999999", "15e-100000000000000000000", true},
		{"1.5", "15e-1", true},
		{"1.5", "-1.5", false},
		{"123e-2", "1.23", true},
		{"9007199254740993", "9007199254740992", false},
	} {
		if got := numbersEqual(c.a, c.b); got != c.equal {
			t.Errorf("numbersEqual(%s, %s) = %v, want %v", c.a, c.b, got, c.equal)
		}
		if got := numbersEqual(c.b, c.a); got != c.equal {
			t.Errorf("numbersEqual(%s, %s) = %v, want %v", c.b, c.a, got, c.equal)
		}
		if rat, ok := ratEqual(c.a, c.b); ok && rat != c.equal {
			t.Errorf("ratEqual(%s, %s) = %v, want %v", c.a, c.b, rat, c.equal)
		}
	}
}

// The id benchmarks measure the key the tracker builds for every request
// and answer; ids of the usual shapes must stay cheap.
func benchmarkIDKey(b *testing.B, raw string) {
	id := numberID(raw)
	if !id.Valid() {
		b.Fatalf("%s is not an id", raw)
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = id.AppendKey(buf[:0])
	}
}

func BenchmarkIDKeyInteger(b *testing.B)      { benchmarkIDKey(b, `42`) }
func BenchmarkIDKeyString(b *testing.B)       { benchmarkIDKey(b, `"req-7f3a9c"`) }
func BenchmarkIDKeyFraction(b *testing.B)     { benchmarkIDKey(b, `-12.500e3`) }
func BenchmarkIDKeyHugeExponent(b *testing.B) { benchmarkIDKey(b, `1e99999999999999999999`) }
