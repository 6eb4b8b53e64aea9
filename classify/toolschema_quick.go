package classify

import (
	"encoding/json"
	"math/big"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A quickSchema is a compiled tool schema of the kind most tools list —
// objects of typed properties, required members and additionalProperties;
// strings with a length, pattern, format or enum; numbers with bounds;
// arrays of one item schema — read off the validator's compiled form, and
// judged on a value's JSON bytes, decoding nothing. It says that a value is
// valid, or that it cannot tell: then the validator judges the value (see
// validate), so a verdict and a finding's text are always the validator's.
// toolschema_quick_test.go holds it to the validator over generated schemas
// and values.
//
// Its work is one pass over the value, each value meeting at most one
// subschema, so it needs no budget; a schema with anything else (a $ref,
// a combinator, a keyword it does not know) has no quick form.
type quickSchema struct {
	always, never bool               // the schema true (or one with no assertion), and false
	types         uint8              // the types allowed (quickType bits); 0: any
	format        *jsonschema.Format // asked of strings (it allows other values)
	enum          []string           // the strings allowed, when the schema has an enum

	props     map[string]*quickSchema
	required  map[string]int // a required member's bit in a found set
	noExtra   bool           // additionalProperties false
	extra     *quickSchema   // additionalProperties as a schema; nil: any
	items     *quickSchema   // nil: any
	minItems  int            // -1: no bound, as for each bound below
	maxItems  int
	minLength int
	maxLength int
	pattern   jsonschema.Regexp

	minimum, maximum, exclusiveMinimum, exclusiveMaximum *quickBound
}

// The JSON types, as bits of quickSchema.types.
const (
	qNull uint8 = 1 << iota
	qBoolean
	qNumber
	qInteger
	qString
	qArray
	qObject
)

var quickTypeNames = map[string]uint8{"null": qNull, "boolean": qBoolean, "number": qNumber,
	"integer": qInteger, "string": qString, "array": qArray, "object": qObject}

// A quickBound is a number's bound, also as an int64 when it is an
// integer that fits one (most are).
type quickBound struct {
	rat   *big.Rat
	i     int64
	isInt bool
}

// The limits of the schemas a quick form is made for: past them (a schema
// nested deeper, more required members than a found set holds, an enum
// longer than worth a linear look) the validator judges.
const (
	maxQuickDepth    = 32
	maxQuickRequired = 64
	maxQuickEnum     = 64
)

// quickForm is the quick form of the compiled schema s, or nil when s (or
// a subschema of it) asserts something a quick form does not judge.
func quickForm(s *jsonschema.Schema, depth int) *quickSchema {
	if s == nil || depth > maxQuickDepth {
		return nil
	}
	if s.Bool != nil {
		return &quickSchema{always: *s.Bool, never: !*s.Bool}
	}
	if s.Ref != nil || s.RecursiveRef != nil || s.DynamicRef != nil || s.Const != nil ||
		s.Not != nil || len(s.AllOf) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0 ||
		s.If != nil || s.Then != nil || s.Else != nil ||
		s.MaxProperties != nil || s.MinProperties != nil || s.PropertyNames != nil ||
		len(s.PatternProperties) > 0 || len(s.Dependencies) > 0 || len(s.DependentRequired) > 0 ||
		len(s.DependentSchemas) > 0 || s.UnevaluatedProperties != nil ||
		s.UniqueItems || s.Contains != nil || s.MinContains != nil || s.MaxContains != nil ||
		s.AdditionalItems != nil || len(s.PrefixItems) > 0 || s.UnevaluatedItems != nil ||
		s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil ||
		s.MultipleOf != nil {
		return nil
	}
	if s.Format != nil && !allowsOtherValues(s.Format) {
		return nil
	}
	for _, ext := range s.Extensions {
		if _, ok := ext.(budgetExt); !ok {
			return nil
		}
	}
	q := &quickSchema{format: s.Format, pattern: s.Pattern,
		minItems: bound(s.MinItems), maxItems: bound(s.MaxItems),
		minLength: bound(s.MinLength), maxLength: bound(s.MaxLength),
		minimum: ratBound(s.Minimum), maximum: ratBound(s.Maximum),
		exclusiveMinimum: ratBound(s.ExclusiveMinimum), exclusiveMaximum: ratBound(s.ExclusiveMaximum)}
	if s.Types != nil {
		for _, name := range s.Types.ToStrings() {
			q.types |= quickTypeNames[name]
		}
	}
	if s.Enum != nil {
		if len(s.Enum.Values) > maxQuickEnum {
			return nil
		}
		q.enum = make([]string, 0, len(s.Enum.Values))
		for _, v := range s.Enum.Values {
			str, ok := v.(string)
			if !ok {
				return nil
			}
			q.enum = append(q.enum, str)
		}
	}
	if len(s.Properties) > 0 {
		q.props = make(map[string]*quickSchema, len(s.Properties))
		for name, sub := range s.Properties {
			if q.props[name] = quickForm(sub, depth+1); q.props[name] == nil {
				return nil
			}
		}
	}
	if len(s.Required) > maxQuickRequired {
		return nil
	}
	if len(s.Required) > 0 {
		q.required = make(map[string]int, len(s.Required))
		for _, name := range s.Required {
			if _, dup := q.required[name]; !dup {
				q.required[name] = len(q.required)
			}
		}
	}
	switch extra := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		q.noExtra = !extra
	case *jsonschema.Schema:
		if q.extra = quickForm(extra, depth+1); q.extra == nil {
			return nil
		}
	default:
		return nil
	}
	items := any(s.Items2020)
	if s.DraftVersion < 2020 {
		items = s.Items
	}
	switch items := items.(type) {
	case nil:
	case *jsonschema.Schema:
		if items != nil {
			if q.items = quickForm(items, depth+1); q.items == nil {
				return nil
			}
		}
	default:
		return nil // a tuple of item schemas
	}
	q.always = q.types == 0 && q.format == nil && q.enum == nil && q.props == nil && q.required == nil &&
		!q.noExtra && q.extra == nil && q.items == nil && q.minItems < 0 && q.maxItems < 0 &&
		q.minLength < 0 && q.maxLength < 0 && q.pattern == nil &&
		q.minimum == nil && q.maximum == nil && q.exclusiveMinimum == nil && q.exclusiveMaximum == nil
	return q
}

