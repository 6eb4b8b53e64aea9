package inject

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/rpctap/rpctap/classify"
)

// Options say where frames go and how their receiver reads them.
type Options struct {
	// Dir is the direction: H2S to the server, S2H to the host.
	Dir classify.Direction
	// Framing is the stream's framing (auto is read as ndjson).
	Framing classify.Framing
	// Profile judges the frames (auto is read as jsonrpc); a live view
	// passes the tracker's.
	Profile classify.Profile
	// IDs, when set, tells which ids collide with requests in flight.
	IDs *IDs
	// Tools, when set, judges the arguments of a tools/call sent to the
	// server against the tool's inputSchema as the session listed it
	// (a live view passes its index's).
	Tools func(name string, arguments []byte) (classify.SchemaProblem, bool)
}

// A Preview says what the receiver will read when frames are sent.
type Preview struct {
	// Wire is every byte that goes on the stream.
	Wire []byte
	// Frames are the frames the receiver reads in Wire, split by the
	// stream's framing (a line feed inside a body makes two frames on
	// ndjson); the last is the open frame when Partial is set.
	Frames []Read
	// Partial says why the bytes would leave the stream inside a frame
	// (the relay's next frame would be read as part of it); "" when they
	// end on a frame boundary. A partial frame is sent only when forced.
	Partial string
	// Warning is one line for a frame a strict receiver must refuse, or
	// for a partial frame; "" otherwise.
	Warning string
	// Collisions names the frames whose request id equals that of a
	// request in flight from the side the frame impersonates.
	Collisions []string
	// FirstError is the first finding of error severity about a frame
	// read, or one of its batch's members: the receiver reads that frame
	// as broken (a null id under MCP). Nil when no frame has one.
	FirstError *ErrorAt
	// Placeholder is where the first of the frames given that still
	// holds a template's StringPlaceholder holds it; nil when none does.
	Placeholder *PlaceholderAt
	// BadArguments is the first tools/call read whose arguments break
	// its tool's inputSchema (Options.Tools); nil when none does.
	BadArguments *SchemaAt
}

// A SchemaAt is a tool rule's problem and the frame it is of.
type SchemaAt struct {
	Frame   int // the frame's index in Preview.Frames
	Problem classify.SchemaProblem
}

// An ErrorAt is a finding of error severity and the frame it is of.
type ErrorAt struct {
	Frame   int // the frame's index in Preview.Frames
	Finding classify.Finding
}

// A PlaceholderAt is where a frame still holds StringPlaceholder.
type PlaceholderAt struct {
	Frame int    // the frame's index in the frames given
	Path  string // where in its JSON, as in params.arguments.message ("the top" for the whole text)
}

// A Read is one frame as its receiver reads it.
type Read struct {
	// Info is the frame's framing: header, body and terminator lengths.
	Info classify.FrameInfo
	// Message is what classify reads (kind, findings, strict answer).
	Message classify.Message
	// Answer is the error a strict receiver owes, rendered, or nil.
	Answer []byte
	// Open says the frame is not ended (see Preview.Partial).
	Open bool
}

// Framed says how the frame is framed on the wire, for the preview: "line
// (newline)", "line with no newline", "Content-Length: N", ...
func (r Read) Framed() string {
	switch {
	case r.Info.Framing == classify.FramingLSP && r.Info.Bad != "":
		return "bad header: " + r.Info.Bad
	case r.Info.Framing == classify.FramingLSP:
		return "Content-Length: " + strconv.FormatInt(r.Info.BodyLen, 10)
	case r.Open || r.Info.TermLen == 0:
		return "line with no newline"
	}
	return "line, ended by a newline"
}

// Receiver names who reads frames going in dir.
func Receiver(dir classify.Direction) string {
	if dir == classify.S2H {
		return "host"
	}
	return "server"
}

