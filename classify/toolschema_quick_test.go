package classify

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The quick form of a schema is held to the validator: over generated
// schemas (of the keywords it judges, and of others it must leave alone,
// in drafts 4, 7 and 2020-12) and values (near each schema and anywhere),
// judging a value gives the validator's verdict and finding text, and the
// quick form says valid whenever the validator does, but for the values it
// leaves to it on purpose (numbers with an exponent, repeated keys).
func TestQuickSchemasGiveTheValidatorsVerdict(t *testing.T) {
	g := &schemaGen{r: rand.New(rand.NewPCG(21, 1))}
	schemas, quick, values, valid, decided := 0, 0, 0, 0, 0
	for range 3000 {
		g.supported = true
		s := g.schema(0)
		switch g.r.IntN(3) {
		case 0:
			s["$schema"] = "http://json-schema.org/draft-07/schema#"
		case 1:
			if g.draft4ok(s) {
				s["$schema"] = "http://json-schema.org/draft-04/schema#"
			}
		}
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := compileSchema(raw)
		if err != nil {
			continue // the generator can write a schema its draft refuses
		}
		schemas++
		if g.supported && ts.quick == nil {
			t.Errorf("schema %s has only keywords a quick form judges, but has none", raw)
		}
		if !g.supported && ts.quick != nil {
			t.Errorf("schema %s has a keyword a quick form does not judge, but has one", raw)
		}
		if ts.quick != nil {
			quick++
		}
		for range 30 {
			g.leftToValidator = false
			var v string
			if g.r.IntN(4) == 0 {
				v = g.anyValue(0)
			} else {
				v = g.valueFor(s, 0)
			}
			values++
			msg, bad := validate(ts, []byte(v))
			wantMsg, wantBad := validateFully(ts, []byte(v))
			if msg != wantMsg || bad != wantBad {
				t.Fatalf("schema %s, value %s: judged (%q, %v), the validator (%q, %v)", raw, v, msg, bad, wantMsg, wantBad)
			}
			if wantBad {
				continue
			}
			valid++
			if ts.quick != nil && utf8.ValidString(v) {
				if ts.quick.valid([]byte(v)) {
					decided++
				} else if !g.leftToValidator {
					t.Errorf("schema %s, value %s: valid, but its quick form could not tell", raw, v)
				}
			}
		}
	}
	t.Logf("%d schemas compiled (%d with a quick form), %d values, %d valid, %d of them decided by the quick form", schemas, quick, values, valid, decided)
	if schemas < 2000 || quick < schemas/2 || valid < values/4 || decided < valid/3 {
		t.Errorf("the generator exercises too little: %d schemas, %d quick, %d values, %d valid, %d decided", schemas, quick, values, valid, decided)
	}
}

// A quick form is read off the validator's compiled schema: every field
// of it is either judged or refused by quickForm, or an annotation. A new
// field in a later version of the validator fails this test until it is
// placed.
func TestQuickFormsKnowEveryFieldOfACompiledSchema(t *testing.T) {
	known := strings.Fields(`DraftVersion Location Bool ID Ref Anchor RecursiveRef RecursiveAnchor
		DynamicRef DynamicAnchor Types Enum Const Not AllOf AnyOf OneOf If Then Else Format
		MaxProperties MinProperties Required PropertyNames Properties PatternProperties
		AdditionalProperties Dependencies DependentRequired DependentSchemas UnevaluatedProperties
		MinItems MaxItems UniqueItems Contains MinContains MaxContains Items AdditionalItems
		PrefixItems Items2020 UnevaluatedItems MinLength MaxLength Pattern ContentEncoding
		ContentMediaType ContentSchema Maximum Minimum ExclusiveMaximum ExclusiveMinimum MultipleOf
		Extensions Title Description Default Comment ReadOnly WriteOnly Examples Deprecated`)
	for f := range reflect.TypeFor[jsonschema.Schema]().Fields() {
		if f.IsExported() && !slices.Contains(known, f.Name) {
			t.Errorf("jsonschema.Schema has a field %s that quickForm does not know", f.Name)
		}
	}
}

