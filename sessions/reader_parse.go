package sessions

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// Keys of a record, as bits, to find duplicates and check the shape.
const (
	keyT = 1 << iota
	keyDir
	keyFrame
	keyFrameB64
	keyHeader
	keyHeaderB64
	keySrc
	keyEOF
	keyRedacted
	keyEvent
	keyCode
	keySignal
	keyMissing
	keyText
	keyCaptured
	keyOffset
	keyGap
	keyPartial
	keyHeld
	keyHeldUs
	keyOriginal
	keyOriginalB64
	keyHTTP

	keysFrame = keyFrame | keyFrameB64 | keyHeader | keyHeaderB64 | keyOriginal | keyOriginalB64
)

// parseRecord decodes line into r.ev and reports whether it is a record
// of the right shape. It decodes strings in place, so it changes line.
func (r *Reader) parseRecord(s []byte) bool {
	ev := &r.ev
	*ev = Event{Src: SrcWire}
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i = skipSpace(s, i+1)
	seen := 0
	if i < len(s) && s[i] == '}' {
		i++
	} else {
		for {
			if i >= len(s) || s[i] != '"' {
				return false
			}
			key, j, ok := unquote(s, i+1)
			if !ok {
				return false
			}
			i = skipSpace(s, j)
			if i >= len(s) || s[i] != ':' {
				return false
			}
			i = skipSpace(s, i+1)
			if i, ok = r.parseField(s, i, key, &seen); !ok {
				return false
			}
			i = skipSpace(s, i)
			if i >= len(s) {
				return false
			}
			if s[i] == '}' {
				i++
				break
			}
			if s[i] != ',' {
				return false
			}
			i = skipSpace(s, i+1)
		}
	}
	if skipSpace(s, i) != len(s) || seen&keyT == 0 {
		return false
	}
	if seen&keyEvent != 0 {
		return seen&keysFrame == 0
	}
	if seen&keyDir == 0 {
		return false
	}
	frames := seen & (keyFrame | keyFrameB64)
	headers := seen & (keyHeader | keyHeaderB64)
	return frames != 0 && frames != keyFrame|keyFrameB64 && headers != keyHeader|keyHeaderB64 && seen&(keyOriginal|keyOriginalB64) != keyOriginal|keyOriginalB64
}

// parseField reads the value of key at s[i] into r.ev. A null value is
// taken as the field being absent. It is long on purpose: one switch, a
// case a field of the format, each a line or two.
func (r *Reader) parseField(s []byte, i int, key []byte, seen *int) (next int, ok bool) {
	if hasLiteral(s, i, "null") {
		return i + 4, true
	}
	ev := &r.ev
	var bit int
	var v []byte
	switch string(key) {
	case "t":
		bit = keyT
		ev.T, i, ok = parseInt(s, i)
	case "dir":
		bit = keyDir
		if v, i, ok = parseString(s, i); ok {
			ev.Dir, ok = parseDir(v)
		}
	case "frame":
		bit = keyFrame
		ev.Frame, i, ok = parseString(s, i)
	case "frame_b64":
		bit = keyFrameB64
		if v, i, ok = parseString(s, i); ok {
			r.frameB64, ok = decodeBase64(r.frameB64, v)
			ev.Frame = r.frameB64
		}
	case "header":
		bit = keyHeader
		ev.Header, i, ok = parseString(s, i)
	case "header_b64":
		bit = keyHeaderB64
		if v, i, ok = parseString(s, i); ok {
			r.headerB64, ok = decodeBase64(r.headerB64, v)
			ev.Header = r.headerB64
		}
	case "src":
		bit = keySrc
		if v, i, ok = parseString(s, i); ok {
			ev.Src = intern(v, SrcWire, SrcInject, SrcEdit)
		}
	case "eof":
		bit = keyEOF
		ev.EOF, i, ok = parseBool(s, i)
	case "redacted":
		bit = keyRedacted
		ev.Redacted, i, ok = parseBool(s, i)
	case "offset":
		bit = keyOffset
		ev.FileOffset, i, ok = parseInt(s, i)
	case "gap":
		bit = keyGap
		ev.Gap, i, ok = parseBool(s, i)
	case "captured":
		bit = keyCaptured
		ev.Captured, i, ok = parseBool(s, i)
	case "partial":
		bit = keyPartial
		ev.Partial, i, ok = parseBool(s, i)
	case "held":
		bit = keyHeld
		if v, i, ok = parseString(s, i); ok {
			ev.Held = intern(v, HeldForwarded, HeldEdited, HeldDropped, HeldAnswered, HeldTimeout, HeldDetached, HeldOverflow, HeldWaited, HeldEnded)
		}
	case "held_us":
		bit = keyHeldUs
		ev.HeldUs, i, ok = parseInt(s, i)
	case "original":
		bit = keyOriginal
		ev.Original, i, ok = parseString(s, i)
	case "original_b64":
		bit = keyOriginalB64
		if v, i, ok = parseString(s, i); ok {
			r.origB64, ok = decodeBase64(r.origB64, v)
			ev.Original = r.origB64
		}
	case "http":
		bit = keyHTTP
		if i < len(s) && s[i] == '{' {
			var end int
			if end, ok = classify.SkipValue(s, i); ok {
				ev.HTTP, i = s[i:end:end], end
			}
		}
	case "event":
		bit = keyEvent
		if v, i, ok = parseString(s, i); ok {
			ev.Kind = intern(v, EventStart, EventExit, EventGap, EventNote)
			ok = ev.Kind != ""
		}
	case "code":
		bit = keyCode
		var n int64
		if n, i, ok = parseInt(s, i); ok {
			r.code = int(n)
			ev.Code = &r.code
			ok = int64(r.code) == n
		}
	case "signal":
		bit = keySignal
		if v, i, ok = parseString(s, i); ok {
			ev.Signal = string(v)
		}
	case "missing":
		bit = keyMissing
		ev.Missing, i, ok = parseInt(s, i)
		ok = ok && ev.Missing >= 0
	case "text":
		bit = keyText
		if v, i, ok = parseString(s, i); ok {
			ev.Text = string(v)
		}
	default: // derived fields and fields this version does not know
		return classify.SkipValue(s, i)
	}
	if !ok || *seen&bit != 0 {
		return 0, false
	}
	*seen |= bit
	return i, true
}

