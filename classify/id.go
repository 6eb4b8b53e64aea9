package classify

import "strconv"

// An ID is a JSON-RPC id as it appeared on the wire. Two ids are equal when
// they are both strings with the same decoded content, both numbers with the
// same exact value, or both null. A string id "1" and a number id 1 are
// different ids, always.
type ID struct {
	// Raw is the id's JSON text exactly as on the wire (it aliases the frame).
	Raw []byte
	typ valType
}

// IsString, IsNumber and IsNull report the id's JSON type.
func (id ID) IsString() bool { return id.typ == valString }
func (id ID) IsNumber() bool { return id.typ == valNumber }
func (id ID) IsNull() bool   { return id.typ == valNull }

// Valid reports whether the id is of a type JSON-RPC allows: a string, a
// number or null.
func (id ID) Valid() bool { return id.typ == valString || id.typ == valNumber || id.typ == valNull }

// String is the id's wire text.
func (id ID) String() string { return string(id.Raw) }

// Text is the id as a span or a report names it: a string's decoded
// content (JSON's escapes, so "a\/b" is a/b), any other id as written.
func (id ID) Text() string {
	if s, ok := StringValue(id.Raw); ok {
		return s
	}
	return string(id.Raw)
}

// Equal compares two ids by the rules above.
func (id ID) Equal(other ID) bool {
	var a, b [64]byte
	return string(id.AppendKey(a[:0])) == string(other.AppendKey(b[:0]))
}

// Key is a string that is equal for equal ids and different otherwise, for
// use as a map key.
func (id ID) Key() string { return string(id.AppendKey(nil)) }

// AppendKey appends the id's key (see Key) to dst.
func (id ID) AppendKey(dst []byte) []byte {
	switch id.typ {
	case valString:
		dst = append(dst, 's')
		raw := id.Raw[1 : len(id.Raw)-1]
		for _, c := range raw {
			if c == '\\' {
				d, ok := unescape(dst, raw)
				if ok {
					return d
				}
				return append(dst, raw...)
			}
		}
		return append(dst, raw...)
	case valNumber:
		return appendNumberKey(append(dst, 'n'), id.Raw)
	case valNull:
		return append(dst, 'z')
	}
	dst = append(dst, 'x')
	return append(dst, id.Raw...)
}

// appendNumberKey writes a number's exact value in one canonical form:
// sign, significant digits without leading or trailing zeros, and a decimal
// exponent. 1, 1.0, 10e-1 and 1e0 all give "1e0"; big integers keep every
// digit, and every exponent keeps its every digit too (see appendExponent).
func appendNumberKey(dst, raw []byte) []byte {
	// Fast path: a plain positive integer, the id almost every peer sends.
	if len(raw) > 0 && len(raw) < 20 && raw[0] >= '1' && raw[0] <= '9' {
		plain := true
		for _, c := range raw[1:] {
			if c < '0' || c > '9' {
				plain = false
				break
			}
		}
		if plain {
			n := len(raw)
			for raw[n-1] == '0' {
				n--
			}
			dst = append(dst, raw[:n]...)
			if z := len(raw) - n; z < 10 {
				return append(dst, 'e', byte('0'+z))
			}
			return strconv.AppendInt(append(dst, 'e'), int64(len(raw)-n), 10)
		}
	}
	i := 0
	neg := false
	if i < len(raw) && raw[i] == '-' {
		neg = true
		i++
	}
	intStart := i
	for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
		i++
	}
	intPart := raw[intStart:i]
	var frac []byte
	if i < len(raw) && raw[i] == '.' {
		i++
		j := i
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
		frac = raw[j:i]
	}
	var exp []byte // the exponent's digits, without leading zeros
	expNeg := false
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			expNeg = raw[i] == '-'
			i++
		}
		j := i
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
		exp = raw[j:i]
		for len(exp) > 0 && exp[0] == '0' {
			exp = exp[1:]
		}
	}
	// digits = intPart + frac, value = digits × 10^(exp + shift); shift,
	// which counts the fraction's digits and the zeros stripped below, is
	// bounded by the text's length.
	shift := -int64(len(frac))
	// Strip leading zeros across both parts.
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	if len(intPart) == 0 {
		for len(frac) > 0 && frac[0] == '0' {
			frac = frac[1:]
		}
	}
	// Strip trailing zeros, raising the exponent.
	for len(frac) > 0 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
		shift++
	}
	if len(frac) == 0 {
		for len(intPart) > 0 && intPart[len(intPart)-1] == '0' {
			intPart = intPart[:len(intPart)-1]
			shift++
		}
	}
	if len(intPart) == 0 && len(frac) == 0 {
		return append(dst, '0')
	}
	if neg {
		dst = append(dst, '-')
	}
	dst = append(dst, intPart...)
	dst = append(dst, frac...)
	dst = append(dst, 'e')
	return appendExponent(dst, exp, expNeg, shift)
}

