package sessions_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// copyEvent copies e out of the Reader's reused memory.
func copyEvent(e *sessions.Event) sessions.Event {
	c := *e
	c.Frame = bytes.Clone(e.Frame)
	c.Header = bytes.Clone(e.Header)
	c.Original = bytes.Clone(e.Original)
	if e.Code != nil {
		code := *e.Code
		c.Code = &code
	}
	return c
}

// readAll reads every record of file.
func readAll(t testing.TB, file []byte) (evs []sessions.Event, skipped int) {
	t.Helper()
	r := sessions.NewReader(bytes.NewReader(file))
	for {
		e, err := r.Next()
		if err == io.EOF {
			return evs, r.Skipped()
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		evs = append(evs, copyEvent(e))
	}
}

func intp(n int) *int { return &n }

func TestArchitectureExampleReadsAsItsEvents(t *testing.T) {
	const file = `{"rpctap":"session","version":1,"id":"…","started":"2026-11-29T18:42:00.123456Z","argv":["npx","-y","@modelcontextprotocol/server-everything"],"name":"server-everything","framing":"ndjson","profile":"auto"}
{"t":1520,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}"}
{"t":48113,"dir":"s2h","frame":"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}"}
{"t":50002,"dir":"err","frame":"server-everything running on stdio"}
{"t":90210,"dir":"h2s","src":"inject","frame":"{\"jsonrpc\":\"2.0\",\"id\":\"rpctap-1\",\"method\":\"ping\"}"}
{"t":99000,"event":"exit","code":0}
`
	r := sessions.NewReader(strings.NewReader(file))
	h, ok := r.Header()
	wantHeader := sessions.Header{
		Version: 1,
		ID:      "…",
		Started: time.Date(2026, 11, 29, 18, 42, 0, 123456000, time.UTC),
		Argv:    []string{"npx", "-y", "@modelcontextprotocol/server-everything"},
		Name:    "server-everything",
		Framing: "ndjson",
		Profile: "auto",
	}
	if !ok || !reflect.DeepEqual(h, wantHeader) {
		t.Errorf("Header() = %+v, %v; want %+v, true", h, ok, wantHeader)
	}
	want := []sessions.Event{
		{Line: 2, T: 1520, Dir: classify.H2S, Src: "wire", Frame: []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)},
		{Line: 3, T: 48113, Dir: classify.S2H, Src: "wire", Frame: []byte(`{"jsonrpc":"2.0","id":0,"result":{}}`)},
		{Line: 4, T: 50002, Dir: classify.Err, Src: "wire", Frame: []byte(`server-everything running on stdio`)},
		{Line: 5, T: 90210, Dir: classify.H2S, Src: "inject", Frame: []byte(`{"jsonrpc":"2.0","id":"rpctap-1","method":"ping"}`)},
		{Line: 6, T: 99000, Src: "wire", Kind: "exit", Code: intp(0)},
	}
	var got []sessions.Event
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, copyEvent(e))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events:\n got %+v\nwant %+v", got, want)
	}
	if r.Skipped() != 0 {
		t.Errorf("Skipped() = %d, want 0", r.Skipped())
	}
}

