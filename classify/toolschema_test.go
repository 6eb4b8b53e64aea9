package classify

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const sumList = `{"tools":[
 {"name":"get-sum","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}},
 {"name":"weather","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}}
]}`

func listed(t *testing.T, list string) *Tools {
	t.Helper()
	var tools Tools
	if p := tools.SetList([]byte(list)); len(p) > 0 {
		t.Fatalf("a valid list gave problems: %+v", p)
	}
	return &tools
}

func TestToolArgumentsAreJudgedAgainstTheListedInputSchema(t *testing.T) {
	tools := listed(t, sumList)
	if p, bad := tools.CheckCall("get-sum", []byte(`{"a":1,"b":2}`)); bad {
		t.Errorf("valid arguments judged invalid: %s", p.Text)
	}
	p, bad := tools.CheckCall("get-sum", []byte(`{"a":"one","b":2}`))
	if !bad || p.Code != "tool-arguments-invalid" {
		t.Fatalf("a string where the schema wants a number: %+v, %v; want tool-arguments-invalid", p, bad)
	}
	for _, want := range []string{`"get-sum"`, "at /a", "keyword /properties/a/type", "number"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("the finding %q does not say %s", p.Text, want)
		}
	}
	if p, bad := tools.CheckCall("get-sum", nil); !bad || !strings.Contains(p.Text, "required") {
		t.Errorf("a call with no arguments of a tool that requires two: %+v, %v; want the required keyword named", p, bad)
	}
	if _, bad := tools.CheckCall("unlisted", []byte(`{"x":1}`)); bad {
		t.Error("a call of a tool not listed was judged against some schema")
	}
	var none Tools
	if _, bad := none.CheckCall("get-sum", []byte(`{"a":"one"}`)); bad {
		t.Error("with no list seen, a call was judged")
	}
}

func TestToolResultsAreJudgedAgainstTheOutputSchema(t *testing.T) {
	tools := listed(t, sumList)
	if _, bad := tools.CheckResult("weather", []byte(`{"content":[],"structuredContent":{"temp":21.5}}`)); bad {
		t.Error("a conforming structuredContent was judged invalid")
	}
	if p, bad := tools.CheckResult("weather", []byte(`{"content":[],"structuredContent":{"temp":"warm"}}`)); !bad || p.Code != "tool-result-invalid" || !strings.Contains(p.Text, "/temp") {
		t.Errorf("structuredContent breaking the outputSchema: %+v, %v; want tool-result-invalid at /temp", p, bad)
	}
	if p, bad := tools.CheckResult("weather", []byte(`{"content":[{"type":"text","text":"21"}]}`)); !bad || !strings.Contains(p.Text, "no structuredContent") {
		t.Errorf("no structuredContent with an outputSchema: %+v, %v; want tool-result-invalid", p, bad)
	}
	if _, bad := tools.CheckResult("weather", []byte(`{"isError":true,"content":[]}`)); bad {
		t.Error("a tool's own failure (isError) was judged against its outputSchema")
	}
	if _, bad := tools.CheckResult("get-sum", []byte(`{"content":[]}`)); bad {
		t.Error("a result of a tool with no outputSchema was judged")
	}
}

func TestBadToolSchemasAreNamedAndTheirCallsNotJudged(t *testing.T) {
	var tools Tools
	problems := tools.SetList([]byte(`{"tools":[
	 {"name":"no-schema"},
	 {"name":"array","inputSchema":{"type":"array"}},
	 {"name":"broken","inputSchema":{"type":"object","properties":{"a":{"type":17}}}},
	 {"name":"remote","inputSchema":{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}},
	 {"name":"bad-out","inputSchema":{"type":"object"},"outputSchema":{"minimum":"x"}},
	 {"name":"fine","inputSchema":{"type":"object","$defs":{"n":{"type":"number"}},"properties":{"a":{"$ref":"#/$defs/n"}}}}
	]}`))
	got := map[string]string{}
	for _, p := range problems {
		if p.Code != "bad-tool-schema" {
			t.Errorf("problem %+v, want bad-tool-schema", p)
		}
		got[p.Tool] = p.Text
	}
	for _, name := range []string{"no-schema", "array", "broken", "remote", "bad-out"} {
		if got[name] == "" {
			t.Errorf("the tool %s has a bad schema and no problem says so (got %v)", name, got)
		}
	}
	if got["fine"] != "" {
		t.Errorf("a schema with a $ref within itself was called bad: %s", got["fine"])
	}
	if strings.Contains(got["remote"], "root:") {
		t.Errorf("a $ref to a file was loaded: %s", got["remote"])
	}
	if _, bad := tools.CheckCall("broken", []byte(`{"a":1}`)); bad {
		t.Error("a call was judged against a schema that does not compile")
	}
	if p, bad := tools.CheckCall("fine", []byte(`{"a":"x"}`)); !bad || !strings.Contains(p.Text, "/a") {
		t.Errorf("a $ref within the schema was not followed: %+v, %v", p, bad)
	}
	if seen, ok := tools.Listed("broken"); !seen || !ok {
		t.Error("a tool with a bad schema is not listed")
	}
}