// PreviewFrames builds the wire bytes of frames and reads them as their
// receiver will.
func PreviewFrames(frames []Frame, o Options) Preview {
	framing := o.Framing
	if framing != classify.FramingLSP {
		framing = classify.FramingNDJSON
	}
	p := Preview{Wire: Wire(frames, framing)}
	pieces, partial := SplitWire(p.Wire, framing)
	for _, w := range pieces {
		p.Frames = append(p.Frames, p.read(w.Bytes, w.Info, w.Open, o))
	}
	p.Partial = partial
	for i, r := range p.Frames {
		if r.Answer != nil && p.Warning == "" {
			p.Warning = fmt.Sprintf("A strict %s must refuse %s: it answers %s.", Receiver(o.Dir), FrameName(i, len(p.Frames)), oneLine(r.Message.Answer))
		}
	}
	if p.Partial != "" {
		p.Warning = "Refused unless forced: " + p.Partial
	}
	for i := range p.Frames {
		if f, ok := firstError(&p.Frames[i].Message); ok {
			p.FirstError = &ErrorAt{Frame: i, Finding: f}
			break
		}
	}
	for i := range p.Frames {
		if pb, ok := p.Frames[i].badArguments(o); ok {
			p.BadArguments = &SchemaAt{Frame: i, Problem: pb}
			break
		}
	}
	for i, f := range frames {
		if path, ok := placeholderPath(f.Body); ok {
			p.Placeholder = &PlaceholderAt{Frame: i, Path: path}
			break
		}
	}
	return p
}

// firstError is the first finding of error severity about m or one of
// its batch members.
func firstError(m *classify.Message) (classify.Finding, bool) {
	for _, f := range m.Findings {
		if f.Severity == classify.Error {
			return f, true
		}
	}
	for j := range m.Members {
		if f, ok := firstError(&m.Members[j]); ok {
			return f, true
		}
	}
	return classify.Finding{}, false
}

// placeholderPath finds the first string in a JSON text that is
// StringPlaceholder, and says where, as in params.arguments.message.
func placeholderPath(body []byte) (string, bool) {
	if !bytes.Contains(body, []byte(StringPlaceholder)) {
		return "", false
	}
	return findPlaceholder(body, "")
}

// findPlaceholder looks for StringPlaceholder in the JSON value v, at
// path at, members in their order.
func findPlaceholder(v []byte, at string) (string, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "", false
	}
	switch v[0] {
	case '"':
		if string(v) == StringPlaceholder {
			if at == "" {
				at = "the top"
			}
			return at, true
		}
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			return "", false
		}
		for i, it := range items {
			if p, ok := findPlaceholder(it, fmt.Sprintf("%s[%d]", at, i)); ok {
				return p, true
			}
		}
	case '{':
		d := json.NewDecoder(bytes.NewReader(v))
		if _, err := d.Token(); err != nil {
			return "", false
		}
		for d.More() {
			k, err := d.Token()
			name, ok := k.(string)
			var member json.RawMessage
			if err != nil || !ok || d.Decode(&member) != nil {
				return "", false
			}
			name = classify.EscapeString(name, 40)
			if at != "" {
				name = at + "." + name
			}
			if p, ok := findPlaceholder(member, name); ok {
				return p, true
			}
		}
	}
	return "", false
}

// A Piece is one frame of raw bytes as their receiver reads them: the
// frame's bytes (header, body and terminator) and its framing; for the
// open frame, the framing as it would end if nothing more came. Body and
// Header are the frame's.
type Piece struct {
	classify.Frame
	Open bool // the bytes end inside this frame (see SplitWire)
}

// SplitWire splits bytes written raw onto a stream of the framing given
// (auto is read as ndjson) into the frames its receiver reads. partial
// says why the bytes would leave the stream inside a frame, so that the
// next frame the tap relays would be read as part of it (the last piece
// is then that open frame); it is "" when they end on a frame boundary.
// The tap refuses a partial injection unless it is forced.
func SplitWire(data []byte, framing classify.Framing) (pieces []Piece, partial string) {
	if framing != classify.FramingLSP {
		framing = classify.FramingNDJSON
	}
	spans, open := classify.SplitOpen(data, framing)
	for i, sp := range spans {
		end := sp.Start + sp.Size
		if open && i == len(spans)-1 {
			end = int64(len(data))
		}
		pieces = append(pieces, Piece{Frame: classify.Frame{Bytes: data[sp.Start:end], Info: sp.FrameInfo}})
	}
	if open {
		last := &pieces[len(pieces)-1]
		last.Open = true
		partial = partialReason(framing, last.Info, len(last.Bytes))
	}
	return pieces, partial
}