func TestFileWithNoHeaderReadsWithDefaults(t *testing.T) {
	file := `{"t":1,"dir":"h2s","frame":"a"}` + "\n" + `{"t":2,"dir":"s2h","frame":"b"}` + "\n"
	r := sessions.NewReader(strings.NewReader(file))
	h, ok := r.Header()
	if ok {
		t.Errorf("Header() found a header in %q", file)
	}
	if h.Framing != "ndjson" || h.Profile != "auto" {
		t.Errorf("Header() = %+v, want framing ndjson and profile auto", h)
	}
	for i, want := range []string{"a", "b"} {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if string(e.Frame) != want || e.Line != i+1 {
			t.Errorf("record %d: frame %q on line %d, want %q on line %d", i, e.Frame, e.Line, want, i+1)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next at end = %v, want io.EOF", err)
	}
}

func TestHeaderDefaultsFillWhatItLeavesOut(t *testing.T) {
	r := sessions.NewReader(strings.NewReader(`{"rpctap":"session","version":1,"started":"bad time"}` + "\n"))
	h, ok := r.Header()
	if !ok || h.Version != 1 || h.Framing != "ndjson" || h.Profile != "auto" || !h.Started.IsZero() {
		t.Errorf("Header() = %+v, %v", h, ok)
	}
	if (sessions.Header{}).FramingOrDefault() != "ndjson" || (sessions.Header{Framing: "lsp"}).FramingOrDefault() != "lsp" ||
		(sessions.Header{}).ProfileOrDefault() != "auto" || (sessions.Header{Profile: "mcp"}).ProfileOrDefault() != "mcp" {
		t.Error("OrDefault methods do not default only the empty value")
	}
}

// A parse_limit other than a positive integer is ignored, and the rest of
// the header is read as usual.
func TestOddParseLimitLosesNothingElseOfTheHeader(t *testing.T) {
	for limit, want := range map[string]int{`16777216`: 16777216, `1.6e7`: 0, `"16777216"`: 0, `1e40`: 0, `-5`: 0, `0`: 0, `null`: 0, `{}`: 0} {
		line := `{"rpctap":"session","version":1,"id":"s-9","framing":"lsp","profile":"mcp","parse_limit":` + limit + "}\n"
		h, ok := sessions.NewReader(strings.NewReader(line)).Header()
		if !ok || h.ID != "s-9" || h.Framing != "lsp" || h.Profile != "mcp" || h.ParseLimit != want {
			t.Errorf("parse_limit %s: Header() = %+v, %v; want the header with parse limit %d", limit, h, ok, want)
		}
	}
}

func TestLineNumbersCountEveryLineWithTheHeaderAsLineOne(t *testing.T) {
	file := strings.Join([]string{
		`{"rpctap":"session","version":1}`,
		``,
		`{"t":1,"dir":"h2s","frame":"a"}`,
		`not a record`,
		`   `,
		`{"t":2,"dir":"s2h","frame":"b"}`,
		`{"t":3,"event":"note","text":"last, with no newline"}`,
	}, "\n")
	evs, skipped := readAll(t, []byte(file))
	var got []int
	for _, e := range evs {
		got = append(got, e.Line)
	}
	if want := []int{3, 6, 7}; !reflect.DeepEqual(got, want) {
		t.Errorf("lines %v, want %v", got, want)
	}
	if skipped != 1 {
		t.Errorf("skipped %d, want 1", skipped)
	}
}

func TestUnreadableLinesAreSkippedAndCountedAndLaterLinesStillRead(t *testing.T) {
	for _, bad := range []string{
		`not json`,
		"\x00",
		`[1,2]`,
		`"a string"`,
		`{"t":1,"dir":"h2s","frame":"x"`,
		`{"t":1,"dir":"h2s","frame":"x"} trailing`,
		`{"t":1,"dir":"h2s","frame":"x",}`,
		`{"t":1,"dir":"h2s","frame":"x" "eof":true}`,
		`{"t":1 "dir":"h2s","frame":"x"}`,
		`{t:1,"dir":"h2s","frame":"x"}`,
		`{"dir":"h2s","frame":"x"}`,
		`{"t":1,"frame":"x"}`,
		`{"t":1,"dir":"h2s"}`,
		`{"t":1,"dir":"up","frame":"x"}`,
		`{"t":1,"dir":"H2S","frame":"x"}`,
		`{"t":1,"dir":2,"frame":"x"}`,
		`{"t":1.5,"dir":"h2s","frame":"x"}`,
		`{"t":1e3,"dir":"h2s","frame":"x"}`,
		`{"t":"1","dir":"h2s","frame":"x"}`,
		`{"t":01,"dir":"h2s","frame":"x"}`,
		`{"t":-,"dir":"h2s","frame":"x"}`,
		`{"t":99999999999999999999,"dir":"h2s","frame":"x"}`,
		`{"t":1,"t":2,"dir":"h2s","frame":"x"}`,
		`{"t":1,"dir":"h2s","frame":"x","frame":"y"}`,
		`{"t":1,"dir":"h2s","frame":"x","frame_b64":"eA=="}`,
		`{"t":1,"dir":"h2s","frame":"x","header":"a","header_b64":"eA=="}`,
		`{"t":1,"dir":"h2s","frame_b64":"!!!!"}`,
		`{"t":1,"dir":"h2s","frame_b64":"eA"}`,
		`{"t":1,"dir":"h2s","frame":"x","header_b64":"e"}`,
		`{"t":1,"dir":"h2s","frame":"\q"}`,
		`{"t":1,"dir":"h2s","frame":"\u12"}`,
		`{"t":1,"dir":"h2s","frame":"\u12g4"}`,
		`{"t":1,"dir":"h2s","frame":"ends in \`,
		"{\"t\":1,\"dir\":\"h2s\",\"frame\":\"raw\ttab\"}",
		"{\"t\":1,\"dir\":\"h2s\",\"frame\":\"raw\rCR\"}",
		`{"t":1,"dir":"h2s","frame":x}`,
		`{"t":1,"dir":"h2s","frame":"x","eof":"yes"}`,
		`{"t":1,"dir":"h2s","frame":"x","redacted":1}`,
		`{"t":1,"dir":"h2s","frame":"x","src":5}`,
		`{"t":1,"dir":"h2s","frame":"x","kind":tru}`,
		`{"t":1,"dir":"h2s","frame":"x","id":{"a":}}`,
		`{"t":1,"dir":"h2s","frame":"x","id":[1,]}`,
		`{"t":1,"dir":"h2s","frame":"x","method":"\x"}`,
		`{"t":1,"dir":"h2s","frame":"x","future":01}`,
		`{"t":1,"dir":"h2s","frame":"x","future":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`,
		`{"t":1,"event":"exit","frame":"x"}`,
		`{"t":1,"event":"exit","header":"x"}`,
		`{"t":1,"event":""}`,
		`{"t":1,"event":7}`,
		`{"event":"exit","code":0}`,
		`{"t":1,"event":"exit","code":1.0}`,
		`{"t":1,"event":"exit","code":"1"}`,
		`{"t":1,"event":"gap","dir":"h2s","missing":-1}`,
		`{"t":1,"event":"note","text":5}`,
		`{"rpctap":"session","version":1}`, // a header after the first line
		`{"rpctap":"other","t":1}`,
	} {
		file := `{"t":1,"dir":"h2s","frame":"before"}` + "\n" + bad + "\n" + `{"t":2,"dir":"s2h","frame":"after"}` + "\n"
		evs, skipped := readAll(t, []byte(file))
		if skipped != 1 {
			t.Errorf("%.80s: skipped %d lines, want 1", bad, skipped)
		}
		if len(evs) != 2 || string(evs[0].Frame) != "before" || string(evs[1].Frame) != "after" || evs[1].Line != 3 {
			t.Errorf("%.80s: read %d records %+v, want before (line 1) and after (line 3)", bad, len(evs), evs)
		}
	}
}

func TestUnreadableFirstLineIsNotTakenForAHeader(t *testing.T) {
	file := `{"rpctap":"session","version":1` + "\n" + `{"t":2,"dir":"s2h","frame":"after"}` + "\n"
	r := sessions.NewReader(strings.NewReader(file))
	if _, ok := r.Header(); ok {
		t.Error("Header() took a broken line for a header")
	}
	e, err := r.Next()
	if err != nil || string(e.Frame) != "after" || e.Line != 2 {
		t.Fatalf("Next() = %+v, %v", e, err)
	}
	if r.Skipped() != 1 {
		t.Errorf("Skipped() = %d, want 1", r.Skipped())
	}
}

func TestBlankLinesAreSkippedSilently(t *testing.T) {
	file := "\n \t\r\n" + `{"t":1,"dir":"h2s","frame":"a"}` + "\n\n\r\n"
	evs, skipped := readAll(t, []byte(file))
	if len(evs) != 1 || evs[0].Line != 3 || skipped != 0 {
		t.Errorf("read %+v with %d skipped, want one record on line 3 and none skipped", evs, skipped)
	}
}

func TestRecordsThatOtherWritersSpellDifferentlyStillRead(t *testing.T) {
	for _, tc := range []struct {
		line string
		want sessions.Event
	}{
		{" {\"t\" : 5 ,\t\"dir\" :\"s2h\" , \"frame\" : \"a\" } \r", sessions.Event{T: 5, Dir: classify.S2H, Src: "wire", Frame: []byte("a")}},
		{`{"frame":"b","dir":"err","t":-3}`, sessions.Event{T: -3, Dir: classify.Err, Src: "wire", Frame: []byte("b")}},
		{`{"\u0074":1,"di\u0072":"h2s","fr\u0061me":"c"}`, sessions.Event{T: 1, Dir: classify.H2S, Src: "wire", Frame: []byte("c")}},
		{`{"t":1,"dir":"h2s","frame":"d","src":null,"eof":null,"header":null,"frame_b64":null}`, sessions.Event{T: 1, Dir: classify.H2S, Src: "wire", Frame: []byte("d")}},
		{`{"t":1,"dir":"h2s","frame":"e","src":"replay"}`, sessions.Event{T: 1, Dir: classify.H2S, Src: "replay", Frame: []byte("e")}},
		{`{"t":1,"dir":"h2s","frame":"f","eof":false,"redacted":true,"src":"edit"}`, sessions.Event{T: 1, Dir: classify.H2S, Src: "edit", Redacted: true, Frame: []byte("f")}},
		{`{"t":9223372036854775807,"dir":"h2s","frame_b64":"/w==","header":""}`, sessions.Event{T: 1<<63 - 1, Dir: classify.H2S, Src: "wire", Frame: []byte{0xff}, Header: []byte{}}},
		{`{"t":-9223372036854775808,"dir":"h2s","frame":""}`, sessions.Event{T: -1 << 63, Dir: classify.H2S, Src: "wire", Frame: []byte{}}},
		{`{"t":1,"event":"start"}`, sessions.Event{T: 1, Src: "wire", Kind: "start"}},
		{`{"t":1,"event":"exit","signal":"SIGKILL","code":null}`, sessions.Event{T: 1, Src: "wire", Kind: "exit", Signal: "SIGKILL"}},
		{`{"t":1,"event":"exit","code":-1}`, sessions.Event{T: 1, Src: "wire", Kind: "exit", Code: intp(-1)}},
		{`{"t":1,"event":"gap","dir":"s2h","missing":12}`, sessions.Event{T: 1, Src: "wire", Kind: "gap", Dir: classify.S2H, Missing: 12}},
		{`{"t":1,"event":"note","text":"héllo\n"}`, sessions.Event{T: 1, Src: "wire", Kind: "note", Text: "héllo\n"}},
		{`{"t":1,"event":"resize","cols":80}`, sessions.Event{T: 1, Src: "wire", Kind: "resize"}},
	} {
		evs, skipped := readAll(t, []byte(tc.line+"\n"))
		tc.want.Line = 1
		if skipped != 0 || len(evs) != 1 || !reflect.DeepEqual(evs[0], tc.want) {
			t.Errorf("%s:\n got %+v (skipped %d)\nwant %+v", tc.line, evs, skipped, tc.want)
		}
	}
}

func TestDerivedAndUnknownFieldsAreIgnored(t *testing.T) {
	line := `{"t":1,"kind":"response","id":{"nested":[1,{"x":null}],"s":"\"}"},"method":"lies/\u00e9",` +
		`"dir":"h2s","future":[true,false,null,-1.5e+3,"\\"],"frame":"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}","more":{}}`
	evs, skipped := readAll(t, []byte(line+"\n"))
	want := sessions.Event{Line: 1, T: 1, Dir: classify.H2S, Src: "wire", Frame: []byte(`{"jsonrpc":"2.0","method":"ping"}`)}
	if skipped != 0 || len(evs) != 1 || !reflect.DeepEqual(evs[0], want) {
		t.Errorf("got %+v (skipped %d), want %+v", evs, skipped, want)
	}
}

func TestUnicodeEscapesDecodeToUTF8(t *testing.T) {
	for _, tc := range []struct{ esc, want string }{
		{`\u0041\u00e9\u20AC`, "Aé€"},
		{`\ud83d\ude00`, "😀"},
		{`\uD83D\uDE00x`, "😀x"},
		{`\u0000\u001f\u2028`, "\x00\x1f\u2028"},
		{`\/\b\f\n\r\t\"\\`, "/\b\f\n\r\t\"\\"},
		{`\ud83d`, "\uFFFD"},              // lone high surrogate, as encoding/json
		{`\ude00`, "\uFFFD"},              // lone low surrogate
		{`\ud83dx`, "\uFFFDx"},            // high surrogate, then no escape
		{`\ud83d\u0041`, "\uFFFDA"},       // high surrogate, then not a low one
		{`\ud83d\ud83d\ude00`, "\uFFFD😀"}, // high, then a pair
	} {
		evs, skipped := readAll(t, []byte(`{"t":1,"dir":"h2s","frame":"`+tc.esc+`"}`+"\n"))
		if skipped != 0 || len(evs) != 1 || string(evs[0].Frame) != tc.want {
			t.Errorf("%s: got %+v (skipped %d), want %q", tc.esc, evs, skipped, tc.want)
		}
	}
}

func TestRoundTripKeepsEveryByte(t *testing.T) {
	frames := []string{
		"",
		"{}",
		"a\r\nb\r\n",
		"\x00nul\x00",
		"line\u2028para\u2029",
		"\x7fdel",
		"\x01\x02\x03\x04\x05\x06\x07\x08\x0b\x0c\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f",
		`"quoted" \back\slash\ \u0041 \n`,
		"é€😀\uFFFD\U0010FFFF",
		"\xff\xfe",
		"valid then \xed\xa0\x80 surrogate",
		"\xc0\x80 overlong",
		"cut \xe2\x82",
		"\x1b[31mred\x1b[0m \u202e",
	}
	w, buf := newTestWriter(t)
	dirs := []classify.Direction{classify.H2S, classify.S2H, classify.Err}
	var want []sessions.Event
	for i, f := range frames {
		rec := sessions.FrameRecord{T: int64(i) * 1000, Dir: dirs[i%3], Frame: []byte(f), EOF: i%2 == 0, Redacted: i%3 == 0}
		if i%4 == 0 {
			rec.Header = []byte("Content-Length: 2\r\nContent-Type: x" + f + "\r\n\r\n")
		}
		if i%5 == 1 {
			rec.Src = sessions.SrcEdit
		}
		if i == 3 {
			rec.Header = []byte{} // present and empty is not absent
		}
		if err := w.WriteFrame(rec); err != nil {
			t.Fatal(err)
		}
		src := rec.Src
		if src == "" {
			src = "wire"
		}
		want = append(want, sessions.Event{Line: i + 2, T: rec.T, Dir: rec.Dir, Frame: rec.Frame, Header: rec.Header, Src: src, EOF: rec.EOF, Redacted: rec.Redacted})
	}
	evs, skipped := readAll(t, buf.Bytes())
	if skipped != 0 {
		t.Errorf("skipped %d lines", skipped)
	}
	if len(evs) != len(want) {
		t.Fatalf("read %d records, want %d", len(evs), len(want))
	}
	for i := range want {
		if len(want[i].Frame) == 0 {
			want[i].Frame = []byte{} // a frame is never nil once read
		}
		if !reflect.DeepEqual(evs[i], want[i]) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, evs[i], want[i])
		}
	}
}