// schemaGen writes random schemas and values. supported says whether the
// schema written last uses only keywords a quick form judges;
// leftToValidator, whether the value written last has something a quick
// form leaves to the validator.
type schemaGen struct {
	r               *rand.Rand
	supported       bool
	leftToValidator bool
}

var genNames = []string{"a", "b", "c", "é", "a/b", "x~y"}

func (g *schemaGen) pick(xs ...any) any { return xs[g.r.IntN(len(xs))] }

func (g *schemaGen) schema(depth int) map[string]any {
	s := map[string]any{}
	if g.r.IntN(5) == 0 {
		s["description"] = "d"
		s["title"] = "t"
		s["default"] = g.pick(1, "x", nil)
	}
	kinds := []string{"string", "number", "integer", "object", "array", "boolean", "null"}
	kind := kinds[g.r.IntN(len(kinds))]
	if depth < 3 && g.r.IntN(3) == 0 {
		kind = "object"
	}
	switch g.r.IntN(6) {
	case 0: // no type: the keywords apply to the values of their type
	case 1:
		s["type"] = []any{kind, kinds[g.r.IntN(len(kinds))]}
	default:
		s["type"] = kind
	}
	switch kind {
	case "string":
		if g.r.IntN(2) == 0 {
			s["minLength"] = g.r.IntN(3)
		}
		if g.r.IntN(2) == 0 {
			s["maxLength"] = g.r.IntN(5)
		}
		switch g.r.IntN(8) {
		case 0:
			s["pattern"] = "^[a-c]*$"
		case 1:
			s["pattern"] = "b"
		case 2:
			s["format"] = g.pick("email", "date", "ipv4", "uri")
		case 3:
			s["enum"] = []any{"a", "bb", "é", ""}
		}
	case "number", "integer":
		for _, kw := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
			if g.r.IntN(3) == 0 {
				s[kw] = g.pick(0, 1, -2, 3, 0.5, -1.5, 1e2, 12345678901234567890.0)
			}
		}
	case "object":
		if depth < 3 {
			props := map[string]any{}
			for _, n := range genNames[:g.r.IntN(len(genNames))] {
				if g.r.IntN(8) == 0 {
					props[n] = g.r.IntN(2) == 0 // a boolean schema
				} else {
					props[n] = g.schema(depth + 1)
				}
			}
			if len(props) > 0 || g.r.IntN(2) == 0 {
				s["properties"] = props
			}
		}
		if g.r.IntN(2) == 0 {
			var req []any
			for _, n := range genNames {
				if g.r.IntN(3) == 0 {
					req = append(req, n)
				}
			}
			if len(req) > 0 {
				s["required"] = req
			}
		}
		switch g.r.IntN(4) {
		case 0:
			s["additionalProperties"] = false
		case 1:
			s["additionalProperties"] = true
		case 2:
			if depth < 3 {
				s["additionalProperties"] = g.schema(depth + 1)
			}
		}
	case "array":
		if depth < 3 && g.r.IntN(4) != 0 {
			s["items"] = g.schema(depth + 1)
		}
		if g.r.IntN(3) == 0 {
			s["minItems"] = g.r.IntN(3)
		}
		if g.r.IntN(3) == 0 {
			s["maxItems"] = g.r.IntN(4)
		}
	}
	if g.r.IntN(12) == 0 { // a keyword left to the validator
		g.supported = false
		switch g.r.IntN(7) {
		case 0:
			s["multipleOf"] = 2
		case 1:
			s["const"] = "a"
		case 2:
			s["anyOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}
		case 3:
			s["minProperties"] = 1
		case 4:
			s["uniqueItems"] = true
		case 5:
			s["not"] = map[string]any{"type": "null"}
		case 6:
			s["enum"] = []any{1, "a", nil}
		}
	}
	return s
}