func (p *Preview) read(frame []byte, info classify.FrameInfo, open bool, o Options) Read {
	body := info.Body(frame)
	r := Read{Info: info, Open: open, Message: classify.ClassifyFramed(body, info, o.Dir, o.Profile)}
	if r.Message.Answer != nil {
		r.Answer = r.Message.Answer.JSON()
	}
	if o.IDs != nil {
		p.collisions(&r.Message, len(p.Frames), o)
	}
	return r
}

// badArguments judges r, when it is a tools/call to the server, by
// o.Tools (a batch's calls too).
func (r *Read) badArguments(o Options) (classify.SchemaProblem, bool) {
	if o.Tools == nil || o.Dir != classify.H2S {
		return classify.SchemaProblem{}, false
	}
	for _, m := range append([]classify.Message{r.Message}, r.Message.Members...) {
		if m.Kind != classify.KindRequest || !m.MethodIs("tools/call") {
			continue
		}
		if name, ok := classify.StringValue(classify.Member(m.Params(), "name")); ok {
			if pb, bad := o.Tools(name, classify.Member(m.Params(), "arguments")); bad {
				return pb, true
			}
		}
	}
	return classify.SchemaProblem{}, false
}

func (p *Preview) collisions(m *classify.Message, i int, o Options) {
	for j := range m.Members {
		p.collisions(&m.Members[j], i, o)
	}
	if m.Kind == classify.KindRequest && o.IDs.Collides(o.Dir, m.ID().Raw) {
		p.Collisions = append(p.Collisions, fmt.Sprintf("frame %d: the id %s is that of a request in flight from the %s; the answers cannot be told apart",
			i+1, classify.Escape(m.ID().Raw, 40), Sender(o.Dir)))
	}
}

// Sender names who sends frames going in dir, the side an injection in
// dir impersonates.
func Sender(dir classify.Direction) string {
	if dir == classify.S2H {
		return "server"
	}
	return "host"
}

func partialReason(framing classify.Framing, info classify.FrameInfo, n int) string {
	if framing == classify.FramingLSP {
		why := info.Bad
		if why == "" {
			why = "the frame is not complete."
		}
		return fmt.Sprintf("the last %d bytes do not end an lsp frame (%s), so the next frame the tap relays would be read as part of it; complete the header and body, or force it.",
			n, strings.TrimSuffix(strings.ToLower(why[:1])+why[1:], "."))
	}
	return fmt.Sprintf("the last %d bytes have no line feed after them, so the next frame the tap relays would be read as part of this line; drop the \\c, end it with \\x0a, or force it.", n)
}

// FrameName names frame i of n in a warning: "this frame" when it is
// the only one, else "frame 2".
func FrameName(i, n int) string {
	if n == 1 {
		return "this frame"
	}
	return "frame " + strconv.Itoa(i+1)
}

// oneLine renders a strict answer as code and message, escaped, cut to
// fit one line.
func oneLine(a *classify.Answer) string {
	if a.Batch != nil {
		return fmt.Sprintf("an array of %d errors", len(a.Batch))
	}
	return strconv.Itoa(a.Code) + " " + classify.EscapeString(a.Message, 120)
}

// Kinds is a short summary of what the receiver reads: "request",
// "2 frames: request, not-json".
func (p Preview) Kinds() string {
	var k []string
	for _, r := range p.Frames {
		k = append(k, r.Message.Kind.String())
	}
	if len(k) == 1 {
		return k[0]
	}
	return strconv.Itoa(len(k)) + " frames: " + strings.Join(k, ", ")
}