func TestEventRecordsRoundTrip(t *testing.T) {
	w, buf := newTestWriter(t)
	recs := []sessions.EventRecord{
		{T: 1, Kind: sessions.EventStart},
		{T: 2, Kind: sessions.EventGap, Dir: classify.S2H, Missing: 40},
		{T: 3, Kind: sessions.EventGap, Dir: classify.H2S},
		{T: 4, Kind: sessions.EventNote, Text: "disk full: \"frames\" lost\n\u2028"},
		{T: 5, Kind: sessions.EventExit, Code: intp(137), Signal: "SIGKILL"},
		{T: 6, Kind: sessions.EventExit, Code: intp(0)},
	}
	for _, e := range recs {
		if err := w.WriteEvent(e); err != nil {
			t.Fatal(err)
		}
	}
	evs, skipped := readAll(t, buf.Bytes())
	if skipped != 0 || len(evs) != len(recs) {
		t.Fatalf("read %d records, skipped %d", len(evs), skipped)
	}
	for i, e := range recs {
		want := sessions.Event{Line: i + 2, T: e.T, Dir: e.Dir, Src: "wire", Kind: e.Kind, Code: e.Code, Signal: e.Signal, Missing: e.Missing, Text: e.Text}
		if !reflect.DeepEqual(evs[i], want) {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, evs[i], want)
		}
	}
}