// allowsOtherValues reports whether format f allows values that are not
// strings, as every format the validator knows does: a format judges
// strings, and a quick form asks it of strings only.
func allowsOtherValues(f *jsonschema.Format) bool {
	for _, v := range []any{nil, true, json.Number("1"), []any{"x"}, map[string]any{"x": "x"}} {
		if f.Validate(v) != nil {
			return false
		}
	}
	return true
}

func bound(n *int) int {
	if n == nil {
		return -1
	}
	return *n
}

func ratBound(r *big.Rat) *quickBound {
	if r == nil {
		return nil
	}
	b := &quickBound{rat: r}
	if r.IsInt() && r.Num().IsInt64() {
		b.i, b.isInt = r.Num().Int64(), true
	}
	return b
}

// valid reports whether the validator finds the JSON value raw valid
// against the schema q is the quick form of; false when it is not, or
// when q cannot tell. raw must be valid UTF-8 (the validator's decoder
// reads bad bytes as U+FFFD); when it is not valid JSON, the answer does
// not count (no invalid value is judged).
func (q *quickSchema) valid(raw []byte) bool {
	if q.always {
		return true
	}
	if q.never || len(raw) == 0 {
		return false
	}
	var t uint8
	switch raw[0] {
	case '{':
		t = qObject
	case '[':
		t = qArray
	case '"':
		t = qString
	case 't', 'f':
		t = qBoolean
	case 'n':
		t = qNull
	default:
		t = qNumber
	}
	var num quickNumber
	if t == qNumber {
		num = readNumber(raw)
	}
	if q.types != 0 && q.types&t == 0 {
		// An integer's type is number; integer allows the numbers whose
		// value is whole (1.0 among them).
		if t != qNumber || q.types&qInteger == 0 || !num.whole() {
			return false
		}
	}
	switch t {
	case qObject:
		return q.validObject(raw)
	case qArray:
		return q.validArray(raw)
	case qString:
		return q.validString(raw)
	case qNumber:
		return q.enum == nil && q.validNumber(num) // an enum of strings refuses a number
	}
	return q.enum == nil
}

