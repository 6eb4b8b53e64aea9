package inject

import (
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

// ParseRaw reads the raw escape syntax: a line per frame, byte escapes,
// JSON's own escapes passed through, \c for a frame with no framing, and
// an error naming the line and column of a bad escape.
func TestParseRawReadsTheEscapeSyntax(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []Frame
		err        string
	}{
		{"one frame", `{"jsonrpc":"2.0","method":"ping","id":1}`, []Frame{{Body: []byte(`{"jsonrpc":"2.0","method":"ping","id":1}`)}}, ""},
		{"a line per frame, empty lines and the editor's last newline skipped", "1\n\n2\n", []Frame{{Body: []byte("1")}, {Body: []byte("2")}}, ""},
		{"byte escapes", `a\x00b\x1b\xffc\x0a`, []Frame{{Body: []byte("a\x00b\x1b\xffc\n")}}, ""},
		{"hex in either case", `\xAB\xab`, []Frame{{Body: []byte{0xab, 0xab}}}, ""},
		{"JSON escapes pass through", `{"m":"a\"b\\c\n\u00e9"}`, []Frame{{Body: []byte(`{"m":"a\"b\\c\n\u00e9"}`)}}, ""},
		{"an escaped backslash before x is JSON's", `"\\x41"`, []Frame{{Body: []byte(`"\\x41"`)}}, ""},
		{"a backslash byte then x", `\x5cx41`, []Frame{{Body: []byte(`\x41`)}}, ""},
		{"no framing", "{\"a\":1\\c\n2", []Frame{{Body: []byte(`{"a":1`), Raw: true}, {Body: []byte("2")}}, ""},
		{"a trailing backslash is kept", `ab\`, []Frame{{Body: []byte(`ab\`)}}, ""},
		{"pretty-printed JSON is one frame", "{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"ping\"\n}\n", []Frame{{Body: []byte(`{"jsonrpc":"2.0","method":"ping"}`)}}, ""},
		{"two values over lines are two frames", "{}\n[]\n", []Frame{{Body: []byte(`{}`)}, {Body: []byte(`[]`)}}, ""},
		{"a short byte escape", `ab\x4`, nil, `line 1: \x at column 3 needs two hex digits`},
		{"a bad byte escape", "ok\n\\xzz", nil, `line 2: \x at column 1 needs two hex digits`},
		{"no framing in the middle", `a\cb`, nil, `\c at column 2 may only end a line`},
	} {
		got, err := ParseRaw(c.text)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %d frames %v, want %d", c.name, len(got), got, len(c.want))
			continue
		}
		for i := range got {
			if string(got[i].Body) != string(c.want[i].Body) || got[i].Raw != c.want[i].Raw {
				t.Errorf("%s: frame %d is %q raw %v, want %q raw %v", c.name, i, got[i].Body, got[i].Raw, c.want[i].Body, c.want[i].Raw)
			}
		}
	}
}

// ParseRawLines reads the same syntax with no exception for JSON written
// over several lines: each of its lines is a frame, sent as it is.
func TestParseRawLinesKeepsEachLineOfPrettyPrintedJSON(t *testing.T) {
	got, err := ParseRawLines("{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"ping\"\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"{", `  "jsonrpc": "2.0",`, `  "method": "ping"`, "}"}
	if len(got) != len(want) {
		t.Fatalf("%d frames %v, want %q", len(got), got, want)
	}
	for i, f := range got {
		if string(f.Body) != want[i] || f.Raw {
			t.Errorf("frame %d is %q raw %v, want %q with its framing", i, f.Body, f.Raw, want[i])
		}
	}
	if _, err := ParseRawLines(`ab\x4`); err == nil || !strings.Contains(err.Error(), `line 1: \x at column 3 needs two hex digits`) {
		t.Errorf("a short byte escape: %v", err)
	}
}

// The preview reads the frames as their receiver will: kind, findings,
// strict answer, framing on the wire, a one-line warning for frames a
// strict peer refuses, partial frames.
func TestPreviewReadsFramesAsTheReceiverWill(t *testing.T) {
	for _, c := range []struct {
		name    string
		text    string
		o       Options
		wire    string
		kinds   string
		framed  string
		warning string
		partial bool
	}{
		{name: "a request on ndjson", text: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, o: Options{Dir: classify.H2S},
			wire: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n", kinds: "request", framed: "line, ended by a newline"},
		{name: "the same on lsp", text: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, o: Options{Dir: classify.H2S, Framing: classify.FramingLSP},
			wire: "Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", kinds: "request", framed: "Content-Length: 40"},
		{name: "a strict server refuses an object id", text: `{"jsonrpc":"2.0","id":{},"method":"ping"}`, o: Options{Dir: classify.H2S},
			kinds: "invalid", warning: "A strict server must refuse this frame: it answers -32600 Invalid Request"},
		{name: "a host refuses an empty batch", text: `[]`, o: Options{Dir: classify.S2H},
			kinds: "invalid", warning: "A strict host must refuse this frame: it answers -32600"},
		{name: "a host ignores a line that is not JSON", text: `hello`, o: Options{Dir: classify.S2H}, kinds: "not-json"},
		{name: "the second of two frames", text: "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\nnope", o: Options{Dir: classify.H2S},
			kinds: "2 frames: notification, not-json", warning: "must refuse frame 2: it answers -32700 Parse error"},
		{name: "a line feed byte makes two frames on ndjson", text: `1\x0a2`, o: Options{Dir: classify.H2S}, wire: "1\n2\n", kinds: "2 frames: non-object, non-object",
			warning: "must refuse frame 1: it answers -32600"},
		{name: "no final newline is partial", text: `{"jsonrpc":"2.0"\c`, o: Options{Dir: classify.H2S},
			kinds: "not-json", framed: "line with no newline", warning: "Refused unless forced: the last 16 bytes have no line feed", partial: true},
		{name: "a raw frame that ends its line is whole", text: `1\x0a\c`, o: Options{Dir: classify.H2S}, wire: "1\n", kinds: "non-object", warning: "must refuse this frame"},
		{name: "a body shorter than its Content-Length is partial", text: `Content-Length: 10\x0d\x0a\x0d\x0a{}\c`, o: Options{Dir: classify.H2S, Framing: classify.FramingLSP},
			kinds: "not-json", warning: "Refused unless forced: the last 24 bytes do not end an lsp frame", partial: true},
		{name: "a raw whole lsp frame", text: `Content-Length: 2\x0d\x0a\x0d\x0a{}\c`, o: Options{Dir: classify.H2S, Framing: classify.FramingLSP}, kinds: "stray", framed: "Content-Length: 2",
			warning: "A strict server must refuse"},
	} {
		frames, err := ParseRaw(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p := PreviewFrames(frames, c.o)
		if c.wire != "" && string(p.Wire) != c.wire {
			t.Errorf("%s: wire %q, want %q", c.name, p.Wire, c.wire)
		}
		if p.Kinds() != c.kinds {
			t.Errorf("%s: kinds %q, want %q", c.name, p.Kinds(), c.kinds)
		}
		if c.framed != "" && p.Frames[0].Framed() != c.framed {
			t.Errorf("%s: framed %q, want %q", c.name, p.Frames[0].Framed(), c.framed)
		}
		if (c.warning == "") != (p.Warning == "") || !strings.Contains(p.Warning, c.warning) {
			t.Errorf("%s: warning %q, want %q", c.name, p.Warning, c.warning)
		}
		if strings.Contains(p.Warning, "\n") {
			t.Errorf("%s: the warning is more than one line: %q", c.name, p.Warning)
		}
		if (p.Partial != "") != c.partial {
			t.Errorf("%s: partial %q, want %v", c.name, p.Partial, c.partial)
		}
	}
}

func TestPreviewUsesTheProfileAndShowsTheStrictAnswer(t *testing.T) {
	frames := []Frame{{Body: []byte(`{"jsonrpc":"2.0","id":{},"method":"ping"}`)}}
	mcp := PreviewFrames(frames, Options{Dir: classify.H2S, Profile: classify.MCP})
	plain := PreviewFrames(frames, Options{Dir: classify.H2S, Profile: classify.JSONRPC})
	if strings.Contains(string(mcp.Frames[0].Answer), `"id"`) || !strings.Contains(string(plain.Frames[0].Answer), `"id":null`) {
		t.Errorf("MCP answers with no id, JSON-RPC with a null one: %s / %s", mcp.Frames[0].Answer, plain.Frames[0].Answer)
	}
	if !mcp.Frames[0].Message.Has(classify.CodeBadID) {
		t.Errorf("findings: %v", mcp.Frames[0].Message.Findings)
	}
}

// The preview names the first frame its receiver reads as broken, with
// the finding (a batch member's too, and counted in the frames read: a
// line feed byte makes two), and the first frame given that still holds
// a template's placeholder, with where; a string that only contains it is
// the user's text.
func TestPreviewSaysTheFirstErrorAndWhereAPlaceholderIsLeft(t *testing.T) {
	for _, c := range []struct {
		text        string
		profile     classify.Profile
		err         *ErrorAt // its finding's code and frame only
		placeholder *PlaceholderAt
	}{
		{text: `{"jsonrpc":"2.0","id":null,"method":"ping"}`, profile: classify.MCP, err: &ErrorAt{Frame: 0, Finding: classify.Finding{Code: classify.CodeNullID}}},
		{text: `{"jsonrpc":"2.0","method":"a"}` + "\n" + `[{"jsonrpc":"2.0","id":1,"method":"b"},{"jsonrpc":"2.0","id":{},"method":"c"}]`, profile: classify.JSONRPC,
			err: &ErrorAt{Frame: 1, Finding: classify.Finding{Code: classify.CodeBadID}}},
		{text: `{"jsonrpc":"2.0","method":"a"}\x0a{"jsonrpc":"2.0","id":null,"method":"b"}`, profile: classify.MCP, err: &ErrorAt{Frame: 1, Finding: classify.Finding{Code: classify.CodeNullID}}},
		{text: `{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo","arguments":{"times":0,"message":"<string>"}}}`, profile: classify.MCP,
			placeholder: &PlaceholderAt{Frame: 0, Path: "params.arguments.message"}},
		{text: `{"jsonrpc":"2.0","method":"a"}` + "\n" + `{"jsonrpc":"2.0","id":"x","method":"b","params":{"items":[1,"<string>"],"later":"<string>"}}`, profile: classify.MCP,
			placeholder: &PlaceholderAt{Frame: 1, Path: "params.items[1]"}},
		{text: `"<string>"`, profile: classify.JSONRPC, err: &ErrorAt{Frame: 0, Finding: classify.Finding{Code: classify.CodeNonObject}}, placeholder: &PlaceholderAt{Frame: 0, Path: "the top"}},
		{text: `{"jsonrpc":"2.0","method":"a","params":{"a\u001bb":"<string>"}}`, profile: classify.MCP, placeholder: &PlaceholderAt{Frame: 0, Path: `params.a\x1bb`}},
		{text: `{"jsonrpc":"2.0","id":"rpctap-1","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi <string>"}}}`, profile: classify.MCP},
	} {
		frames, err := ParseRaw(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		p := PreviewFrames(frames, Options{Dir: classify.H2S, Profile: c.profile})
		switch {
		case (p.FirstError == nil) != (c.err == nil):
			t.Errorf("%s: first error %+v, want %+v", c.text, p.FirstError, c.err)
		case c.err != nil && (p.FirstError.Frame != c.err.Frame || p.FirstError.Finding.Code != c.err.Finding.Code || p.FirstError.Finding.Severity != classify.Error):
			t.Errorf("%s: first error %+v, want %s in frame %d", c.text, p.FirstError, c.err.Finding.Code, c.err.Frame)
		}
		if (p.Placeholder == nil) != (c.placeholder == nil) || c.placeholder != nil && *p.Placeholder != *c.placeholder {
			t.Errorf("%s: placeholder at %+v, want %+v", c.text, p.Placeholder, c.placeholder)
		}
	}
}

// The ids rpctap gives injected requests never collide with the ids of the
// side they impersonate, and are never given twice; a typed id that is in
// flight from that side is a collision the preview names.
func TestIDsNeverCollideWithTheImpersonatedSide(t *testing.T) {
	ids := NewIDs()
	see := func(dir classify.Direction, frame string) {
		m := classify.Classify([]byte(frame), dir, classify.JSONRPC)
		ids.See(&m)
	}
	if got := ids.Next(classify.H2S); got != `"rpctap-1"` {
		t.Errorf("first id %s", got)
	}
	see(classify.H2S, `{"jsonrpc":"2.0","id":"rpctap-7","method":"ping"}`)
	see(classify.S2H, `{"jsonrpc":"2.0","id":"rpctap-40","method":"roots/list"}`)
	see(classify.H2S, `[{"jsonrpc":"2.0","id":"rpctap-9","method":"ping"}]`)
	if got := ids.Next(classify.H2S); got != `"rpctap-10"` {
		t.Errorf("after the host used rpctap-7 and rpctap-9: %s", got)
	}
	if got := ids.Next(classify.S2H); got != `"rpctap-41"` {
		t.Errorf("after the server used rpctap-40: %s", got)
	}
	if got := ids.Next(classify.H2S); got != `"rpctap-11"` {
		t.Errorf("ids given out are not given again: %s", got)
	}
	see(classify.H2S, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if !ids.Collides(classify.H2S, []byte(`1`)) || !ids.Collides(classify.H2S, []byte(`1.0`)) {
		t.Error("1 is in flight from the host")
	}
	if ids.Collides(classify.H2S, []byte(`"1"`)) || ids.Collides(classify.S2H, []byte(`1`)) {
		t.Error(`"1" is not 1, and the server's ids are another space`)
	}
	see(classify.S2H, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	if ids.Collides(classify.H2S, []byte(`1`)) {
		t.Error("1 was answered")
	}
	see(classify.H2S, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
	p := PreviewFrames([]Frame{{Body: []byte(`{"jsonrpc":"2.0","id":5,"method":"ping"}`)}}, Options{Dir: classify.H2S, IDs: ids})
	if len(p.Collisions) != 1 || !strings.Contains(p.Collisions[0], "in flight from the host") {
		t.Errorf("the preview says %q", p.Collisions)
	}
}

// An id rpctap chose is used once a request with it was seen, not when it
// was given out, so a composer sends a template's id as it is the first
// time and a fresh one the second.
func TestIDsSayWhichIDWasAlreadySent(t *testing.T) {
	ids := NewIDs()
	id := ids.Next(classify.H2S)
	if ids.Used(classify.H2S, []byte(id)) {
		t.Errorf("%s is used before any request was sent with it", id)
	}
	m := classify.Classify([]byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`), classify.H2S, classify.JSONRPC)
	ids.See(&m)
	if !ids.Used(classify.H2S, []byte(id)) || ids.Used(classify.S2H, []byte(id)) {
		t.Errorf("%s sent toward the server: Used h2s %v, s2h %v; want true, false", id, ids.Used(classify.H2S, []byte(id)), ids.Used(classify.S2H, []byte(id)))
	}
	r := classify.Classify([]byte(`{"jsonrpc":"2.0","id":`+id+`,"result":{}}`), classify.S2H, classify.JSONRPC)
	ids.See(&r)
	if !ids.Used(classify.H2S, []byte(id)) {
		t.Errorf("%s is no longer used once answered; it was sent", id)
	}
	if next := ids.Next(classify.H2S); next == id || ids.Used(classify.H2S, []byte(next)) {
		t.Errorf("the next id %s is not fresh", next)
	}
}
