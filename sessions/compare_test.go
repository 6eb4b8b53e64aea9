package sessions

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestHashIsEqualForTheSameValueWhateverTheIdMetaOrderAndEscapes(t *testing.T) {
	ig, err := ParseIgnore([]string{"/result/content/*/when"})
	if err != nil {
		t.Fatal(err)
	}
	base := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi","when":"12:00"}]}}`
	same := []string{
		`{"id":"other","jsonrpc":"2.0","result":{"content":[{"text":"hi","type":"text","when":"12:00"}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"_meta":{"x":1},"content":[{"type":"text","text":"h\u0069","when":"12:00"}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi","when":"13:30"}]}}`,
		` {"jsonrpc" : "2.0", "id":1, "result":{"content":[{"type":"text","text":"hi","when":"12:00"}]}} `,
	}
	differ := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"HI","when":"12:00"}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"isError":true}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi","when":"12:00"},{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":{"0":{"type":"text","text":"hi","when":"12:00"}}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":1}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"type":"text","text":"hi"}]}}`,
	}
	h, ok := ig.Hash([]byte(base))
	if !ok {
		t.Fatal("the base message does not hash")
	}
	for _, s := range same {
		if g, _ := ig.Hash([]byte(s)); g != h {
			t.Errorf("hashes differently from the base: %s", s)
		}
		if cs := ig.Diff([]byte(base), []byte(s), 0); len(cs) != 0 {
			t.Errorf("Diff finds %v in %s", cs, s)
		}
	}
	for _, s := range differ {
		if g, _ := ig.Hash([]byte(s)); g == h {
			t.Errorf("hashes as the base: %s", s)
		}
		if cs := ig.Diff([]byte(base), []byte(s), 0); len(cs) == 0 {
			t.Errorf("Diff finds nothing in %s", s)
		}
	}
}

func TestDiffNamesEachChangedPathWithBothValues(t *testing.T) {
	a := `{"id":1,"result":{"tools":[{"name":"a","x":1}],"gone":true,"same":[1,2]}}`
	b := `{"id":2,"result":{"tools":[{"name":"a","x":2},{"name":"b"}],"new":"yes","same":[1,2]}}`
	got := Ignore{}.Diff([]byte(a), []byte(b), 0)
	want := []Change{
		{Path: "/result/gone", Was: "true"},
		{Path: "/result/new", Now: `"yes"`},
		{Path: "/result/tools/0/x", Was: "1", Now: "2", Item: "name=a"},
		{Path: "/result/tools/1", Now: `{"name":"b"}`, Item: "name=b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Diff:\n got  %v\n want %v", got, want)
	}
}