func (q *quickSchema) validObject(raw []byte) bool {
	if q.enum != nil {
		return false
	}
	var found uint64
	ok := true
	var keyBuf []byte
	eachMember(raw, func(key []byte, esc bool, val []byte) bool {
		if esc {
			var good bool
			if keyBuf, good = unescape(keyBuf[:0], key); !good {
				ok = false
				return false
			}
			key = keyBuf
		}
		if bit, req := q.required[string(key)]; req {
			found |= 1 << bit
		}
		switch sub, listed := q.props[string(key)]; {
		case listed:
			ok = sub.valid(val)
		case q.noExtra:
			ok = false
		case q.extra != nil:
			ok = q.extra.valid(val)
		}
		return ok
	})
	return ok && found == 1<<len(q.required)-1
}

func (q *quickSchema) validArray(raw []byte) bool {
	if q.enum != nil {
		return false
	}
	n := 0
	ok := true
	eachElement(raw, func(val []byte) bool {
		n++
		if q.items != nil {
			ok = q.items.valid(val)
		}
		return ok
	})
	return ok && (q.minItems < 0 || n >= q.minItems) && (q.maxItems < 0 || n <= q.maxItems)
}

func (q *quickSchema) validString(raw []byte) bool {
	body, ok := rawText(raw)
	if !ok {
		return false
	}
	// A length counts characters. A string has no more of them than
	// bytes, and no fewer than a quarter: most bounds are met on the
	// byte length, with nothing to count.
	if q.minLength > (len(body)+3)/4 || q.maxLength >= 0 && q.maxLength < len(body) {
		n := utf8.RuneCount(body)
		if n < q.minLength || q.maxLength >= 0 && n > q.maxLength {
			return false
		}
	}
	if q.pattern == nil && q.format == nil && q.enum == nil {
		return true
	}
	str := string(body)
	if q.enum != nil {
		in := false
		for _, e := range q.enum {
			if e == str {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	if q.pattern != nil && !q.pattern.MatchString(str) {
		return false
	}
	return q.format == nil || q.format.Validate(str) == nil
}

func (q *quickSchema) validNumber(num quickNumber) bool {
	if q.minimum == nil && q.maximum == nil && q.exclusiveMinimum == nil && q.exclusiveMaximum == nil {
		return true
	}
	if !num.ok {
		return false
	}
	return (q.minimum == nil || num.cmp(q.minimum) >= 0) &&
		(q.maximum == nil || num.cmp(q.maximum) <= 0) &&
		(q.exclusiveMinimum == nil || num.cmp(q.exclusiveMinimum) > 0) &&
		(q.exclusiveMaximum == nil || num.cmp(q.exclusiveMaximum) < 0)
}

// A quickNumber is a JSON number's exact value: an int64 when its literal
// is a plain integer that fits one, else a rational. ok is false for a
// literal with an exponent or longer than maxQuickNumber (left to the
// validator, which reads such numbers as it will).
type quickNumber struct {
	ok    bool
	isInt bool
	i     int64
	rat   *big.Rat
}

const maxQuickNumber = 64

func readNumber(raw []byte) quickNumber {
	if len(raw) > maxQuickNumber {
		return quickNumber{}
	}
	plain := true
	for k, c := range raw {
		switch {
		case c >= '0' && c <= '9', c == '-' && k == 0:
		case c == '.':
			plain = false
		default:
			return quickNumber{} // an exponent, or not a number
		}
	}
	if plain {
		if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return quickNumber{ok: true, isInt: true, i: i}
		}
	}
	r, ok := new(big.Rat).SetString(string(raw))
	if !ok {
		return quickNumber{}
	}
	return quickNumber{ok: true, rat: r}
}

// whole reports whether the number is an integer (as the validator's
// integer type has it: by its value).
func (n quickNumber) whole() bool {
	return n.ok && (n.isInt || n.rat.IsInt())
}

func (n quickNumber) cmp(b *quickBound) int {
	if n.isInt && b.isInt {
		switch {
		case n.i < b.i:
			return -1
		case n.i > b.i:
			return 1
		}
		return 0
	}
	r := n.rat
	if n.isInt {
		r = new(big.Rat).SetInt64(n.i)
	}
	return r.Cmp(b.rat)
}
