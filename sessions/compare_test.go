package sessions

import (
	"reflect"
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
		{Path: "/result/tools/0/x", Was: "1", Now: "2"},
		{Path: "/result/tools/1", Now: `{"name":"b"}`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Diff:\n got  %v\n want %v", got, want)
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

func TestWithIDChangesOnlyTheIdBytes(t *testing.T) {
	frame := `{"result":{"id":7,"text":"id"} , "jsonrpc":"2.0",  "id" : 5 }`
	got := string(withID([]byte(frame), []byte(`"host-1"`)))
	if want := `{"result":{"id":7,"text":"id"} , "jsonrpc":"2.0",  "id" : "host-1" }`; got != want {
		t.Errorf("withID:\n got  %s\n want %s", got, want)
	}
	if got := string(withID([]byte(`{"result":{}}`), []byte("1"))); got != `{"result":{}}` {
		t.Errorf("a frame with no id got one: %s", got)
	}
}
