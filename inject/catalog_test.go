package inject

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// The catalog holds one entry for each edge case it is there to cover,
// each named below.
func TestCatalogHasAnEntryForEveryCaseOfTheIssue(t *testing.T) {
	want := []string{"null-id-request", "object-id", "array-id", "boolean-id", "number-method", "jsonrpc-spec-invalid",
		"batch", "empty-batch", "scalar-null", "scalar-number", "scalar-string", "scalar-true", "not-json",
		"error-null-id", "error-no-id", "result-null-id", "result-and-error", "stdout-log-null-id", "empty-object",
		"initialized-request", "notification-with-id", "request-without-id", "unknown-method", "string-and-number-id",
		"unsafe-integer-id", "fractional-id", "duplicate-member", "error-message-not-string", "leaky-error",
		"unsafe-text", "large-frame", "cancel-in-flight", "progress-in-flight", "id-reused"}
	var got []string
	for _, e := range Catalog() {
		if e.Rule == "" || strings.Contains(e.Rule, "\n") {
			t.Errorf("%s: the rule must be one line, and it is %q", e.Name, e.Rule)
		}
		if slices.Contains(got, e.Name) {
			t.Errorf("%s is in the catalog twice", e.Name)
		}
		got = append(got, e.Name)
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("the catalog has no entry %s", w)
		}
	}
	if _, err := LookupErr("no-such"); err == nil || !strings.Contains(err.Error(), "rpctap catalog lists them") {
		t.Errorf("an unknown name: %v", err)
	}
}

// Each entry's frame raises the findings it is there to test, read as its
// receiver reads it (the server, for entries that make sense either way)
// under MCP, in a session where the request its id names is in flight from
// the entry's side; and an entry whose rule says a strict receiver answers
// -32600 or -32700 carries that strict answer.
func TestCatalogEntriesRaiseTheirFindingsAndStrictAnswers(t *testing.T) {
	for _, e := range Catalog() {
		t.Run(e.Name, func(t *testing.T) {
			dir := e.Dir
			if dir == Either {
				dir = classify.H2S
			}
			frames, err := e.Frames(Params{ID: `"rpctap-9"`, Size: 4096})
			if err != nil {
				t.Fatal(err)
			}
			tr := classify.NewTracker(classify.TrackerOptions{Profile: classify.MCP, Timeout: time.Second})
			seq := int64(1)
			inFlight := classify.Classify([]byte(`{"jsonrpc":"2.0","id":"rpctap-9","method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"rpctap-9"}}}`), dir, classify.MCP)
			if e.Name == "progress-in-flight" {
				inFlight.Dir = dir.Opposite()
				inFlight = classify.Classify(inFlight.Frame, dir.Opposite(), classify.MCP)
			}
			tr.Observe(seq, 0, &inFlight)
			got := map[classify.Code]bool{}
			var answers []*classify.Answer
			for _, f := range frames {
				seq++
				m := classify.Classify(f, dir, classify.MCP)
				for _, x := range append([]classify.Message{m}, m.Members...) {
					for _, fd := range x.Findings {
						got[fd.Code] = true
					}
				}
				if m.Answer != nil {
					answers = append(answers, m.Answer)
				}
				for _, sf := range tr.Observe(seq, time.Duration(seq)*time.Millisecond, &m).Findings {
					got[sf.Code] = true
				}
			}
			for _, c := range e.Codes {
				if !got[c] {
					t.Errorf("the frame does not raise %s; it raises %v", c, got)
				}
			}
			for code, needle := range map[int]string{classify.InvalidRequest: "-32600", classify.ParseError: "-32700"} {
				if !strings.Contains(e.Rule, needle) || dir != classify.H2S {
					continue
				}
				if len(answers) == 0 || answers[0].Code != code && answers[0].Batch == nil {
					t.Errorf("the rule says %s, and classify owes %v", needle, answers)
				}
			}
		})
	}
}

func TestCatalogEntriesThatNeedAnIDOrASizeSaySo(t *testing.T) {
	e, _ := Lookup("cancel-in-flight")
	if _, err := e.Frames(Params{}); err == nil || !strings.Contains(err.Error(), "--id") {
		t.Errorf("no id: %v", err)
	}
	if _, err := e.Frames(Params{ID: `{"a":1}`}); err == nil {
		t.Error("an object id for a request in flight was taken")
	}
	f, err := e.Frames(Params{ID: "7"})
	if err != nil || !strings.Contains(string(f[0]), `"requestId":7,`) {
		t.Errorf("cancel of 7: %s %v", f, err)
	}
	big, _ := Lookup("large-frame")
	for _, size := range []int{minLarge, 1000, 3 << 20} {
		f, err := big.Frames(Params{Size: size})
		if err != nil || len(f[0]) != size || !classify.Valid(f[0]) {
			t.Errorf("large frame of %d bytes: %d bytes, valid %v, %v", size, len(f[0]), classify.Valid(f[0]), err)
		}
	}
	if f, _ := big.Frames(Params{}); len(f[0]) != DefaultSize {
		t.Errorf("the default large frame is %d bytes", len(f[0]))
	}
	if _, err := big.Frames(Params{Size: 10}); err == nil || !strings.Contains(err.Error(), "--size") {
		t.Errorf("a size too small: %v", err)
	}
}

func TestListShowsEveryEntryWithItsFrame(t *testing.T) {
	l := List()
	if len(l) != len(Catalog()) {
		t.Fatalf("%d listed of %d", len(l), len(Catalog()))
	}
	for _, x := range l {
		if x.Frame == "" || x.Rule == "" || x.Dir == "" {
			t.Errorf("%+v", x)
		}
		if x.Name == "id-reused" && (!strings.Contains(x.Frame, `"id":ID`) || x.Needs == "") {
			t.Errorf("id-reused is listed as %+v", x)
		}
	}
}
