package sessions

import (
	"time"

	"github.com/rpctap/rpctap/classify"
)

// Version is the session file format version this package reads and writes.
const Version = 1

// Defaults that apply when a header says nothing, or when a file has none.
const (
	DefaultFraming = "ndjson"
	DefaultProfile = "auto"
)

// Sources of a frame record: where the frame came from.
const (
	SrcWire   = "wire"   // crossed the tap from a peer (the default)
	SrcInject = "inject" // written by rpctap on the user's behalf
	SrcEdit   = "edit"   // a held frame the user changed before release
)

// What became of a frame the tap held for the user (intercept): a frame
// record's "held". Frames dropped or answered in place crossed into the
// tap but not out of it; replaying a direction leaves them out.
const (
	HeldForwarded = "forwarded" // the user let it go as it was
	HeldEdited    = "edited"    // the user changed it: src edit, what came in in Original
	HeldDropped   = "dropped"   // the user dropped it: its receiver never read it
	HeldAnswered  = "answered"  // the user answered it in the sender's place: its receiver never read it, and the reply follows with src inject
	HeldTimeout   = "timeout"   // its hold time ran out: it went on as it was
	HeldDetached  = "detached"  // the views that held it went away: it went on as it was
	HeldOverflow  = "overflow"  // the tap held as much as it may: it went on as it was
	HeldWaited    = "waited"    // it waited behind a held frame of its direction, and went on as it was
	HeldEnded     = "ended"     // the session ended while it was held: it went on as it was, if its receiver still read
)

// HeldReachedReceiver reports whether a frame whose record says held
// reached its receiver.
func HeldReachedReceiver(held string) bool { return held != HeldDropped && held != HeldAnswered }

// Kinds of event record.
const (
	EventStart = "start" // the server was started
	EventExit  = "exit"  // the server exited: Code or Signal
	EventGap   = "gap"   // Missing frames of Dir could not be recorded
	EventNote  = "note"  // free text from rpctap: Text
)

// NoteFramingLSP is the text of the note a tap writes when a direction of
// a session whose header says framing "auto" turns out to use
// Content-Length framing; the note's Dir is that direction (a note with
// none says it of both, as older files do). See Framings.
const NoteFramingLSP = "framing: lsp"

// Header is the first line of a session file.
type Header struct {
	Version int       // format version; a Writer writes Version
	ID      string    // the session's id
	Started time.Time // when the tap started; written in UTC to the microsecond
	Argv    []string  // the server's command line
	Name    string    // a short name for the server, for people
	Framing string    // "ndjson" or "lsp"; empty means DefaultFraming
	Profile string    // "auto", "jsonrpc", "mcp" or "lsp"; empty means DefaultProfile
	// ParseLimit is the parse limit the writer judged frames by, when it
	// was not classify.MaxParse (a tap holds less of a frame than that);
	// readers judge by it too, so that a file says what the live view
	// said. 0 means classify.MaxParse.
	ParseLimit int
	// Timeout is the pending-request timeout the writer judged requests
	// by, when it was not classify.DefaultTimeout (a demo's, a tap's
	// --timeout); readers that are given no timeout of their own judge
	// by it, so that a file says what the live view said. 0 means the
	// default.
	Timeout time.Duration
	// Redact names the secrets the writer was set to mask (the
	// environment's secret-looking variables and the --redact names,
	// never their values), whether or not a frame held one, so that a
	// replay masks them again; nil when there were none (--no-redact), or
	// the file was written before headers named them.
	Redact []string
	// Transport is TransportHTTP for a session the HTTP tap recorded; ""
	// (not written) for stdio.
	Transport string
}

// TimeoutOr is the timeout to judge the session by: given, when it is
// not 0, else the header's, else classify.DefaultTimeout.
func (h Header) TimeoutOr(given time.Duration) time.Duration {
	switch {
	case given != 0:
		return given
	case h.Timeout > 0:
		return h.Timeout
	}
	return classify.DefaultTimeout
}

// Classify judges a frame of this session as its writer did: a frame
// larger than the session's parse limit is judged from its first bytes
// and carries finding oversize.
//
// In an HTTP session an empty frame is no message but what the transport
// did (its record's "http" object says what): kind http, with no finding.
func (h Header) Classify(frame []byte, dir classify.Direction, p classify.Profile) classify.Message {
	if h.Transport == TransportHTTP && len(frame) == 0 {
		return classify.NoMessage(dir, p)
	}
	return classify.ClassifyWithin(frame, h.ParseLimit, dir, p)
}

