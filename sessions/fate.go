package sessions

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// A Fate is what became of a frame on its way through the tap, as its
// record says: who wrote it (a peer, or rpctap on the user's behalf),
// whether its receiver read it, and what the user did with it while the
// tap held it. It is the one reading of a record's src, captured,
// partial and held fields: every output (tail, check, the exports) says
// a frame's fate through it, in its words.
type Fate struct {
	Src      string // SrcWire, SrcInject, SrcEdit, or another a later version wrote
	Captured bool   // an answer kept from the side that never sent its request
	Partial  bool   // the open end of a forced raw injection
	// Held is what became of a frame the tap held (a Held… outcome), ""
	// when it was not held.
	Held string
	// HeldFor is how long it was held, and Original, for an edited
	// frame, the bytes that came in: known from the record (FateOf), not
	// from an index entry (Entry.Fate), which keeps neither.
	HeldFor  time.Duration
	Original []byte
}

// FateOf is the fate a frame record says.
func FateOf(ev *Event) Fate {
	return Fate{Src: ev.Src, Captured: ev.Captured, Partial: ev.Partial, Held: ev.Held,
		HeldFor: time.Duration(ev.HeldUs) * time.Microsecond, Original: ev.Original}
}

// Fate is the fate of the entry's frame, without what an index does not
// keep (how long it was held, an edit's original).
func (e *Entry) Fate() Fate {
	return Fate{Src: e.Src, Captured: e.Captured, Partial: e.Partial, Held: e.Held}
}

// The words of a fate, in the order a fate says them. They are stable:
// the filter language's fate: token takes them, and the JSON outputs
// write them.
const (
	FateInjected  = "injected"          // rpctap wrote it on the user's behalf (src inject)
	FateEdited    = "edited"            // the user changed it before it went on (src edit); the original is kept
	FateCaptured  = "captured"          // an answer kept from the side that never sent its request
	FatePartial   = "partial"           // the open end of a forced raw injection
	FateHeld      = "held"              // the tap held it for the user (whatever became of it)
	FateDropped   = "dropped"           // the user dropped it: its receiver never read it
	FateAnswered  = "answered-in-place" // the user answered it in its receiver's place: its receiver never read it
	FateExpired   = "expired"           // its hold time ran out: it went on as it was
	FateDetached  = "detached"          // the views that held it went away: it went on as it was
	FateOverflow  = "overflow"          // the tap held as much as it may: it went on as it was
	FateWaited    = "waited"            // it waited behind a held frame, and went on as it was
	FateEndedHeld = "ended"             // the session ended while it was held
)

// FateWords lists every fate word, in order: a FateSet's bits.
var FateWords = []string{FateInjected, FateEdited, FateCaptured, FatePartial, FateHeld, FateDropped, FateAnswered,
	FateExpired, FateDetached, FateOverflow, FateWaited, FateEndedHeld}

// A FateSet is a set of fate words, bit i for FateWords[i].
type FateSet uint32

// ParseFateWord reads a fate word ("answered" is answered-in-place too),
// as a set of one.
func ParseFateWord(s string) (FateSet, bool) {
	if s == "answered" {
		s = FateAnswered
	}
	for i, w := range FateWords {
		if w == s {
			return 1 << i, true
		}
	}
	return 0, false
}

// The bits of the fate words, in FateWords order.
const (
	setInjected FateSet = 1 << iota
	setEdited
	setCaptured
	setPartial
	setHeld
	setDropped
	setAnswered
	setExpired
	setDetached
	setOverflow
	setWaited
	setEndedHeld
)

