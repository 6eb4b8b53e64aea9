package classify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Tools holds what the latest tools/list of a session listed: each tool's
// definition and its compiled schemas, against which the tool's calls and
// results are judged (the MCP rules tool-arguments-invalid,
// tool-result-invalid and bad-tool-schema). A new list replaces the old
// one whole, compiled schemas with it. The zero Tools has seen no list.
//
// A schema is JSON Schema 2020-12 unless its $schema names another draft;
// $ref resolves only within the schema (nothing is loaded: a $ref to a
// file or a URL is a schema that does not compile), and a hostile schema
// or value cannot stall the tracker: schemas over maxSchemaBytes are not
// compiled, values over maxValueBytes are not judged, and a validation
// stops after validationBudget subschema evaluations, judging nothing.
type Tools struct {
	listed bool
	tools  map[string]*listedTool
}

type listedTool struct {
	def       json.RawMessage // as listed
	in, out   *toolSchema
	hasOutput bool // an outputSchema was declared (and compiled)
}

// A toolSchema is a compiled schema and the budget its validations count
// against (see validateWithin). Like the tracker that holds it, it is for
// one goroutine at a time.
type toolSchema struct {
	s     *jsonschema.Schema
	quick *quickSchema // nil when the schema has no quick form
	left  int          // evaluations left to the validation under way
}

// The bounds of the work spent on one tool's schemas and values (see
// Tools). Real tools' schemas are a few KiB; a call's arguments rarely a
// MiB. Past the budget a validation says nothing rather than guess.
const (
	maxSchemaBytes   = 1 << 20
	maxValueBytes    = 4 << 20
	validationBudget = 20_000
)

// A SchemaProblem is a finding of the tool rules: its code, and what
// was wrong, in words that name the tool, the failing path and keyword.
type SchemaProblem struct {
	Code string // bad-tool-schema, tool-arguments-invalid, tool-result-invalid or tool-drift
	Tool string
	Text string
	// Fields are the parts of the definition that changed, for tool-drift.
	Fields []string
}

// Listed reports whether a tools/list result has been seen, and whether
// it listed name.
func (t *Tools) Listed(name string) (seen, listed bool) {
	if !t.listed {
		return false, false
	}
	_, ok := t.tools[name]
	return true, ok
}

// Definitions are the listed tools' definitions, compacted, or nil when
// no list was seen.
func (t *Tools) Definitions() Definitions {
	if !t.listed {
		return nil
	}
	d := make(Definitions, len(t.tools))
	for name, lt := range t.tools {
		var b bytes.Buffer
		if json.Compact(&b, lt.def) == nil {
			d[name] = b.Bytes()
		}
	}
	return d
}

// Definition is the definition of the listed tool name, as listed.
func (t *Tools) Definition(name string) (json.RawMessage, bool) {
	lt, ok := t.tools[name]
	if !ok {
		return nil, false
	}
	return lt.def, true
}

// SetList replaces the listed tools with those of result, the result of
// a tools/list request, compiling their schemas. It gives a
// bad-tool-schema problem for each tool whose inputSchema is not an
// object schema or whose schemas do not compile; such a tool is listed,
// and its calls go unjudged against the schema that failed.
func (t *Tools) SetList(result []byte) []SchemaProblem {
	t.listed, t.tools = true, map[string]*listedTool{}
	return t.AddPage(result)
}

// AddPage adds the tools of result, a later page of the list that
// SetList began (a tools/list request with the cursor of the page
// before), as SetList does.
func (t *Tools) AddPage(result []byte) []SchemaProblem {
	var list struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(result, &list) != nil {
		return nil // not a list: the envelope and result rules say so
	}
	if t.tools == nil {
		t.listed, t.tools = true, map[string]*listedTool{}
	}
	var problems []SchemaProblem
	for _, raw := range list.Tools {
		var def struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		if json.Unmarshal(raw, &def) != nil {
			continue
		}
		lt := &listedTool{def: raw}
		t.tools[def.Name] = lt
		bad := func(format string, a ...any) {
			problems = append(problems, SchemaProblem{Code: "bad-tool-schema", Tool: def.Name,
				Text: fmt.Sprintf("tool %s: ", quoteName(def.Name)) + fmt.Sprintf(format, a...)})
		}
		switch in, err := compileSchema(def.InputSchema); {
		case len(def.InputSchema) == 0:
			bad("no inputSchema; a tool's inputSchema is required and must be an object schema (MCP schema: Tool.inputSchema)")
		case !isObjectSchema(def.InputSchema):
			bad(`its inputSchema is not an object schema ({"type":"object",...}); arguments are always an object (MCP schema: Tool.inputSchema)`)
		case err != nil:
			bad("its inputSchema does not compile: %v", err)
		default:
			lt.in = in
		}
		if len(def.OutputSchema) > 0 && !bytes.Equal(bytes.TrimSpace(def.OutputSchema), []byte("null")) {
			if out, err := compileSchema(def.OutputSchema); err != nil {
				bad("its outputSchema does not compile: %v", err)
			} else {
				lt.out, lt.hasOutput = out, true
			}
		}
	}
	return problems
}

