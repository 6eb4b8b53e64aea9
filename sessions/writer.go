package sessions

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
)

// startedLayout is how a header's start time is written: RFC 3339 in UTC
// with microseconds.
const startedLayout = "2006-01-02T15:04:05.000000Z"

// A Writer writes a session file: the header line, then one line per
// record. Each line reaches the underlying writer in one Write call that
// ends in "\n", so the Writer keeps nothing back; wrap a file in a
// bufio.Writer for throughput, and flush it yourself.
//
// WriteFrame neither reflects nor allocates: it appends into a buffer the
// Writer reuses.
//
// When a Write fails part-way (a full disk), the next record starts with a
// "\n", so that readers lose only the torn line, which they skip and count.
//
// A Writer is not safe for concurrent use: one goroutine writes a session,
// or the callers serialise their calls.
type Writer struct {
	w io.Writer
	// buf holds the line being written after a reserved first byte, which
	// is a "\n" sent only when the last Write was cut short (torn), so that
	// the next record starts on a line of its own.
	buf  []byte
	torn bool
}

// NewWriter writes h as the header line of a session file on w. A zero
// h.Version means Version; empty Framing and Profile are written as their
// defaults. h.Started must be set. Strings that are not valid UTF-8 (an
// argument, say) are written with U+FFFD in place of the bad bytes.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	if h.Version == 0 {
		h.Version = Version
	}
	if h.Version != Version {
		return nil, fmt.Errorf("session header asks for format version %d, but this rpctap writes version %d", h.Version, Version)
	}
	if h.Started.IsZero() {
		return nil, errors.New("session header has no start time: set Header.Started")
	}
	sw := &Writer{w: w, buf: make([]byte, 1, 4096)}
	b := append(sw.buf[:1], `{"rpctap":"session","version":`...)
	b = strconv.AppendInt(b, int64(h.Version), 10)
	b = append(b, `,"id":`...)
	b = classify.AppendString(b, h.ID)
	b = append(b, `,"started":"`...)
	b = h.Started.UTC().AppendFormat(b, startedLayout)
	b = append(b, `","argv":[`...)
	for i, arg := range h.Argv {
		if i > 0 {
			b = append(b, ',')
		}
		b = classify.AppendString(b, arg)
	}
	b = append(b, `],"name":`...)
	b = classify.AppendString(b, h.Name)
	b = append(b, `,"framing":`...)
	b = classify.AppendString(b, h.FramingOrDefault())
	b = append(b, `,"profile":`...)
	b = classify.AppendString(b, h.ProfileOrDefault())
	if ms := h.Timeout.Milliseconds(); ms > 0 {
		b = append(b, `,"timeout_ms":`...)
		b = strconv.AppendInt(b, ms, 10)
	}
	if h.ParseLimit > 0 {
		b = append(b, `,"parse_limit":`...)
		b = strconv.AppendInt(b, int64(h.ParseLimit), 10)
	}
	if len(h.Redact) > 0 {
		b = append(b, `,"redact":[`...)
		for i, name := range h.Redact {
			if i > 0 {
				b = append(b, ',')
			}
			b = classify.AppendString(b, name)
		}
		b = append(b, ']')
	}
	if h.Transport != "" {
		b = append(b, `,"transport":`...)
		b = classify.AppendString(b, h.Transport)
	}
	b = append(b, "}\n"...)
	if err := sw.writeLine(b); err != nil {
		return nil, err
	}
	return sw, nil
}

// WriteFrame writes one frame record. The frame's bytes go in "frame" as
// a JSON string that decodes to exactly f.Frame, or in "frame_b64" when
// they are not valid UTF-8; the same for f.Header.
func (w *Writer) WriteFrame(f FrameRecord) error {
	b, err := AppendFrameRecord(w.buf[:1], f)
	if err != nil {
		return err
	}
	return w.writeLine(b)
}

// WriteEncoded writes a record that AppendFrameRecord encoded into b[1:];
// b[0] is spare room the writer may use (for the newline that ends a torn
// line). Encoding records apart from writing them lets a recorder encode
// in parallel and write in order.
func (w *Writer) WriteEncoded(b []byte) error {
	if len(b) < 2 || b[len(b)-1] != '\n' {
		return errors.New("an encoded record must end with a newline and come after one byte of spare room")
	}
	buf := w.buf
	err := w.writeLine(b)
	w.buf = buf // b belongs to the caller
	return err
}

// AppendFrameRecord appends f's record line (ending in a newline) to b, as
// WriteFrame writes it.
func AppendFrameRecord(b []byte, f FrameRecord) ([]byte, error) {
	b, err := appendFrameFields(b, f)
	if err != nil {
		return b, err
	}
	b = appendBytes(b, "frame", f.Frame)
	return append(b, "}\n"...), nil
}