// Set is the fate's words as a set.
func (f Fate) Set() FateSet {
	var s FateSet
	switch f.Src {
	case SrcInject:
		s |= setInjected
	case SrcEdit:
		s |= setEdited
	}
	if f.Captured {
		s |= setCaptured
	}
	if f.Partial {
		s |= setPartial
	}
	if f.Held == "" {
		return s
	}
	s |= setHeld
	switch f.Held {
	case HeldEdited:
		s |= setEdited
	case HeldDropped:
		s |= setDropped
	case HeldAnswered:
		s |= setAnswered
	case HeldTimeout:
		s |= setExpired
	case HeldDetached:
		s |= setDetached
	case HeldOverflow:
		s |= setOverflow
	case HeldWaited:
		s |= setWaited
	case HeldEnded:
		s |= setEndedHeld
	}
	return s
}

// Words are the fate's words, in FateWords order; none for a frame a peer
// wrote that reached its receiver with no hold.
func (f Fate) Words() []string {
	var out []string
	for i, s := 0, f.Set(); s != 0; i, s = i+1, s>>1 {
		if s&1 != 0 {
			out = append(out, FateWords[i])
		}
	}
	return out
}

// IsZero reports whether there is nothing to say: a peer's frame that
// reached its receiver, never held.
func (f Fate) IsZero() bool { return f.Set() == 0 }

// Delivered reports whether the frame reached its receiver: not captured,
// not dropped, not answered in the receiver's place.
func (f Fate) Delivered() bool { return !f.Captured && HeldReachedReceiver(f.Held) }

// Delivery is what the tracker is told of the frame's delivery.
func (f Fate) Delivery() classify.Delivery {
	switch f.Held {
	case HeldDropped:
		return classify.Dropped
	case HeldAnswered:
		return classify.AnsweredInPlace
	}
	return classify.Delivered
}

// ByUser reports whether the user wrote the frame's bytes: rpctap
// injected it, or it is the user's edit of a held frame. Findings about
// such a frame are the user's, not a peer's.
func (f Fate) ByUser() bool { return f.Src == SrcInject || f.Src == SrcEdit }

// Text says the fate for people, in one line ("" when there is nothing to
// say): "held 1.2s, then dropped by the user: its receiver never read it".
func (f Fate) Text() string {
	var parts []string
	switch f.Src {
	case SrcInject:
		parts = append(parts, "injected by the user")
	case SrcEdit:
		if f.Held != HeldEdited {
			parts = append(parts, "edited by the user")
		}
	case SrcWire, "":
	default:
		parts = append(parts, "from "+classify.EscapeString(f.Src, 20))
	}
	if f.Captured {
		parts = append(parts, "captured: kept from the side that never sent its request")
	}
	if f.Partial {
		parts = append(parts, "partial: the open end of a forced raw injection")
	}
	if f.Held != "" {
		held := "held"
		if f.HeldFor > 0 {
			held += " " + f.HeldFor.Round(time.Millisecond).String()
		}
		switch f.Held {
		case HeldForwarded:
			held += ", then forwarded as it was"
		case HeldEdited:
			held += ", then forwarded as the user edited it"
		case HeldDropped:
			held += ", then dropped by the user: its receiver never read it"
		case HeldAnswered:
			held += ", then answered in place by the user: its receiver never read it"
		case HeldTimeout:
			held += ", expired: its hold time ran out and it went on as it was"
		case HeldDetached:
			held += ", then went on as it was: the views that held it went away"
		case HeldOverflow:
			held += ", then went on as it was: the tap held as much as it may"
		case HeldWaited:
			held = "waited behind a held frame"
			if f.HeldFor > 0 {
				held += " " + f.HeldFor.Round(time.Millisecond).String()
			}
			held += ", then went on as it was"
		case HeldEnded:
			held += " until the session ended, then went on as it was"
		default:
			held += " (" + classify.EscapeString(f.Held, 20) + ")"
		}
		parts = append(parts, held)
	}
	return strings.Join(parts, "; ")
}