// FramingOrDefault is h.Framing, or DefaultFraming when it is empty.
func (h Header) FramingOrDefault() string {
	if h.Framing == "" {
		return DefaultFraming
	}
	return h.Framing
}

// ProfileOrDefault is h.Profile, or DefaultProfile when it is empty.
func (h Header) ProfileOrDefault() string {
	if h.Profile == "" {
		return DefaultProfile
	}
	return h.Profile
}

// Event is one record after the header, as a Reader decodes it: a frame
// when Kind is empty, an event record otherwise.
//
// A Reader reuses its Event: the value and the bytes its slices point to
// are valid until the Reader's next call to Next. Copy what must outlive
// it (strings are never reused).
type Event struct {
	Line int   // 1-based line number in the file; the header is line 1
	T    int64 // microseconds since the header's Started
	// Dir is the frame's direction; for an event record it is 0, except
	// for a gap, where it is the direction whose frames are missing.
	Dir classify.Direction

	// Frame records.
	Frame    []byte // the frame's exact bytes (from "frame" or "frame_b64")
	Header   []byte // the LSP header block when recorded; nil when absent
	Src      string // SrcWire, SrcInject or SrcEdit (SrcWire when absent)
	EOF      bool   // the frame ended its stream with no terminator
	Redacted bool   // rpctap masked a secret: the bytes are no longer exact
	// Captured says the frame answered a request rpctap injected and was
	// kept from its receiver: it crossed into the tap but not out of it.
	// Replaying a direction leaves captured frames out.
	Captured bool
	// Partial says the frame is the open end of a raw injection forced
	// onto the stream: Frame holds the bytes exactly as written (an lsp
	// header included), with no terminator, and the receiver reads them
	// joined to the bytes that follow in the direction. Replaying a
	// direction writes them as they are.
	Partial bool
	// Held says what became of a frame the tap held for the user (one of
	// the Held constants; "" for a frame that was not held), HeldUs how
	// long it was held, in microseconds, and Original, for an edited
	// frame (src edit), the bytes that came in (Frame holds what went
	// out).
	Held     string
	HeldUs   int64
	Original []byte
	// HTTP is the record's "http" object as written (raw JSON), in a
	// session the HTTP tap recorded; nil when absent.
	HTTP []byte

	// Live annotations: a tap's live stream adds them to the records it
	// sends subscribers; the file never has them.
	FileOffset int64 // where the record is in the session file; 0 when not said (the header is there)
	Gap        bool  // a note that says the stream catches up from the file at FileOffset

	// Event records.
	Kind    string // "" for a frame; EventStart, EventExit, EventGap, EventNote
	Code    *int   // exit: the exit status, nil when absent
	Signal  string // exit: the signal that killed the server
	Missing int64  // gap: how many frames are missing
	Text    string // note: the text
}

// IsFrame reports whether e is a frame record rather than an event record.
func (e *Event) IsFrame() bool { return e.Kind == "" }

// FrameRecord is one frame for Writer.WriteFrame.
type FrameRecord struct {
	T        int64              // microseconds since the header's Started
	Dir      classify.Direction // H2S, S2H or Err
	Src      string             // "" or SrcWire (not written), SrcInject, SrcEdit
	Frame    []byte             // the frame's bytes, exactly
	Header   []byte             // the LSP header block; nil writes none
	EOF      bool               // the frame ended its stream with no terminator
	Redacted bool               // a secret was masked in Frame
	Captured bool               // the frame was kept from its receiver (see Event)
	Partial  bool               // the open end of a forced raw injection (see Event)
	Held     string             // what became of a held frame (see Event); "" writes none
	HeldUs   int64              // how long it was held
	Original []byte             // an edited frame's bytes as they came in; nil writes none
	HTTP     *HTTPInfo          // in an HTTP session, what HTTP said of the frame; nil writes none

	// Derived fields, written for people who grep with jq; readers
	// ignore them and recompute with classify. Each is left out when
	// empty. ID is the id's raw JSON as on the wire; it is left out when
	// it is not one JSON value on one line.
	Kind   string
	ID     []byte
	Method string
}

// EventRecord is one event for Writer.WriteEvent. Fields that are zero
// are not written.
type EventRecord struct {
	T       int64              // microseconds since the header's Started
	Kind    string             // EventStart, EventExit, EventGap or EventNote
	Code    *int               // exit: the exit status
	Signal  string             // exit: the signal that killed the server
	Dir     classify.Direction // gap: the direction whose frames are missing
	Missing int64              // gap: how many frames are missing
	Text    string             // note: the text
}