// appendFrameFields appends a frame record's opening and every field but
// the frame's bytes (FrameStream streams those).
func appendFrameFields(b []byte, f FrameRecord) ([]byte, error) {
	dir, ok := dirName(f.Dir)
	if !ok {
		return b, fmt.Errorf("frame record has direction %d: use classify.H2S, S2H or Err", f.Dir)
	}
	b = append(b, `{"t":`...)
	b = strconv.AppendInt(b, f.T, 10)
	b = append(b, `,"dir":"`...)
	b = append(b, dir...)
	b = append(b, '"')
	switch f.Src {
	case "", SrcWire:
	case SrcInject, SrcEdit:
		b = append(b, `,"src":"`...)
		b = append(b, f.Src...)
		b = append(b, '"')
	default:
		return b, fmt.Errorf("frame record has source %q: use %q, %q or %q", f.Src, SrcWire, SrcInject, SrcEdit)
	}
	if f.EOF {
		b = append(b, `,"eof":true`...)
	}
	if f.Redacted {
		b = append(b, `,"redacted":true`...)
	}
	if f.Partial {
		b = append(b, `,"partial":true`...)
	}
	if f.Captured {
		b = append(b, `,"captured":true`...)
	}
	if f.Held != "" {
		b = append(b, `,"held":`...)
		b = classify.AppendString(b, f.Held)
		b = append(b, `,"held_us":`...)
		b = strconv.AppendInt(b, f.HeldUs, 10)
	}
	if f.Original != nil {
		b = appendBytes(b, "original", f.Original)
	}
	if f.Kind != "" {
		b = append(b, `,"kind":`...)
		b = classify.AppendString(b, f.Kind)
	}
	if len(f.ID) > 0 && isOneLineJSON(f.ID) {
		b = append(b, `,"id":`...)
		b = append(b, f.ID...)
	}
	if f.Method != "" {
		b = append(b, `,"method":`...)
		b = classify.AppendString(b, f.Method)
	}
	if f.Header != nil {
		b = appendBytes(b, "header", f.Header)
	}
	if f.HTTP != nil {
		b = appendHTTP(b, f.HTTP)
	}
	return b, nil
}

// WriteEvent writes one event record. Text and Signal that are not valid
// UTF-8 are written with U+FFFD in place of the bad bytes.
func (w *Writer) WriteEvent(e EventRecord) error {
	switch e.Kind {
	case EventStart, EventExit, EventGap, EventNote:
	default:
		return fmt.Errorf("event record has kind %q: use %q, %q, %q or %q", e.Kind, EventStart, EventExit, EventGap, EventNote)
	}
	b := append(w.buf[:1], `{"t":`...)
	b = strconv.AppendInt(b, e.T, 10)
	b = append(b, `,"event":"`...)
	b = append(b, e.Kind...)
	b = append(b, '"')
	if e.Code != nil {
		b = append(b, `,"code":`...)
		b = strconv.AppendInt(b, int64(*e.Code), 10)
	}
	if e.Signal != "" {
		b = append(b, `,"signal":`...)
		b = classify.AppendString(b, e.Signal)
	}
	if e.Dir != 0 {
		dir, ok := dirName(e.Dir)
		if !ok {
			return fmt.Errorf("event record has direction %d: use classify.H2S, S2H or Err", e.Dir)
		}
		b = append(b, `,"dir":"`...)
		b = append(b, dir...)
		b = append(b, '"')
	}
	if e.Missing < 0 {
		return fmt.Errorf("gap record has %d missing frames: the count cannot be negative", e.Missing)
	}
	if e.Missing != 0 || e.Kind == EventGap {
		b = append(b, `,"missing":`...)
		b = strconv.AppendInt(b, e.Missing, 10)
	}
	if e.Text != "" {
		b = append(b, `,"text":`...)
		b = classify.AppendString(b, e.Text)
	}
	b = append(b, "}\n"...)
	return w.writeLine(b)
}

// writeLine sends b[1:] (a whole line), prefixed by the reserved "\n" in
// b[0] when the last Write left a line unfinished.
func (w *Writer) writeLine(b []byte) error { return w.writePart(b, true) }

// appendBytes appends `,"name":"…"` when data is valid UTF-8 and
// `,"name_b64":"…"` otherwise.
func appendBytes(b []byte, name string, data []byte) []byte {
	mark := len(b)
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	b, ok := classify.AppendQuoted(b, data, true)
	if ok {
		return b
	}
	b = append(b[:mark], ',', '"')
	b = append(b, name...)
	b = append(b, `_b64":"`...)
	b = base64.StdEncoding.AppendEncode(b, data)
	return append(b, '"')
}

// isOneLineJSON reports whether raw is one JSON value, valid UTF-8, with
// no line break and nothing around it.
func isOneLineJSON(raw []byte) bool {
	end, ok := classify.SkipValue(raw, 0)
	return ok && end == len(raw) && utf8.Valid(raw) &&
		bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0
}

func dirName(d classify.Direction) (string, bool) {
	switch d {
	case classify.H2S:
		return "h2s", true
	case classify.S2H:
		return "s2h", true
	case classify.Err:
		return "err", true
	}
	return "", false
}