func TestDiffComparesAListOfNamedItemsByNameWhereverEachIs(t *testing.T) {
	tool := func(name, desc string) string { return `{"description":"` + desc + `","name":"` + name + `"}` }
	a := `{"result":{"tools":[` + tool("echo", "Echoes") + `,` + tool("add", "Adds") + `,` + tool("gone", "Old") + `]}}`
	// A tool added first, the others moved and one changed.
	b := `{"result":{"tools":[` + tool("new", "New") + `,` + tool("add", "Sums") + `,` + tool("echo", "Echoes") + `]}}`
	got := Ignore{}.Diff([]byte(a), []byte(b), 0)
	want := []Change{
		{Path: "/result/tools/1/description", Was: `"Adds"`, Now: `"Sums"`, Item: "name=add"},
		{Path: "/result/tools/2", Was: tool("gone", "Old"), Item: "name=gone"},
		{Path: "/result/tools/0", Now: tool("new", "New"), Item: "name=new"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Diff:\n got  %v\n want %v", got, want)
	}
	// The same tools in another order are the same list; resources are
	// named by their URI, which no other has (names may repeat).
	moved := `{"result":{"tools":[` + tool("gone", "Old") + `,` + tool("echo", "Echoes") + `,` + tool("add", "Adds") + `]}}`
	if cs := (Ignore{}).Diff([]byte(a), []byte(moved), 0); len(cs) != 0 {
		t.Errorf("the same tools in another order differ: %v", cs)
	}
	ra := `{"result":{"resources":[{"uri":"a://1","name":"doc"},{"uri":"a://2","name":"doc"}]}}`
	rb := `{"result":{"resources":[{"uri":"a://2","name":"doc"},{"uri":"a://1","name":"doc"}]}}`
	if cs := (Ignore{}).Diff([]byte(ra), []byte(rb), 0); len(cs) != 0 {
		t.Errorf("the same resources in another order differ: %v", cs)
	}
	// A list whose names repeat is compared by position.
	la := `{"result":[{"name":"x","v":1},{"name":"x","v":2}]}`
	lb := `{"result":[{"name":"x","v":2},{"name":"x","v":1}]}`
	if cs := (Ignore{}).Diff([]byte(la), []byte(lb), 0); len(cs) != 2 || cs[0].Item != "" {
		t.Errorf("a list with a repeated name: %v", cs)
	}
}

func TestAMaskTheRecordingWroteComparesEqualToAnyValue(t *testing.T) {
	rec := []byte(`{"result":{"text":"DBPASS=***DBPASS***; user=***DBUSER***!","n":1}}`)
	ig := Ignore{}.WithMasks([]string{"DBPASS", "DBUSER"}, false, false)
	for _, now := range []string{
		`{"result":{"text":"DBPASS=hunter2-s3cr3t-77; user=root!","n":1}}`,
		`{"result":{"n":1,"text":"DBPASS=x; user=***DBUSER***!"}}`,
	} {
		if cs := ig.Diff(rec, []byte(now), 0); len(cs) != 0 {
			t.Errorf("%s differs from the masked recording: %v", now, cs)
		}
		if sim := ig.Similarity(rec, []byte(now)); sim != 1 {
			t.Errorf("%s is %.2f alike the masked recording, want 1", now, sim)
		}
	}
	for _, now := range []string{
		`{"result":{"text":"DBPASS=hunter2; user=root?","n":1}}`, // the text around a mask differs
		`{"result":{"text":"DBPASS=; user=root!","n":1}}`,        // a secret is never empty
		`{"result":{"text":"DBPASS=x; user=root!","n":2}}`,
	} {
		if cs := ig.Diff(rec, []byte(now), 0); len(cs) != 1 {
			t.Errorf("%s: want one difference from the masked recording, got %v", now, cs)
		}
	}
	// Without masks, or with masks of other names, a mask is its text.
	for _, ig := range []Ignore{{}, Ignore{}.WithMasks([]string{"OTHER"}, false, false)} {
		if cs := ig.Diff(rec, []byte(`{"result":{"text":"DBPASS=hunter2; user=root!","n":1}}`), 0); len(cs) != 1 {
			t.Errorf("a mask of a name not masked compares as text: %v", cs)
		}
	}
	// A recording that does not name its masks: any rpctap mask.
	if cs := (Ignore{}).WithMasks(nil, true, false).Diff(rec, []byte(`{"result":{"text":"DBPASS=a; user=b!","n":1}}`), 0); len(cs) != 0 {
		t.Errorf("with any mask taken: %v", cs)
	}
	// Only the recording's masks stand for a value, unless both are recordings.
	if cs := ig.Diff([]byte(`{"text":"hunter2"}`), []byte(`{"text":"***DBPASS***"}`), 0); len(cs) != 1 {
		t.Errorf("a mask in the live message stands for a value: %v", cs)
	}
	if cs := (Ignore{}).WithMasks([]string{"DBPASS"}, false, true).Diff([]byte(`{"text":"hunter2"}`), []byte(`{"text":"***DBPASS***"}`), 0); len(cs) != 0 {
		t.Errorf("a mask in the second recording: %v", cs)
	}
}

func TestParseIgnoreRefusesAPointerThatIsNotFromTheRoot(t *testing.T) {
	if _, err := ParseIgnore([]string{"result/x"}); err == nil {
		t.Error("a pointer without its leading / is taken")
	}
	ig, err := ParseIgnore([]string{"/a~1b/c~0d"})
	if err != nil {
		t.Fatal(err)
	}
	if !ig.skips([]string{"a/b", "c~d"}) {
		t.Error("~1 and ~0 are not read as / and ~")
	}
}

// A diff that keeps only its first changes still knows whether any change
// past them removes or changes a value.
func TestABoundedDiffKnowsWhetherEveryChangeOnlyAdds(t *testing.T) {
	var adds strings.Builder
	for i := range 30 {
		fmt.Fprintf(&adds, `"a%02d":%d,`, i, i)
	}
	was := `{"result":{"z":1}}`
	for _, c := range []struct {
		now      string
		onlyAdds bool
	}{
		{`{"result":{` + adds.String() + `"z":1}}`, true},
		{`{"result":{` + adds.String() + `"z":2}}`, false},
		{`{"result":{` + adds.String() + `"zz":1}}`, false},
	} {
		out, onlyAdds := Ignore{}.DiffCall([]byte(was), []byte(c.now), 5, nil)
		if len(out) != 5 || onlyAdds != c.onlyAdds {
			t.Errorf("%s: %d changes, only adds %v; want 5, %v", c.now, len(out), onlyAdds, c.onlyAdds)
		}
	}
}
