package sessions

import (
	"testing"

	"github.com/rpctap/rpctap/classify"
)

// Each direction's framing is the header's; under auto, newlines until
// a framing note says a direction used Content-Length; a note with no
// direction (an older file's) says it of both.
func TestFramingsFollowTheHeaderAndEachDirectionsNote(t *testing.T) {
	lsp, nd, auto := classify.FramingLSP, classify.FramingNDJSON, classify.FramingAuto
	note := func(dir classify.Direction) *Event { return &Event{Kind: EventNote, Dir: dir, Text: NoteFramingLSP} }
	for _, c := range []struct {
		header  string
		notes   []*Event
		h2s     classify.Framing
		s2h     classify.Framing
		framing classify.Framing
	}{
		{"lsp", nil, lsp, lsp, lsp},
		{"ndjson", nil, nd, nd, nd},
		{"", nil, nd, nd, nd},
		{"auto", nil, nd, nd, nd},
		{"auto", []*Event{note(classify.H2S)}, lsp, nd, auto},
		{"auto", []*Event{note(classify.S2H)}, nd, lsp, auto},
		{"auto", []*Event{note(classify.S2H), note(classify.H2S)}, lsp, lsp, lsp},
		{"auto", []*Event{note(0)}, lsp, lsp, lsp},
		{"auto", []*Event{note(classify.Err), {Kind: EventNote, Text: "other"}}, nd, nd, nd},
	} {
		f := Header{Framing: c.header}.Framings()
		for _, n := range c.notes {
			f.Note(n)
		}
		if f.Of(classify.H2S) != c.h2s || f.Of(classify.S2H) != c.s2h || f.Framing() != c.framing || f.Of(classify.Err) != nd {
			t.Errorf("header %q, %d notes: %+v, framing %s", c.header, len(c.notes), f, f.Framing())
		}
		if notes := f.Notes(); (len(notes) > 0) != (c.framing == auto) {
			t.Errorf("header %q, %d notes: notes to write %+v", c.header, len(c.notes), notes)
		}
	}
}

// An index knows a direction's framing from its own traffic once the
// header names one framing, or under auto once the direction's framing
// note or a frame its sender sent is indexed: a frame injected toward
// its receiver (which the tap framed as the other direction's) does not
// count, nor a stderr line, nor the other direction's note.
func TestIndexSaysWhenADirectionsOwnTrafficShowedItsFraming(t *testing.T) {
	note := func(dir classify.Direction) *Event { return &Event{Kind: EventNote, Dir: dir, Text: NoteFramingLSP} }
	frame := func(dir classify.Direction, src string) *Event {
		return &Event{Dir: dir, Src: src, Frame: []byte(`{"jsonrpc":"2.0","method":"m"}`)}
	}
	for _, c := range []struct {
		header   string
		records  []*Event
		h2s, s2h bool
	}{
		{"ndjson", nil, true, true},
		{"lsp", nil, true, true},
		{"auto", nil, false, false},
		{"auto", []*Event{note(classify.H2S)}, true, false},
		{"auto", []*Event{note(0)}, true, true},
		{"auto", []*Event{note(classify.Err), frame(classify.Err, "")}, false, false},
		{"auto", []*Event{frame(classify.S2H, SrcInject), frame(classify.H2S, SrcInject)}, false, false},
		{"auto", []*Event{note(classify.H2S), frame(classify.H2S, ""), frame(classify.S2H, SrcInject)}, true, false},
		{"auto", []*Event{frame(classify.S2H, "")}, false, true},
		{"auto", []*Event{frame(classify.H2S, SrcEdit)}, true, false},
	} {
		x := NewIndex(IndexOptions{})
		x.SetHeader(Header{Framing: c.header})
		for i, ev := range c.records {
			ev.Line = i + 2
			x.Add(ev, -1)
		}
		if h2s, s2h := x.Framed(classify.H2S), x.Framed(classify.S2H); h2s != c.h2s || s2h != c.s2h || x.Framed(classify.Err) {
			t.Errorf("header %q, %d records: framed h2s %v, s2h %v, err %v; want %v, %v, false", c.header, len(c.records), h2s, s2h, x.Framed(classify.Err), c.h2s, c.s2h)
		}
	}
}