// draft4ok reports whether s can be read as draft 4 (whose exclusive
// bounds are booleans), making them so.
func (g *schemaGen) draft4ok(s map[string]any) bool {
	ok := true
	for k, v := range s {
		switch k {
		case "exclusiveMinimum", "exclusiveMaximum":
			bound := strings.TrimPrefix(strings.TrimPrefix(k, "exclusive"), "M")
			delete(s, k)
			if _, has := s["m"+bound]; !has {
				s["m"+bound] = v
			}
			s[k] = true
		case "items", "additionalProperties":
			if sub, isMap := v.(map[string]any); isMap {
				ok = ok && g.draft4ok(sub)
			}
		case "properties":
			for _, sub := range v.(map[string]any) {
				if sub, isMap := sub.(map[string]any); isMap {
					ok = ok && g.draft4ok(sub)
				} else {
					ok = false // draft 4 has no boolean schemas
				}
			}
		case "const":
			ok = false
		}
	}
	return ok
}

// valueFor writes a value near what s allows: often valid, often just
// outside a bound.
func (g *schemaGen) valueFor(s map[string]any, depth int) string {
	if g.r.IntN(10) == 0 || depth > 4 {
		return g.anyValue(depth)
	}
	kind, _ := s["type"].(string)
	if kinds, ok := s["type"].([]any); ok {
		kind = kinds[g.r.IntN(len(kinds))].(string)
	}
	if kind == "" {
		kind = g.pick("string", "number", "object", "array", "null").(string)
	}
	switch kind {
	case "string":
		if enum, ok := s["enum"].([]any); ok && g.r.IntN(4) != 0 {
			if e, ok := enum[g.r.IntN(len(enum))].(string); ok {
				return g.quote(e)
			}
		}
		switch s["format"] {
		case "email":
			return g.pick(`"a@b.co"`, `"ab"`, `"a\u0040b.co"`).(string)
		case "date":
			return g.pick(`"2024-01-31"`, `"2024-02-31"`, `"yesterday"`).(string)
		case "ipv4":
			return g.pick(`"10.0.0.1"`, `"10.0.0.256"`).(string)
		case "uri":
			return g.pick(`"https://example.com/a"`, `"not a uri"`, `"x:y"`).(string)
		}
		return g.stringValue()
	case "number", "integer":
		return g.number()
	case "boolean":
		return g.pick("true", "false").(string)
	case "null":
		return "null"
	case "array":
		n := g.r.IntN(5)
		var els []string
		for range n {
			if items, ok := s["items"].(map[string]any); ok {
				els = append(els, g.valueFor(items, depth+1))
			} else {
				els = append(els, g.anyValue(depth+1))
			}
		}
		return "[" + strings.Join(els, ",") + "]"
	}
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	var members []string
	seen := map[string]bool{}
	add := func(name string) {
		if seen[name] {
			if g.r.IntN(3) != 0 {
				return
			}
			g.leftToValidator = true // a key given twice: the validator reads the last
		}
		seen[name] = true
		key := g.quote(name)
		if name == "a" && g.r.IntN(4) == 0 {
			key = `"\u0061"`
		}
		var val string
		switch sub := props[name].(type) {
		case map[string]any:
			val = g.valueFor(sub, depth+1)
		default:
			if extra, ok := s["additionalProperties"].(map[string]any); ok {
				val = g.valueFor(extra, depth+1)
			} else {
				val = g.anyValue(depth + 1)
			}
		}
		members = append(members, key+":"+val)
	}
	for _, n := range req {
		if g.r.IntN(8) != 0 {
			add(n.(string))
		}
	}
	for n := range props {
		if g.r.IntN(2) == 0 {
			add(n)
		}
	}
	if g.r.IntN(5) == 0 {
		add(genNames[g.r.IntN(len(genNames))])
	}
	g.r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	return "{" + strings.Join(members, ",") + "}"
}