// CheckCall judges the arguments of a tools/call of name against the
// listed tool's inputSchema: a tool-arguments-invalid problem naming the
// failing path and keyword, or none (no list, an unlisted tool, a schema
// that did not compile, a value too large or too costly to judge).
func (t *Tools) CheckCall(name string, arguments []byte) (SchemaProblem, bool) {
	lt, ok := t.tools[name]
	if !ok || lt.in == nil {
		return SchemaProblem{}, false
	}
	if a := bytes.TrimSpace(arguments); len(a) == 0 || string(a) == "null" {
		// No arguments (or null, which hosts send for none): an empty
		// object, as the server reads it.
		arguments = []byte("{}")
	}
	msg, bad := validate(lt.in, arguments)
	if !bad {
		return SchemaProblem{}, false
	}
	return SchemaProblem{Code: "tool-arguments-invalid", Tool: name,
		Text: fmt.Sprintf("the arguments of tools/call %s do not validate against the tool's inputSchema: %s (MCP: a server validates arguments against inputSchema)", quoteName(name), msg)}, true
}

// CheckResult judges a tools/call result of name against the listed
// tool's outputSchema: its structuredContent must be there and validate.
// A result with isError true is a tool's failure, not judged.
func (t *Tools) CheckResult(name string, result []byte) (SchemaProblem, bool) {
	lt, ok := t.tools[name]
	if !ok || !lt.hasOutput {
		return SchemaProblem{}, false
	}
	var r struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if json.Unmarshal(result, &r) != nil || r.IsError {
		return SchemaProblem{}, false
	}
	problem := func(what string) (SchemaProblem, bool) {
		return SchemaProblem{Code: "tool-result-invalid", Tool: name,
			Text: fmt.Sprintf("the result of tools/call %s %s (MCP: a tool that declares an outputSchema must return structuredContent that conforms to it)", quoteName(name), what)}, true
	}
	if len(r.StructuredContent) == 0 || bytes.Equal(bytes.TrimSpace(r.StructuredContent), []byte("null")) {
		return problem("has no structuredContent, though the tool declares an outputSchema")
	}
	msg, bad := validate(lt.out, r.StructuredContent)
	if !bad {
		return SchemaProblem{}, false
	}
	return problem("has structuredContent that does not validate against the tool's outputSchema: " + msg)
}

// judgesResults reports whether the listed tool name declared an
// outputSchema that compiled, against which CheckResult judges its results.
func (t *Tools) judgesResults(name string) bool {
	lt, ok := t.tools[name]
	return ok && lt.hasOutput
}

// quoteName quotes a tool's name for a finding's text, escaped and
// short: a finding never repeats a peer's value unescaped.
func quoteName(name string) string { return `"` + EscapeString(name, 80) + `"` }

// isObjectSchema reports whether schema declares "type": "object" (a
// tool's inputSchema must).
func isObjectSchema(schema []byte) bool {
	var s struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return false
	}
	return bytes.Equal(bytes.TrimSpace(s.Type), []byte(`"object"`))
}

// schemaURL is where a tool's schema sits for the compiler; $ref
// resolves against it, within the schema.
const schemaURL = "mem:///tool-schema.json"

// compileSchema compiles one tool schema, loading nothing. Every object
// subschema gets the budget keyword (budgetVocabulary), so that each of
// its evaluations counts against the validation's budget.
func compileSchema(raw []byte) (*toolSchema, error) {
	if len(raw) > maxSchemaBytes {
		return nil, fmt.Errorf("it is %d bytes, over the %d MiB rpctap compiles", len(raw), maxSchemaBytes>>20)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, errors.New("it is not JSON")
	}
	ts := &toolSchema{}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	c.RegisterVocabulary(budgetVocabulary(ts))
	c.AssertVocabs()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, errors.New(compileMessage(err))
	}
	if ts.s, err = c.Compile(schemaURL); err != nil {
		return nil, errors.New(compileMessage(err))
	}
	ts.quick = quickForm(ts.s, 0)
	return ts, nil
}

