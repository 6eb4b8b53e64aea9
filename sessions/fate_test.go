package sessions

import (
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

// fateSession has a frame of every fate: a call the user dropped, one
// answered in its receiver's place, one edited (with its original), one
// whose hold time ran out, an injected request with its captured answer,
// an injected frame a strict server refuses (and the server's error that
// answers it), and at the end a call still owed when the server exits.
// Requests time out after 1 s.
const fateSession = "../testdata/sessions/fates/user-actions.jsonl"

// The view's index judges the same way: no timeout for what the user
// dropped, unanswered-at-end at the exit record.
func TestIndexJudgesFramesByTheirFate(t *testing.T) {
	x, err := IndexFile(fateSession, IndexOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range x.Len() {
		e := x.At(i)
		switch e.Seq {
		case 5:
			if e.Codes != 0 || e.Fate().Set() == 0 || !strings.Contains(e.Fate().Text(), "dropped by the user") {
				t.Errorf("the dropped call: codes %v, fate %q", e.Codes.Codes(), e.Fate().Text())
			}
		case 6:
			if e.Codes != 0 || e.Pair != 7 {
				t.Errorf("the call answered in place: codes %v, pair %d", e.Codes.Codes(), e.Pair)
			}
		case 16:
			if !e.Codes.Has(classify.CodeUnansweredAtEnd) || e.Codes.Has(classify.CodeTimeout) {
				t.Errorf("the call owed at the end: codes %v", e.Codes.Codes())
			}
		}
	}
}

// The index counts the user's findings apart, by check's rule: the
// injected frame's bad-id and the error that answers it are the user's,
// the call owed at the end the server's; an entry still shows its worst.
func TestTheIndexCountsTheUsersFindingsApart(t *testing.T) {
	x, err := IndexFile(fateSession, IndexOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := x.Counts()
	if c.Errors != 0 || c.Warnings != 1 || c.UserErrors != 1 || c.UserWarnings != 1 {
		t.Errorf("the peers' %d errors, %d warnings; the user's %d errors, %d warnings; want 0, 1 (the call owed at the end); 1, 1 (the injected frame and its answer)",
			c.Errors, c.Warnings, c.UserErrors, c.UserWarnings)
	}
	for i := range x.Len() {
		if e := x.At(i); e.Seq == 14 && e.Worst != classify.Error {
			t.Errorf("the injected frame's entry shows worst %s, want error", e.Worst)
		}
	}
}

// Every export says what became of each frame in the tap, from the one
// reading of the record (Fate): injected, captured, held, edited with
// the original, dropped, answered in place, expired; Mermaid draws what
// the user wrote from rpctap, and what went no further than the tap to
// it, with a cross where the receiver never read it.
func TestEveryExportSaysWhatBecameOfEachFrame(t *testing.T) {
	path := fateSession
	want := map[ExportFormat][]string{
		FormatMarkdown: {"injected by the user", "captured: kept from the side", "dropped by the user: its receiver never read it",
			"answered in place by the user", "forwarded as the user edited it", "expired: its hold time ran out", "The original, as it came in", "before the edit",
			"0 errors, 1 warning, 0 notes (records by their worst); apart, 2 records about frames the user injected or edited"},
		FormatHTML: {"injected by the user", "captured: kept from the side", "dropped by the user: its receiver never read it",
			"answered in place by the user", "forwarded as the user edited it", "expired: its hold time ran out", "the original, as it came in", "before the edit",
			"apart, 2 records about frames the user injected or edited"},
		FormatMermaid: {"participant R as rpctap", "H-xR: 5 request tools/call id 1 #91;held, dropped 1.5s#93;",
			"H-xR: 6 request tools/call id 2 #91;held, answered-in-place", "R-->>H: 7 result tools/call id 2", "#91;injected#93;",
			"R->>S: 12 request ping", "S-->>R: 13 result ping", "#91;captured#93;", "H->>S: 8 request tools/call id 3 #91;edited, held",
			"before the edit", "#91;held, expired 1m0s#93;"},
		FormatJSON: {`"words":["held","dropped"]`, `"status":"dropped"`, `"words":["held","answered-in-place"]`, `"words":["injected"]`,
			`"words":["captured"]`, `"words":["edited","held"]`, `"original":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"message":"before the edit"}}`,
			`"words":["held","expired"]`},
		FormatHAR: {`"request_fate":{"words":["held","dropped"]`, `no answer: held 1.5s, then dropped by the user`, `"response_fate":{"words":["injected"]`,
			`"response_fate":{"words":["captured"]`, `"request_fate":{"words":["edited","held"]`, `before the edit`},
		FormatOTLP: {`"key":"rpctap.request.fate","value":{"stringValue":"held dropped"}`, `"stringValue":"held answered-in-place"`,
			`"key":"rpctap.response.fate","value":{"stringValue":"injected"}`, `"stringValue":"captured"`, `"stringValue":"edited held"`,
			`"stringValue":"held expired"`},
	}
	for _, f := range allFormats() {
		got, _ := exportString(t, path, ExportOptions{Format: f})
		for _, w := range want[f] {
			if !strings.Contains(got, w) {
				t.Errorf("the %s export lacks %q:\n%s", f, w, got)
			}
		}
		if f == FormatMermaid && strings.Contains(got, "H->>S: 5 ") {
			t.Errorf("Mermaid draws the dropped call as delivered:\n%s", got)
		}
	}
}

// A fate's words are what the filter's fate: token reads: Set and Words
// agree with ParseFateWord for every outcome a record can say.
func TestAFatesWordsAreTheFilterWords(t *testing.T) {
	cases := map[string]Fate{
		"injected":               {Src: SrcInject},
		"edited held":            {Src: SrcEdit, Held: HeldEdited},
		"captured":               {Captured: true},
		"partial injected":       {Src: SrcInject, Partial: true},
		"held":                   {Held: HeldForwarded},
		"held dropped":           {Held: HeldDropped},
		"held answered-in-place": {Held: HeldAnswered},
		"held expired":           {Held: HeldTimeout},
		"held detached":          {Held: HeldDetached},
		"held overflow":          {Held: HeldOverflow},
		"held waited":            {Held: HeldWaited},
		"held ended":             {Held: HeldEnded},
		"":                       {Src: SrcWire},
	}
	for want, f := range cases {
		var set FateSet
		for _, w := range strings.Fields(want) {
			b, ok := ParseFateWord(w)
			if !ok {
				t.Fatalf("no fate word %q", w)
			}
			set |= b
		}
		if f.Set() != set {
			t.Errorf("%+v: set %b, want %b (%s)", f, f.Set(), set, want)
		}
		got := map[string]bool{}
		for _, w := range f.Words() {
			got[w] = true
		}
		for _, w := range strings.Fields(want) {
			if !got[w] || len(got) != len(strings.Fields(want)) {
				t.Errorf("%+v: words %v, want %s", f, f.Words(), want)
				break
			}
		}
		if f.IsZero() != (want == "") || f.Delivered() == (f.Held == HeldDropped || f.Held == HeldAnswered || f.Captured) {
			t.Errorf("%+v: zero %v, delivered %v", f, f.IsZero(), f.Delivered())
		}
	}
}