func TestNoteTextThatIsNotUTF8IsReplacedNotLost(t *testing.T) {
	w, buf := newTestWriter(t)
	if err := w.WriteEvent(sessions.EventRecord{Kind: sessions.EventNote, Text: "a\xffb"}); err != nil {
		t.Fatal(err)
	}
	evs, _ := readAll(t, buf.Bytes())
	if len(evs) != 1 || evs[0].Text != "a\uFFFDb" {
		t.Errorf("read %+v, want text a\uFFFDb", evs)
	}
}

func TestFrameOf50MiBIsOneLineAndReadsBack(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads 100 MiB")
	}
	frame := make([]byte, 0, 50<<20)
	for i := 0; len(frame) < 50<<20; i++ {
		frame = fmt.Appendf(frame, `{"i":%d,"s":"\u00e9\n"},`, i)
	}
	w, buf := newTestWriter(t)
	if err := w.WriteFrame(sessions.FrameRecord{T: 1, Dir: classify.S2H, Frame: frame}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFrame(sessions.FrameRecord{T: 2, Dir: classify.H2S, Frame: []byte("after")}); err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(buf.Bytes(), []byte("\n")); n != 3 {
		t.Fatalf("the file has %d lines, want 3", n)
	}
	r := sessions.NewReader(bytes.NewReader(buf.Bytes()))
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(e.Frame, frame) || e.Line != 2 {
		t.Errorf("big frame: read %d bytes on line %d, want the %d written on line 2", len(e.Frame), e.Line, len(frame))
	}
	e, err = r.Next()
	if err != nil || string(e.Frame) != "after" || e.Line != 3 {
		t.Errorf("after the big frame: %+v, %v", e, err)
	}
}