// budgetVocabulary is a vocabulary with no keyword of its own whose
// compiled form sits in every object subschema of ts and counts each of
// its evaluations against ts's budget, ending the validation past it.
func budgetVocabulary(ts *toolSchema) *jsonschema.Vocabulary {
	return &jsonschema.Vocabulary{
		URL:    "urn:rpctap:budget",
		Schema: budgetMeta(),
		Compile: func(*jsonschema.CompilerContext, map[string]any) (jsonschema.SchemaExt, error) {
			return budgetExt{ts}, nil
		},
	}
}

type budgetExt struct{ ts *toolSchema }

func (b budgetExt) Validate(*jsonschema.ValidatorContext, any) {
	if b.ts.left--; b.ts.left < 0 {
		panic(errOverBudget)
	}
}

// budgetMeta is the budget vocabulary's metaschema: it allows anything.
// It is compiled once, on first use (compiling pulls in the 2020-12
// metaschemas).
var budgetMeta = sync.OnceValue(func() *jsonschema.Schema {
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource("urn:rpctap:budget-meta", map[string]any{}); err != nil {
		panic(err)
	}
	return c.MustCompile("urn:rpctap:budget-meta")
})

// compileMessage is a compiler error in words that do not name the
// compiler's made-up URL.
func compileMessage(err error) string {
	msg := strings.ReplaceAll(err.Error(), schemaURL, "")
	msg = strings.ReplaceAll(msg, "jsonschema: ", "")
	return EscapeString(msg, 300)
}

// noLoader loads no schema: a tool's schema refers only within itself
// (the drafts' own metaschemas are built into the compiler).
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("it refers to %s, outside itself; rpctap loads no schema", url)
}

// validate validates the JSON value raw against ts: what fails (the path
// of the value, the keyword and why), or nothing when it validates, is
// too large or too costly to judge.
func validate(ts *toolSchema, raw []byte) (msg string, bad bool) {
	if len(raw) > maxValueBytes {
		return "", false
	}
	// Most values are valid, against schemas simple enough to say so on
	// the bytes; the validator judges the others, and says why.
	if ts.quick != nil && utf8.Valid(raw) && ts.quick.valid(bytes.TrimSpace(raw)) {
		return "", false
	}
	return validateFully(ts, raw)
}

// validateFully is validate by the validator alone.
func validateFully(ts *toolSchema, raw []byte) (msg string, bad bool) {
	if !Valid(raw) {
		return "", false
	}
	// Bad UTF-8 is left to the validator's decoder, which has U+FFFD for
	// the bad bytes (in keys too).
	v, ok := any(nil), false
	if utf8.Valid(raw) {
		v, ok = decodeValue(raw, 0)
	}
	if !ok {
		var err error
		if v, err = jsonschema.UnmarshalJSON(bytes.NewReader(raw)); err != nil {
			return "", false
		}
	}
	var ve *jsonschema.ValidationError
	if !errors.As(ts.validate(v), &ve) {
		return "", false
	}
	return describe(ve), true
}

// maxDecodeDepth is how deep decodeValue goes before it leaves a value to
// the validator's own decoder: each level scans its value again.
const maxDecodeDepth = 64

// decodeValue decodes the valid JSON value raw as the validator reads
// JSON (objects as map[string]any, arrays as []any, numbers as
// json.Number), with classify's scanner: several times faster than the
// validator's decoder, which a call's arguments go through once per call.
// ok is false past maxDecodeDepth. raw must be valid UTF-8.
func decodeValue(raw []byte, depth int) (v any, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || depth > maxDecodeDepth {
		return nil, false
	}
	switch raw[0] {
	case '{':
		m := map[string]any{}
		ok = true
		eachMember(raw, func(key []byte, esc bool, val []byte) bool {
			k := string(key)
			if esc {
				dec, good := unescape(nil, key)
				if !good {
					ok = false
					return false
				}
				k = string(dec)
			}
			m[k], ok = decodeValue(val, depth+1)
			return ok
		})
		return m, ok
	case '[':
		a := []any{}
		ok = true
		eachElement(raw, func(val []byte) bool {
			var e any
			e, ok = decodeValue(val, depth+1)
			a = append(a, e)
			return ok
		})
		return a, ok
	case '"':
		if bytes.IndexByte(raw, '\\') < 0 {
			return string(raw[1 : len(raw)-1]), true // no escapes: one copy
		}
		return StringValue(raw)
	case 't':
		return true, true
	case 'f':
		return false, true
	case 'n':
		return nil, true
	}
	return json.Number(raw), true
}