// appendExponent writes the exponent ±digits + shift in decimal, exactly.
// An exponent of up to 18 digits is summed in an int64. A longer one (no
// peer sends such an id, but a hostile one may, and 1e99999999999999999999
// is not 1e99999999999999999998) has shift added to its text, digit by
// digit, so that no exponent is cut short and the number is never built.
// Both ways write the sum's one decimal form, so that they agree.
func appendExponent(dst, digits []byte, neg bool, shift int64) []byte {
	if len(digits) <= 18 {
		var e int64
		for _, c := range digits {
			e = e*10 + int64(c-'0')
		}
		if neg {
			e = -e
		}
		return strconv.AppendInt(dst, e+shift, 10)
	}
	// |exponent| ≥ 10^18 > |shift|: the sum has the exponent's sign, and
	// its magnitude is |exponent| + shift, or |exponent| − shift when the
	// exponent is negative.
	if neg {
		dst = append(dst, '-')
		shift = -shift
	}
	start := len(dst)
	dst = append(dst, digits...)
	// Add shift to the last 18 digits, then carry into the rest (or
	// borrow from it, which has a digit above zero).
	tail := dst[len(dst)-18:]
	var t int64
	for _, c := range tail {
		t = t*10 + int64(c-'0')
	}
	t += shift
	carry := 0
	switch {
	case t >= 1e18:
		t, carry = t-1e18, 1
	case t < 0:
		t, carry = t+1e18, -1
	}
	for k := len(tail) - 1; k >= 0; k-- {
		tail[k] = byte('0' + t%10)
		t /= 10
	}
	head := dst[start : len(dst)-18]
	for k := len(head) - 1; k >= 0 && carry != 0; k-- {
		switch d := int(head[k]-'0') + carry; {
		case d > 9:
			head[k] = '0'
		case d < 0:
			head[k] = '9'
		default:
			head[k], carry = byte('0'+d), 0
		}
	}
	if carry > 0 { // the exponent was all nines
		dst = append(dst[:start+1], dst[start:]...)
		dst[start] = '1'
	}
	// A borrow may have left zeros in front.
	n := start
	for n < len(dst)-1 && dst[n] == '0' {
		n++
	}
	return append(dst[:start], dst[n:]...)
}

// numberShape reports whether a number's text has a fraction or exponent,
// and whether it is an integer beyond ±(2^53−1).
func numberShape(raw []byte) (fractional, unsafeInt bool) {
	digits := 0
	start := 0
	if len(raw) > 0 && raw[0] == '-' {
		start = 1
	}
	for _, c := range raw[start:] {
		if c == '.' || c == 'e' || c == 'E' {
			return true, false
		}
		digits++
	}
	if digits < 16 {
		return false, false
	}
	if digits > 16 {
		return false, true
	}
	// 16 digits: compare with 9007199254740991.
	return false, string(raw[start:]) > "9007199254740991"
}