// anyValue writes any JSON value.
func (g *schemaGen) anyValue(depth int) string {
	n := 7
	if depth > 3 {
		n = 5
	}
	switch g.r.IntN(n) {
	case 0:
		return "null"
	case 1:
		return g.pick("true", "false").(string)
	case 2, 3:
		return g.number()
	case 4:
		return g.stringValue()
	case 5:
		var els []string
		for range g.r.IntN(4) {
			els = append(els, g.anyValue(depth+1))
		}
		return "[" + strings.Join(els, ",") + "]"
	}
	var members []string
	for range g.r.IntN(4) {
		members = append(members, g.quote(genNames[g.r.IntN(len(genNames))])+":"+g.anyValue(depth+1))
	}
	if len(members) > 1 {
		g.leftToValidator = true // maybe a key twice
	}
	return "{" + strings.Join(members, ",") + "}"
}

func (g *schemaGen) number() string {
	v := g.pick("0", "-0", "1", "-1", "2", "3", "4", "-2", "-3", "100", "0.5", "-1.5", "1.0", "2.50",
		"3.0000000000000000001", "12345678901234567890", "-9223372036854775808", "9223372036854775808",
		"1e2", "1E0", "-2.5e-1").(string)
	if strings.ContainsAny(v, "eE") {
		g.leftToValidator = true
	}
	return v
}

func (g *schemaGen) stringValue() string {
	var b strings.Builder
	for range g.r.IntN(6) {
		b.WriteString(g.pick("a", "b", "c", "a", "b", "é", "😀", `\n`, `\"`, `\u0062`, `\ud83d\ude00`, " ").(string))
	}
	return `"` + b.String() + `"`
}