// errOverBudget ends a validation that took more than validationBudget
// subschema evaluations.
var errOverBudget = errors.New("over budget")

// validate validates v, giving up (nil) after validationBudget subschema
// evaluations.
func (ts *toolSchema) validate(v any) (err error) {
	ts.left = validationBudget
	defer func() {
		if r := recover(); r != nil {
			if r != errOverBudget {
				panic(r)
			}
			err = nil
		}
	}()
	return ts.s.Validate(v)
}

// describe says where a validation failed: the first leaf of its causes
// (the deepest reason, as a user would fix it), with its path. The
// validator finds the causes in the order of Go maps, which differs from
// run to run; they are put in an order of their own (deepest first, then
// by path and subschema), so the same value gets the same finding.
func describe(ve *jsonschema.ValidationError) string {
	leaf := ve
	for len(leaf.Causes) > 0 {
		causes := leaf.Causes
		sort.SliceStable(causes, func(i, j int) bool { return causeBefore(causes[i], causes[j]) })
		leaf = causes[0]
	}
	if k, ok := leaf.ErrorKind.(*kind.AdditionalProperties); ok {
		sort.Strings(k.Properties)
	}
	at := "/" + strings.Join(escapePointer(leaf.InstanceLocation), "/")
	if len(leaf.InstanceLocation) == 0 {
		at = "the top"
	}
	// The keyword's place in the whole schema: the failing subschema's
	// (its URL's fragment), then the keyword within it.
	_, frag, _ := strings.Cut(leaf.SchemaURL, "#")
	kw := strings.TrimSuffix(frag, "/") + "/" + strings.Join(escapePointer(leaf.ErrorKind.KeywordPath()), "/")
	// The value's path, the keyword's and the reason quote the peer's
	// schema and value: escaped, as every peer text in a finding.
	text := EscapeString(leaf.ErrorKind.LocalizedString(printer), 200)
	return fmt.Sprintf("at %s, %s (keyword %s)", EscapeString(at, 200), text, EscapeString(kw, 200))
}

// causeBefore orders the causes of a validation error: the deeper first,
// then by the value's path, the failing subschema and, for two failures
// of one keyword of it (dependentRequired of two members), the keyword's
// path. Failures of two keywords of one subschema keep the validator's
// order, which is the order it checks them in.
func causeBefore(a, b *jsonschema.ValidationError) bool {
	if len(a.InstanceLocation) != len(b.InstanceLocation) {
		return len(a.InstanceLocation) > len(b.InstanceLocation)
	}
	if c := slices.Compare(a.InstanceLocation, b.InstanceLocation); c != 0 {
		return c < 0
	}
	if a.SchemaURL != b.SchemaURL {
		return a.SchemaURL < b.SchemaURL
	}
	if reflect.TypeOf(a.ErrorKind) == reflect.TypeOf(b.ErrorKind) {
		return slices.Compare(a.ErrorKind.KeywordPath(), b.ErrorKind.KeywordPath()) < 0
	}
	return false
}

var printer = message.NewPrinter(language.English)

// escapePointer escapes JSON Pointer tokens (RFC 6901).
func escapePointer(toks []string) []string {
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
	}
	return out
}

// Drift gives a tool-drift problem for each tool of t that earlier, an
// earlier complete list, also listed with another definition: the
// fields that changed, compared as JSON values (the order of members
// does not count). Tools added or removed are no drift.
func (t *Tools) Drift(earlier *Tools) []SchemaProblem {
	if t == nil || earlier == nil {
		return nil
	}
	var names []string
	for name := range t.tools {
		if _, ok := earlier.tools[name]; ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var problems []SchemaProblem
	for _, name := range names {
		if changed := changedFields(DefTool, earlier.tools[name].def, t.tools[name].def); len(changed) > 0 {
			problems = append(problems, SchemaProblem{Code: "tool-drift", Tool: name, Fields: changed,
				Text: fmt.Sprintf("tool %s changed its %s since an earlier tools/list of this session; a host that approved the tool saw another definition (MCP security: clients should treat tool definitions as untrusted and show changes)", quoteName(name), strings.Join(changed, ", "))})
		}
	}
	return problems
}
