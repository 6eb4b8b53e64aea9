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
			if !e.Codes.Empty() || e.Fate().Set() == 0 || !strings.Contains(e.Fate().Text(), "dropped by the user") {
				t.Errorf("the dropped call: codes %v, fate %q", e.Codes.Codes(), e.Fate().Text())
			}
		case 6:
			if !e.Codes.Empty() || e.Pair != 7 {
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