func (g *schemaGen) quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The schemas MCP servers list most (zod's and the Go SDK's: typed
// properties, required, additionalProperties false, draft 7 with formats;
// every inputSchema and outputSchema of server-everything has one) have a
// quick form, and it decides their valid calls.
func TestCommonToolSchemasHaveAQuickForm(t *testing.T) {
	for _, c := range []struct{ schema, value string }{
		{`{"type":"object","properties":{"message":{"type":"string","maxLength":4096},"n":{"type":"integer","minimum":0}},"required":["message"],"additionalProperties":false}`,
			`{"message":"hi","n":3}`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"url":{"type":"string","format":"uri","description":"d"},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},"depth":{"type":"number","exclusiveMinimum":0,"default":1}},"required":["url"],"additionalProperties":false}`,
			`{"url":"https://example.com","tags":["a","b"],"depth":0.5}`},
		// server-everything's (zod, draft 7): a format, an enum, defaults.
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"name":{"default":"README.md.gz","type":"string","description":"Name of the output file"},"data":{"default":"https://raw.githubusercontent.com/modelcontextprotocol/servers/refs/heads/main/README.md","type":"string","format":"uri","description":"URL or data URI of the file content to compress"},"outputType":{"default":"resourceLink","description":"How the resulting gzipped file should be returned.","type":"string","enum":["resourceLink","resource"]}}}`,
			`{"name":"a.gz","data":"https://example.com/README.md","outputType":"resource"}`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"temperature":{"type":"number","description":"Temperature in celsius"},"conditions":{"type":"string","description":"Weather conditions description"},"humidity":{"type":"number","description":"Humidity percentage"}},"required":["temperature","conditions","humidity"],"additionalProperties":false}`,
			`{"temperature":22.5,"conditions":"Partly cloudy","humidity":65}`},
		{`{"type":"object","properties":{"opts":{"type":["object","null"],"additionalProperties":{"type":"boolean"}}}}`,
			`{"opts":{"x":true,"y":false}}`},
	} {
		ts, err := compileSchema([]byte(c.schema))
		if err != nil {
			t.Fatal(err)
		}
		if ts.quick == nil {
			t.Errorf("schema %s has no quick form", c.schema)
			continue
		}
		if !ts.quick.valid([]byte(c.value)) {
			t.Errorf("schema %s: the quick form could not tell that %s is valid", c.schema, c.value)
		}
	}
}

// Any bytes as arguments are judged as the validator alone judges them,
// against schemas of every keyword a quick form reads.
func FuzzQuickFormsJudgeAnyBytesAsTheValidator(f *testing.F) {
	schemas := []string{
		`{"type":"object","properties":{"message":{"type":"string","maxLength":4,"minLength":1},"n":{"type":"integer","minimum":0,"exclusiveMaximum":10}},"required":["message"],"additionalProperties":false}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"u":{"type":"string","format":"uri"},"e":{"enum":["a","é"]},"l":{"type":"array","items":{"type":["number","null"]},"maxItems":2}},"additionalProperties":{"type":"boolean"}}`,
		`{"type":["object","array","string","number"],"pattern":"^a","format":"date","items":{"type":"object","required":["a"]},"maximum":1.5}`,
	}
	var compiled []*toolSchema
	for _, s := range schemas {
		ts, err := compileSchema([]byte(s))
		if err != nil || ts.quick == nil {
			f.Fatalf("schema %s: %v, quick form %v", s, err, ts != nil && ts.quick != nil)
		}
		compiled = append(compiled, ts)
	}
	for _, v := range []string{`{"message":"hi","n":3}`, ` {"\u006dessage":"h\u00e9","n":9.0} `, `{"u":"x:y","e":"é","l":[1,null],"z":true}`,
		`["a",{"a":1}]`, `"abc"`, `1.5`, `{"message":"a","message":""}`, `{"n":-0,"message":"\ud800"}`, `[1e2]`} {
		f.Add([]byte(v))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for i, ts := range compiled {
			msg, bad := validate(ts, raw)
			wantMsg, wantBad := validateFully(ts, raw)
			if msg != wantMsg || bad != wantBad {
				t.Errorf("schema %s, value %q: judged (%q, %v), the validator (%q, %v)", schemas[i], raw, msg, bad, wantMsg, wantBad)
			}
		}
	})
}

// The cost of judging one call's 1 KiB of valid arguments (gensession's,
// as .ci/bench/check-tools judges them), by the quick form and by the
// validator alone.
func benchmarkJudgedCall(b *testing.B, judge func(*toolSchema, []byte) (string, bool)) {
	ts, err := compileSchema([]byte(`{"type":"object","properties":{"message":{"type":"string","maxLength":4096},"n":{"type":"integer","minimum":0}},"required":["message"],"additionalProperties":false}`))
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(`{"message":"` + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)[:880] + `","n":12345}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, bad := judge(ts, args); bad {
			b.Fatal("valid arguments judged invalid")
		}
	}
}

func BenchmarkJudgedCallQuick1KiB(b *testing.B)     { benchmarkJudgedCall(b, validate) }
func BenchmarkJudgedCallValidator1KiB(b *testing.B) { benchmarkJudgedCall(b, validateFully) }

// A quick form asks a format of strings only, so a format that refuses
// some other value (none the validator knows does) leaves its schema to
// the validator.
func TestAFormatThatJudgesOtherValuesHasNoQuickForm(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "no-numbers", Validate: func(v any) error {
		if _, ok := v.(json.Number); ok {
			return fmt.Errorf("a number")
		}
		return nil
	}})
	if err := c.AddResource("mem:///s.json", map[string]any{"format": "no-numbers"}); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///s.json")
	if err != nil {
		t.Fatal(err)
	}
	if quickForm(s, 0) != nil {
		t.Error("a schema whose format refuses numbers has a quick form, which would let numbers through")
	}
	if quickForm(withFormat(t, "uri"), 0) == nil {
		t.Error("a schema with the format uri has no quick form")
	}
}

func withFormat(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	ts, err := compileSchema([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","format":"` + name + `"}`))
	if err != nil || ts.s.Format == nil {
		t.Fatalf("format %s: %v, asserted %v", name, err, err == nil && ts.s.Format != nil)
	}
	return ts.s
}
