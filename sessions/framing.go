package sessions

import "github.com/rpctap/rpctap/classify"

// Framings is the framing of each direction of a session's frames: what
// a reader needs to rebuild the bytes each side read (a newline, or a
// Content-Length header). A header that says ndjson or lsp says it of
// both directions. Under "auto" each direction is newline-framed until a
// framing note says it used Content-Length: a tap writes one note a
// direction, with the direction in the note's "dir", before that
// direction's first frame; a note with no direction (as rpctap wrote one
// for a whole session before) says it of both.
type Framings struct {
	H2S, S2H classify.Framing
}

// Framings is what the header alone says of each direction's framing.
func (h Header) Framings() Framings {
	f, _ := classify.ParseFraming(h.FramingOrDefault())
	if f == classify.FramingAuto {
		f = classify.FramingNDJSON
	}
	return Framings{H2S: f, S2H: f}
}

// Note takes ev into account when it is a framing note, and reports
// whether it was one.
func (f *Framings) Note(ev *Event) bool {
	if ev.Kind != EventNote || ev.Text != NoteFramingLSP {
		return false
	}
	switch ev.Dir {
	case classify.H2S:
		f.H2S = classify.FramingLSP
	case classify.S2H:
		f.S2H = classify.FramingLSP
	case classify.Err:
	default:
		f.H2S, f.S2H = classify.FramingLSP, classify.FramingLSP
	}
	return true
}

// Of is dir's framing (stderr is lines).
func (f Framings) Of(dir classify.Direction) classify.Framing {
	switch dir {
	case classify.H2S:
		return f.H2S
	case classify.S2H:
		return f.S2H
	}
	return classify.FramingNDJSON
}

// LSP reports whether either direction used Content-Length framing (the
// session's profile is then LSP, when it is auto).
func (f Framings) LSP() bool {
	return f.H2S == classify.FramingLSP || f.S2H == classify.FramingLSP
}

// Framing is the one framing of both directions, or FramingAuto when
// they differ: the framing to read a live stream of either with (a
// splitter under auto decides each stream by its bytes).
func (f Framings) Framing() classify.Framing {
	if f.H2S == f.S2H {
		return f.H2S
	}
	return classify.FramingAuto
}

// Notes are the framing notes a session file whose header says
// f.Framing() needs after its header to say f: one for each direction
// that used Content-Length, when the directions differ.
func (f Framings) Notes() []EventRecord {
	if f.Framing() != classify.FramingAuto {
		return nil
	}
	var notes []EventRecord
	for _, dir := range []classify.Direction{classify.H2S, classify.S2H} {
		if f.Of(dir) == classify.FramingLSP {
			notes = append(notes, EventRecord{Kind: EventNote, Dir: dir, Text: NoteFramingLSP})
		}
	}
	return notes
}