// parseString reads the JSON string at s[i], decoding it in place.
func parseString(s []byte, i int) (v []byte, next int, ok bool) {
	if i >= len(s) || s[i] != '"' {
		return nil, 0, false
	}
	return unquote(s, i+1)
}

func parseDir(v []byte) (classify.Direction, bool) {
	switch string(v) {
	case "h2s":
		return classify.H2S, true
	case "s2h":
		return classify.S2H, true
	case "err":
		return classify.Err, true
	}
	return 0, false
}

// intern returns the one of known that equals v, without allocating, or
// else a copy of v.
func intern(v []byte, known ...string) string {
	for _, k := range known {
		if string(v) == k {
			return k
		}
	}
	return string(v)
}

// decodeBase64 decodes standard base64 into buf, reusing its memory
// unless it is too small, or much too large to keep.
func decodeBase64(buf, src []byte) ([]byte, bool) {
	n := base64.StdEncoding.DecodedLen(len(src))
	if cap(buf) < n || buf == nil || cap(buf) > MaxKeptLine && n <= MaxKeptLine {
		buf = make([]byte, 0, max(n, 64))
	}
	n, err := base64.StdEncoding.Decode(buf[:n], src)
	return buf[:n], err == nil
}

// headerLine is the header's JSON, read with encoding/json (once a file).
// parseHeader reads line as a header, which it is when it is a JSON
// object whose "rpctap" is "session". A field of the wrong type is left at
// its zero value and named in faults, as is a format version other than
// Version.
func parseHeader(line []byte) (h Header, faults []string, ok bool) {
	if !bytes.Contains(line, []byte(`"rpctap"`)) {
		return Header{}, nil, false
	}
	var fields map[string]json.RawMessage
	var tag string
	if err := json.Unmarshal(line, &fields); err != nil || json.Unmarshal(fields["rpctap"], &tag) != nil || tag != "session" {
		return Header{}, nil, false
	}
	field := func(name string, dst any, want string) bool {
		raw, ok := fields[name]
		if !ok {
			return false
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			faults = append(faults, fmt.Sprintf("the header's %q is %s; it must be %s", name, jsonKind(raw), want))
			return false
		}
		return true
	}
	if !field("version", &h.Version, "an integer") {
		if _, ok := fields["version"]; !ok {
			faults = append(faults, fmt.Sprintf("the header has no format version; this rpctap reads version %d", Version))
		}
	} else if h.Version < 1 {
		faults = append(faults, fmt.Sprintf("the header says format version %d; this rpctap reads version %d, and may misread the file", h.Version, Version))
	}
	field("id", &h.ID, "a string")
	field("argv", &h.Argv, "an array of strings")
	field("name", &h.Name, "a string")
	if field("framing", &h.Framing, "a string") && h.Framing != "" {
		if _, err := classify.ParseFraming(h.Framing); err != nil {
			faults = append(faults, "the header's framing is not one rpctap knows (ndjson, lsp or auto); the file is read as ndjson")
			h.Framing = ""
		}
	}
	if field("profile", &h.Profile, "a string") && h.Profile != "" {
		if _, err := classify.ParseProfile(h.Profile); err != nil {
			faults = append(faults, "the header's profile is not one rpctap knows (auto, jsonrpc, mcp or lsp); the file is judged as auto")
			h.Profile = ""
		}
	}
	var started string
	if field("started", &started, "a string") {
		if t, err := time.Parse(time.RFC3339Nano, started); err == nil {
			h.Started = t.UTC()
		} else {
			faults = append(faults, `the header's "started" is not an RFC 3339 time; times are shown from the start of the file`)
		}
	}
	var limit int64
	if field("parse_limit", &limit, "a positive integer") {
		if limit > 0 && limit <= math.MaxInt32 {
			h.ParseLimit = int(limit)
		} else {
			faults = append(faults, `the header's "parse_limit" must be a positive integer; frames are judged with the default limit`)
		}
	}
	var timeoutMs int64
	if field("timeout_ms", &timeoutMs, "a positive integer") {
		if timeoutMs > 0 && timeoutMs <= math.MaxInt64/int64(time.Millisecond) {
			h.Timeout = time.Duration(timeoutMs) * time.Millisecond
		} else {
			faults = append(faults, `the header's "timeout_ms" must be a positive integer; requests are judged with the default timeout`)
		}
	}
	field("redact", &h.Redact, "an array of strings")
	field("transport", &h.Transport, "a string")
	return h, faults, true
}

// jsonKind names the kind of a JSON value ("a string", "null").
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