func TestANewListReplacesTheOldOneWhole(t *testing.T) {
	tools := listed(t, sumList)
	listed := `{"tools":[{"name":"get-sum","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}]}`
	if p := tools.SetList([]byte(listed)); len(p) > 0 {
		t.Fatal(p)
	}
	if _, bad := tools.CheckCall("get-sum", []byte(`{"a":"one"}`)); bad {
		t.Error("a call was judged against the schema of an earlier list")
	}
	if _, ok := tools.Listed("weather"); ok {
		t.Error("a tool of an earlier list is still listed")
	}
}

// A schema built to make validation exponential (two branches each way,
// thirty levels deep) is given up on within the budget, judging nothing.
func TestAHostileSchemaCannotStallTheTracker(t *testing.T) {
	tools := listed(t, `{"tools":[{"name":"x","inputSchema":{"type":"object",
	 "properties":{"v":{"$ref":"#/$defs/a"}},
	 "$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"},{"$ref":"#/$defs/c"}]},
	          "b":{"type":"array","items":{"$ref":"#/$defs/a"},"minItems":5},
	          "c":{"type":"array","items":{"$ref":"#/$defs/a"},"maxItems":0}}}}]}`)
	v := "0"
	for range 30 {
		v = "[" + v + "]"
	}
	done := make(chan bool, 1)
	go func() {
		_, bad := tools.CheckCall("x", fmt.Appendf(nil, `{"v":%s}`, v))
		done <- bad
	}()
	select {
	case bad := <-done:
		if bad {
			t.Error("a validation given up on judged the value invalid")
		}
	case <-time.After(time.Minute):
		t.Fatal("validating against a hostile schema did not end within a minute")
	}
}

func TestFindingsQuoteThePeersTextEscaped(t *testing.T) {
	tools := listed(t, `{"tools":[{"name":"evil\u001b[31m\u202e","inputSchema":{"type":"object","properties":{"a\u001b]52;x":{"enum":["\u001b[2J"]}}}}]}`)
	p, bad := tools.CheckCall("evil\x1b[31m\u202e", []byte(`{"a\u001b]52;x":"no"}`))
	if !bad {
		t.Fatal("a value outside the enum validated")
	}
	if strings.ContainsAny(p.Text, "\x1b\u202e") {
		t.Errorf("the finding repeats raw escape or bidi characters: %q", p.Text)
	}
}

func TestALaterPageAddsToTheList(t *testing.T) {
	tools := listed(t, `{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"2"}`)
	tools.AddPage([]byte(`{"tools":[{"name":"b","inputSchema":{"type":"object","required":["x"]}}]}`))
	if _, ok := tools.Listed("a"); !ok {
		t.Error("a later page dropped the tools of the first")
	}
	if _, bad := tools.CheckCall("b", []byte(`{}`)); !bad {
		t.Error("a call of a tool on the second page was not judged")
	}
}

func TestDriftNamesTheFieldsThatChanged(t *testing.T) {
	a := listed(t, `{"tools":[{"name":"x","title":"X","description":"d","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}`)
	b := listed(t, `{"tools":[{"name":"x","title":"X","description":"d2","inputSchema":{"type":"object","required":["q"]},"annotations":{"readOnlyHint":true}}]}`)
	p := b.Drift(a)
	if len(p) != 1 || p[0].Code != "tool-drift" || !strings.Contains(p[0].Text, "description, inputSchema") || strings.Contains(p[0].Text, "annotations") {
		t.Errorf("drift %+v, want one naming description and inputSchema only", p)
	}
	if p := a.Drift(a); len(p) != 0 {
		t.Errorf("a list drifted from itself: %+v", p)
	}
}

// decodeValue reads JSON as the validator's own decoder does: the same
// maps, slices, strings, json.Numbers, booleans and nulls.
func FuzzDecodeValueMatchesTheValidatorsDecoder(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,false,null,"x\u00e9\n"],"c":{"d":-1.5e3}}`, `[]`, `{}`, `"\ud83d\ude00"`, `0`, `{"a":1,"a":2}`, `{"\u0061":"k"}`, ` [ 1 , {"x" : [ ] } ] `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !Valid(raw) || !utf8.Valid(raw) {
			return // not judged, or left to the validator's decoder
		}
		want, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return // the validator's decoder refuses it (trailing data): it is not judged
		}
		got, ok := decodeValue(raw, 0)
		if !ok {
			return // too deep: left to the validator's decoder
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("decodeValue(%q) = %#v, the validator's decoder %#v", raw, got, want)
		}
	})
}

// The validator finds the failures of a value in the order of Go maps;
// the finding names the same one every time (the first by path), and
// lists the properties additionalProperties refuses in order.
func TestTheSameArgumentsGetTheSameFindingEveryTime(t *testing.T) {
	tools := listed(t, `{"tools":[{"name":"x","inputSchema":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"}}}},
	 {"name":"y","inputSchema":{"type":"object","additionalProperties":false}}]}`)
	for _, c := range []struct{ tool, args, want string }{
		{"x", `{"c":1,"b":2,"a":3}`, "at /a, got number, want string (keyword /properties/a/type)"},
		{"y", `{"p":1,"q":2,"r":3,"s":4}`, "additional properties 'p', 'q', 'r', 's' not allowed"},
	} {
		for range 20 {
			p, bad := tools.CheckCall(c.tool, []byte(c.args))
			if !bad || !strings.Contains(p.Text, c.want) {
				t.Fatalf("%s: finding %q (%v), want one saying %s", c.args, p.Text, bad, c.want)
			}
		}
	}
}