func TestNextDoesNotAllocate(t *testing.T) {
	// Blocks of the eight shapes of record that must read without
	// allocating; each run below reads one block, so one allocation in
	// any shape shows.
	const block = 8
	w, buf := newTestWriter(t)
	for i := range 200 {
		frame := frame1KiB(i)
		recs := []sessions.FrameRecord{
			{T: 1, Dir: classify.S2H, Frame: frame},
			{T: 2, Dir: classify.H2S, Frame: append(frame, "\xff"...)},
			{T: 3, Dir: classify.H2S, Src: sessions.SrcInject, Frame: frame, Header: []byte("Content-Length: 10\r\nX-Y: z\r\n\r\n")},
			{T: 4, Dir: classify.Err, Src: sessions.SrcEdit, EOF: true, Redacted: true, Frame: []byte("é\u2028\x00"), Header: []byte("\xfe")},
			{T: 5, Dir: classify.S2H, Frame: frame, Kind: "response", ID: []byte(`{"a":[1,"b"]}`), Method: "x/y"},
		}
		for _, rec := range recs {
			if err := w.WriteFrame(rec); err != nil {
				t.Fatal(err)
			}
		}
		for _, e := range []sessions.EventRecord{
			{T: 6, Kind: sessions.EventStart},
			{T: 7, Kind: sessions.EventExit, Code: intp(1)},
			{T: 8, Kind: sessions.EventGap, Dir: classify.H2S, Missing: 3},
		} {
			if err := w.WriteEvent(e); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := sessions.NewReader(bytes.NewReader(buf.Bytes()))
	readBlock := func() {
		for want := int64(1); want <= block; want++ {
			e, err := r.Next()
			if err != nil || e.T != want {
				t.Fatalf("Next() = %+v, %v; want the record at t %d", e, err, want)
			}
		}
	}
	readBlock() // warm up the buffers
	if n := testing.AllocsPerRun(150, readBlock); n != 0 {
		t.Errorf("Next allocates %v times in a block of %d records", n, block)
	}
}

func TestReadErrorIsReturned(t *testing.T) {
	boom := errors.New("boom")
	r := sessions.NewReader(io.MultiReader(strings.NewReader(`{"t":1,"dir":"h2s","frame":"a"}`+"\n"), &failingReader{boom}))
	if e, err := r.Next(); err != nil || string(e.Frame) != "a" {
		t.Fatalf("Next() = %+v, %v", e, err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Errorf("Next() error = %v, want %v", err, boom)
	}
}

type failingReader struct{ err error }

func (f *failingReader) Read([]byte) (int, error) { return 0, f.err }

// A Reader keeps the numbers of the lines it skipped, the first 1,000 of
// them however many there are, and says what is wrong with a header instead
// of taking it silently (or skipping it).
func TestReaderNamesSkippedLinesWithinABound(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"rpctap":"session","version":1,"id":"a","started":"2026-01-01T00:00:00Z"}` + "\n")
	for i := range 3000 {
		if i%2 == 0 {
			b.WriteString("junk\n")
		} else {
			b.WriteString(`{"t":1,"dir":"h2s","frame":"x"}` + "\n")
		}
	}
	rd := sessions.NewReader(strings.NewReader(b.String()))
	for {
		if _, err := rd.Next(); err != nil {
			break
		}
	}
	lines := rd.SkippedLines()
	if rd.Skipped() != 1500 || len(lines) != 1000 || lines[0] != 2 || lines[1] != 4 || lines[999] != 2000 {
		t.Errorf("skipped %d, lines %d..., %d of them; want 1500 skipped, the first 1,000 kept from line 2 by twos", rd.Skipped(), lines[:min(3, len(lines))], len(lines))
	}
	if f := rd.HeaderFaults(); len(f) != 0 {
		t.Errorf("a good header has faults %q", f)
	}

	rd = sessions.NewReader(strings.NewReader(`{"rpctap":"session","version":-1,"id":["a"],"parse_limit":"big"}` + "\n"))
	h, ok := rd.Header()
	if !ok || len(rd.HeaderFaults()) != 3 || h.ID != "" || h.ParseLimit != 0 {
		t.Errorf("header %+v (%v), faults %q; want a header with three faults, the bad fields left empty", h, ok, rd.HeaderFaults())
	}
}

func TestHeldFramesRoundTripWithTheirOutcomeAndOriginal(t *testing.T) {
	w, buf := newTestWriter(t)
	recs := []sessions.FrameRecord{
		{T: 1, Dir: classify.H2S, Frame: []byte(`{"id":1}`), Held: sessions.HeldForwarded, HeldUs: 1500},
		{T: 2, Dir: classify.H2S, Src: sessions.SrcEdit, Frame: []byte(`{"id":2,"x":"new"}`), Original: []byte(`{"id":2,"x":"old"}`), Held: sessions.HeldEdited, HeldUs: 7},
		{T: 3, Dir: classify.S2H, Src: sessions.SrcEdit, Frame: []byte("b"), Original: []byte("\xff\xfe not utf-8"), Held: sessions.HeldEdited},
		{T: 4, Dir: classify.H2S, Frame: []byte(`{"id":3}`), Held: sessions.HeldDropped, HeldUs: 60_000_000},
		{T: 5, Dir: classify.H2S, Frame: []byte(`{"id":4}`), Held: sessions.HeldAnswered},
		{T: 6, Dir: classify.H2S, Frame: []byte(`{"id":5}`)},
	}
	for _, r := range recs {
		if err := w.WriteFrame(r); err != nil {
			t.Fatal(err)
		}
	}
	evs, skipped := readAll(t, buf.Bytes())
	if skipped != 0 || len(evs) != len(recs) {
		t.Fatalf("read %d records, skipped %d", len(evs), skipped)
	}
	for i, r := range recs {
		e := evs[i]
		if e.Held != r.Held || e.HeldUs != r.HeldUs || !bytes.Equal(e.Original, r.Original) || !bytes.Equal(e.Frame, r.Frame) {
			t.Errorf("record %d: held %q %d original %q frame %q, want %q %d %q %q", i, e.Held, e.HeldUs, e.Original, e.Frame, r.Held, r.HeldUs, r.Original, r.Frame)
		}
	}
	if sessions.HeldReachedReceiver(sessions.HeldDropped) || sessions.HeldReachedReceiver(sessions.HeldAnswered) || !sessions.HeldReachedReceiver(sessions.HeldTimeout) {
		t.Error("HeldReachedReceiver is wrong about dropped, answered or timeout")
	}
	// A version 1 file of a rpctap that knew nothing of holding reads as
	// it did; an event record with an original is not a record.
	old := "{\"t\":1,\"dir\":\"h2s\",\"frame\":\"x\"}\n{\"t\":2,\"event\":\"note\",\"text\":\"n\",\"original\":\"x\"}\n{\"t\":3,\"dir\":\"h2s\",\"frame\":\"x\",\"original\":\"a\",\"original_b64\":\"YQ==\"}\n"
	evs, skipped = readAll(t, []byte(old))
	if len(evs) != 1 || evs[0].Held != "" || evs[0].Original != nil || skipped != 2 {
		t.Errorf("old file: %d records, skipped %d: %+v", len(evs), skipped, evs)
	}
}

// zeros reads as NUL bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// pauses reads parts one after another, with an io.EOF between them, as
// a file being written reads to a follower.
type pauses struct{ parts []io.Reader }

func (p *pauses) Read(b []byte) (int, error) {
	for len(p.parts) > 0 {
		n, err := p.parts[0].Read(b)
		if n > 0 {
			return n, nil
		}
		if err == io.EOF {
			p.parts = p.parts[1:]
			return 0, io.EOF
		}
		if err != nil {
			return 0, err
		}
	}
	return 0, io.EOF
}

// A line that cannot be a record (NUL bytes, what a crash leaves) costs
// no memory however long it is: the Reader reads past it, counts it
// skipped with its bytes, and reads the records after it, also when the
// file is followed and the damaged line spans a wait for more.
func TestALongLineThatCannotBeARecordIsSkippedInBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 300 MiB")
	}
	const head = `{"rpctap":"session","version":1,"id":"x","started":"2026-11-29T18:42:00.123456Z"}` + "\n" +
		`{"t":1,"dir":"h2s","frame":"one"}` + "\n"
	const cut = `{"t":2,"dir":"h2s","frame":"cut short by a crash`
	for _, follow := range []bool{false, true} {
		in := &pauses{parts: []io.Reader{
			strings.NewReader(head + cut), io.LimitReader(zeros{}, 200<<20),
			io.MultiReader(io.LimitReader(zeros{}, 100<<20), strings.NewReader("\n"+`{"t":3,"dir":"s2h","frame":"three"}`+"\n")),
		}}
		if !follow {
			in = &pauses{parts: []io.Reader{io.MultiReader(in.parts...)}}
		}
		r := sessions.NewReader(in)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if follow {
			r.Follow(ctx, time.Millisecond)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var frames []string
		for len(frames) < 2 {
			e, err := r.Next()
			if err != nil {
				t.Fatalf("follow %v: after %q: %v", follow, frames, err)
			}
			frames = append(frames, fmt.Sprintf("%d:%s", e.Line, e.Frame))
		}
		runtime.ReadMemStats(&after)
		cancel()
		if strings.Join(frames, " ") != "2:one 4:three" {
			t.Errorf("follow %v: read %q", follow, frames)
		}
		if want := int64(len(cut) + 300<<20); r.Skipped() != 1 || r.SkippedBytes() != want || !reflect.DeepEqual(r.SkippedLines(), []int{3}) {
			t.Errorf("follow %v: skipped %d lines %v, %d bytes; want line 3, %d bytes", follow, r.Skipped(), r.SkippedLines(), r.SkippedBytes(), want)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
			t.Errorf("follow %v: reading past the damaged line allocated %d MiB", follow, grew>>20)
		}
	}
}