// AppendJSON appends the fate as a JSON object, safe for a terminal:
// "words" (Words), "text" (Text), and the record's own fields that say
// it: "src", "captured", "partial", "held", "held_ms", and for an edited
// frame "original" (the bytes that came in, as JSON when they are JSON,
// else as a string).
func (f Fate) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"words":[`...)
	for i, w := range f.Words() {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendQuote(dst, w)
	}
	dst = append(dst, `],"text":`...)
	dst = classify.AppendSafeJSON(dst, classify.AppendString(nil, f.Text()))
	if f.Src != "" && f.Src != SrcWire {
		dst = append(dst, `,"src":`...)
		dst = classify.AppendSafeJSON(dst, classify.AppendString(nil, f.Src))
	}
	if f.Captured {
		dst = append(dst, `,"captured":true`...)
	}
	if f.Partial {
		dst = append(dst, `,"partial":true`...)
	}
	if f.Held != "" {
		dst = append(dst, `,"held":`...)
		dst = classify.AppendSafeJSON(dst, classify.AppendString(nil, f.Held))
		if f.HeldFor > 0 {
			dst = append(dst, `,"held_ms":`...)
			dst = strconv.AppendFloat(dst, float64(f.HeldFor.Microseconds())/1000, 'f', -1, 64)
		}
	}
	if f.Original != nil {
		dst = append(dst, `,"original":`...)
		if classify.Valid(f.Original) {
			dst = classify.AppendSafeJSON(dst, f.Original)
		} else {
			dst = classify.AppendSafeJSON(dst, classify.AppendString(nil, f.Original))
		}
	}
	return append(dst, '}')
}

// FindingByUser is the one rule for whose a finding is: the user's, not a
// peer's, when it is about a frame the user wrote (see Fate.ByUser) or
// links to one (related: the error that answers an injected frame, the
// request an injected cancellation names; 0 for none). byUser says
// whether the user wrote the frame of a line.
func FindingByUser(line, related int64, byUser func(line int64) bool) bool {
	return byUser(line) || related != 0 && byUser(related)
}

// UserLines is the set of the lines whose frames the user wrote, a bit a
// line, kept in words of 64 lines, only the words that have one: it grows
// with the user's frames, not with the file.
type UserLines struct {
	words []userWord // by at, ascending
}

type userWord struct {
	at   int64 // the first line of the word, a multiple of 64
	bits uint64
}

// Add puts line in the set (at once when lines come in ascending order,
// as a file's do).
func (u *UserLines) Add(line int64) {
	at, bit := line&^63, uint64(1)<<(line&63)
	if n := len(u.words); n == 0 || u.words[n-1].at < at {
		u.words = append(u.words, userWord{at: at, bits: bit})
		return
	}
	i, ok := u.find(at)
	if !ok {
		u.words = slices.Insert(u.words, i, userWord{at: at})
	}
	u.words[i].bits |= bit
}

// Has reports whether line is in the set.
func (u *UserLines) Has(line int64) bool {
	i, ok := u.find(line &^ 63)
	return ok && u.words[i].bits&(1<<(line&63)) != 0
}

func (u *UserLines) find(at int64) (int, bool) {
	return slices.BinarySearchFunc(u.words, at, func(w userWord, at int64) int { return cmp.Compare(w.at, at) })
}

// ServerSide returns a frame record's bytes as the recorded server read
// or wrote them, and false for a frame that was not its conversation:
// what the user wrote in the server's place (src inject toward the
// host: an injection, an answer in place), the host's answer to such a
// request (captured), a host frame the user dropped or answered in place
// (it never reached the server). The server's answer to a request the
// user injected is its (the tap kept it from the host), and a server
// frame the user edited is what the server wrote, before the edit.
func ServerSide(ev *Event) (frame, header []byte, ok bool) {
	switch {
	case !ev.IsFrame() || ev.Dir == classify.Err:
		return nil, nil, false
	case ev.Dir == classify.H2S && (ev.Captured || ev.Held != "" && !HeldReachedReceiver(ev.Held)):
		return nil, nil, false
	case ev.Dir == classify.S2H && ev.Src == SrcInject:
		return nil, nil, false
	case ev.Dir == classify.S2H && ev.Src == SrcEdit && ev.Original != nil:
		return ev.Original, nil, true
	}
	return ev.Frame, ev.Header, true
}
