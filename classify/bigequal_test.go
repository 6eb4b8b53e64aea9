package classify

import (
	"math/big"
	"regexp"
	"strings"
)

// The test oracles for the exact value of JSON numbers.

var jsonNumber = regexp.MustCompile(`^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$`)

// ratEqual compares two JSON numbers through big.Rat; ok is false when an
// exponent is too large for it to build the value (beyond ±10000 here;
// math/big itself refuses exponents past about 10^9).
func ratEqual(a, b string) (equal, ok bool) {
	if !smallExponent(a) || !smallExponent(b) {
		return false, false
	}
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	if !ok1 || !ok2 {
		return false, false
	}
	return x.Cmp(y) == 0, true
}

func smallExponent(s string) bool {
	m := jsonNumber.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	if m[4] == "" {
		return true
	}
	e, ok := new(big.Int).SetString(strings.TrimPrefix(m[4], "+"), 10)
	return ok && e.CmpAbs(big.NewInt(10000)) <= 0
}

// numbersEqual compares two JSON numbers by exact value without building
// them: each becomes a sign, its significant digits (no zeros at either
// end) and a power of ten held in a big.Int. Text that is not a JSON
// number is equal only to itself.
func numbersEqual(a, b string) bool {
	na, ok1 := normalNumber(a)
	nb, ok2 := normalNumber(b)
	if !ok1 || !ok2 {
		return a == b
	}
	return na.neg == nb.neg && na.digits == nb.digits && na.exp.Cmp(nb.exp) == 0
}

type normal struct {
	neg    bool
	digits string   // "" for zero
	exp    *big.Int // value = 0.digits × 10^exp
}

func normalNumber(s string) (normal, bool) {
	m := jsonNumber.FindStringSubmatch(s)
	if m == nil {
		return normal{}, false
	}
	exp := new(big.Int)
	if m[4] != "" {
		exp.SetString(strings.TrimPrefix(m[4], "+"), 10)
	}
	digits := m[2] + m[3]
	// digits × 10^(exp − len(frac)) = 0.digits × 10^(exp − len(frac) + len(digits))
	exp.Add(exp, big.NewInt(int64(len(digits)-len(m[3]))))
	lead := len(digits) - len(strings.TrimLeft(digits, "0"))
	digits = digits[lead:]
	exp.Sub(exp, big.NewInt(int64(lead)))
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return normal{exp: new(big.Int)}, true // zero: no sign, no exponent
	}
	return normal{neg: m[1] == "-", digits: digits, exp: exp}, true
}
