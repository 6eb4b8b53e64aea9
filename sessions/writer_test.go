package sessions_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

var testStarted = time.Date(2026, 11, 29, 18, 42, 0, 123456789, time.UTC)

func testHeader() sessions.Header {
	return sessions.Header{
		ID:      "s-1",
		Started: testStarted,
		Argv:    []string{"npx", "-y", "@modelcontextprotocol/server-everything"},
		Name:    "server-everything",
	}
}

// newTestWriter returns a Writer on a buffer, its header written.
func newTestWriter(t testing.TB) (*sessions.Writer, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	w, err := sessions.NewWriter(&buf, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	return w, &buf
}

// lines splits a written file into its lines, each without its "\n".
func lines(t testing.TB, file []byte) []string {
	t.Helper()
	if !bytes.HasSuffix(file, []byte("\n")) {
		t.Fatalf("file does not end in a newline: %q", file)
	}
	return strings.Split(strings.TrimSuffix(string(file), "\n"), "\n")
}

func TestHeaderLineIsWrittenInUTCToTheMicrosecond(t *testing.T) {
	var buf bytes.Buffer
	h := testHeader()
	h.Started = time.Date(2026, 11, 29, 19, 42, 0, 123456789, time.FixedZone("CET", 3600))
	if _, err := sessions.NewWriter(&buf, h); err != nil {
		t.Fatal(err)
	}
	want := `{"rpctap":"session","version":1,"id":"s-1","started":"2026-11-29T18:42:00.123456Z",` +
		`"argv":["npx","-y","@modelcontextprotocol/server-everything"],"name":"server-everything",` +
		`"framing":"ndjson","profile":"auto"}` + "\n"
	if got := buf.String(); got != want {
		t.Errorf("header line:\n got %s\nwant %s", got, want)
	}
}

func TestNewWriterRefusesAHeaderItCannotWrite(t *testing.T) {
	for name, h := range map[string]sessions.Header{
		"no start time":  {Version: 1},
		"future version": {Version: 2, Started: testStarted},
	} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if _, err := sessions.NewWriter(&buf, h); err == nil {
				t.Error("NewWriter succeeded")
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %q", buf.String())
			}
		})
	}
}

func TestFrameIsWrittenWithOnlyTheEscapesJSONNeeds(t *testing.T) {
	w, buf := newTestWriter(t)
	frame := "a\"b\\c\n\r\t\x00\x01\x1f\x7f é€😀 \u2028\u2029 </script>&"
	if err := w.WriteFrame(sessions.FrameRecord{T: 7, Dir: classify.S2H, Frame: []byte(frame)}); err != nil {
		t.Fatal(err)
	}
	want := `{"t":7,"dir":"s2h","frame":"a\"b\\c\n\r\t\u0000\u0001\u001f` + "\x7f é€😀 " + `\u2028\u2029 </script>&"}`
	if got := lines(t, buf.Bytes())[1]; got != want {
		t.Errorf("record:\n got %s\nwant %s", got, want)
	}
}

// quoteByRules is the quoting rule written the slow, plain way.
func quoteByRules(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r >= 0x80 && r <= 0xffff && classify.UnsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		case r > 0xffff && classify.UnsafeRune(r):
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func TestQuotingFollowsTheRulesAtEveryOffset(t *testing.T) {
	var specials []string
	for c := range 0x80 {
		specials = append(specials, string(rune(c)))
	}
	specials = append(specials, "é", "€", "😀", "\u2028", "\u2029", "\uFFFD", "\u0085", "\u009b", "\u00ad", "\u061c", "\u200b", "\u202e", "\u2066", "\ufeff", "\U000E0041")
	// Plain and quote-dense surroundings, in frames short enough to be
	// quoted a byte or a word at a time and long enough to be quoted
	// sixteen bytes at a time, the special byte at every offset.
	for _, sp := range specials {
		for _, size := range []int{1, 7, 8, 9, 16, 23, 31, 32, 33, 47, 48, 49, 64, 80} {
			for at := 0; at <= size; at++ {
				for _, fill := range []string{"ab", `a"\`} {
					frame := fillTo(fill, at) + sp + fillTo(fill, size-at)
					w, buf := newTestWriter(t)
					if err := w.WriteFrame(sessions.FrameRecord{Dir: classify.H2S, Frame: []byte(frame)}); err != nil {
						t.Fatal(err)
					}
					want := `{"t":0,"dir":"h2s","frame":` + quoteByRules(frame) + `}`
					if got := lines(t, buf.Bytes())[1]; got != want {
						t.Fatalf("frame %q:\n got %s\nwant %s", frame, got, want)
					}
				}
			}
		}
	}
}

// Frames of nothing but quotes and backslashes, the most quoting ever
// writes, come out right at every length across the stretches the
// quoting makes room for.
func TestQuotingQuoteDenseFramesOfEveryLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for size := 1; size <= 1100; size++ {
		frame := make([]byte, size)
		for i := range frame {
			frame[i] = `"\`[rng.IntN(2)]
		}
		w, buf := newTestWriter(t)
		if err := w.WriteFrame(sessions.FrameRecord{Dir: classify.H2S, Frame: frame}); err != nil {
			t.Fatal(err)
		}
		want := `{"t":0,"dir":"h2s","frame":` + quoteByRules(string(frame)) + `}`
		if got := lines(t, buf.Bytes())[1]; got != want {
			t.Fatalf("frame %q:\n got %s\nwant %s", frame, got, want)
		}
	}
}

// fillTo repeats s to n bytes.
func fillTo(s string, n int) string { return strings.Repeat(s, n/len(s)+1)[:n] }

func TestQuotingFollowsTheRulesOnRandomText(t *testing.T) {
	pieces := []string{"a", "abcdefghijk", "\x00", "\x01", "\x1f", "\n", "\"", "\\", "\x7f", "é", "\u2028", "😀",
		// mostly printable ASCII, as most frames are
		"the quick brown fox ", `"quoted"`, `C:\dir\`, `{"a":[1,2]}`, "0123456789abcdef", `\"`, "--"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		var b strings.Builder
		n := rng.IntN(80)
		if rng.IntN(4) == 0 {
			n *= 20 // across the stretches appendQuoted makes room for
		}
		for range n {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		frame := b.String() + "."
		w, buf := newTestWriter(t)
		if err := w.WriteFrame(sessions.FrameRecord{Dir: classify.H2S, Frame: []byte(frame), Method: frame}); err != nil {
			t.Fatal(err)
		}
		want := `{"t":0,"dir":"h2s","method":` + quoteByRules(frame) + `,"frame":` + quoteByRules(frame) + `}`
		if got := lines(t, buf.Bytes())[1]; got != want {
			t.Fatalf("frame %q:\n got %s\nwant %s", frame, got, want)
		}
	}
}

func TestInvalidUTF8FrameGoesToFrameB64(t *testing.T) {
	for _, frame := range []string{"\xff", "ok then \xc0\x80", "\xed\xa0\x80", "cut \xe2\x82"} {
		w, buf := newTestWriter(t)
		rec := sessions.FrameRecord{Dir: classify.H2S, Frame: []byte(frame), Header: []byte("X: \xfe\r\n")}
		if err := w.WriteFrame(rec); err != nil {
			t.Fatal(err)
		}
		line := lines(t, buf.Bytes())[1]
		if !strings.Contains(line, `"frame_b64":`) || strings.Contains(line, `"frame":`) {
			t.Errorf("frame %q written as %s: want frame_b64 only", frame, line)
		}
		if !strings.Contains(line, `"header_b64":`) || strings.Contains(line, `"header":`) {
			t.Errorf("header written as %s: want header_b64 only", line)
		}
	}
}

func TestValidUTF8FrameStaysReadableText(t *testing.T) {
	w, buf := newTestWriter(t)
	// U+FFFD is valid UTF-8 in its own right.
	if err := w.WriteFrame(sessions.FrameRecord{Dir: classify.H2S, Frame: []byte("é\uFFFD")}); err != nil {
		t.Fatal(err)
	}
	if line := lines(t, buf.Bytes())[1]; !strings.Contains(line, `"frame":"é`+"\uFFFD"+`"`) {
		t.Errorf("record %s: want the frame as text", line)
	}
}

func TestEveryRecordIsOneLineOfJSONOtherToolsRead(t *testing.T) {
	w, buf := newTestWriter(t)
	frames := []string{"", "{}", "a\nb", "\u2028", "x\r\n", "\x00\x7f", `"\u0041"`}
	for i, f := range frames {
		rec := sessions.FrameRecord{T: int64(i), Dir: classify.H2S, Frame: []byte(f), Kind: "request", ID: []byte(`"a b"`), Method: "m\n"}
		if err := w.WriteFrame(rec); err != nil {
			t.Fatal(err)
		}
	}
	code := 3
	for _, e := range []sessions.EventRecord{
		{Kind: sessions.EventStart},
		{Kind: sessions.EventNote, Text: "line\nbreak \u2028 and bad \xff"},
		{Kind: sessions.EventExit, Code: &code, Signal: "SIGTERM"},
	} {
		if err := w.WriteEvent(e); err != nil {
			t.Fatal(err)
		}
	}
	ls := lines(t, buf.Bytes())
	if len(ls) != 1+len(frames)+3 {
		t.Fatalf("%d lines, want %d", len(ls), 1+len(frames)+3)
	}
	for i, line := range ls {
		if strings.ContainsAny(line, "\r\u2028\u2029") {
			t.Errorf("line %d holds a raw line break: %q", i+1, line)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("line %d is not JSON: %v: %s", i+1, err, line)
			continue
		}
		if i >= 1 && i <= len(frames) && v["frame"] != frames[i-1] {
			t.Errorf("line %d: encoding/json reads frame %q, want %q", i+1, v["frame"], frames[i-1])
		}
	}
}

func TestDerivedIDIsWrittenOnlyWhenItIsOneJSONValueOnOneLine(t *testing.T) {
	for _, tc := range []struct {
		id    string
		write bool
	}{
		{`1`, true},
		{`"rpctap-1"`, true},
		{`{"a":[1, 2]}`, true},
		{`{"a":` + "\n" + `1}`, false},
		{`1 2`, false},
		{` 1`, false},
		{`"unterminated`, false},
		{`"bad \xff"`, false},
		{``, false},
	} {
		w, buf := newTestWriter(t)
		if err := w.WriteFrame(sessions.FrameRecord{Dir: classify.H2S, Frame: []byte("{}"), ID: []byte(tc.id)}); err != nil {
			t.Fatal(err)
		}
		line := lines(t, buf.Bytes())[1]
		if got := strings.Contains(line, `"id":`); got != tc.write {
			t.Errorf("id %q: written = %v, want %v: %s", tc.id, got, tc.write, line)
		}
	}
}

func TestWriterRefusesRecordsOutsideTheFormat(t *testing.T) {
	w, buf := newTestWriter(t)
	before := buf.Len()
	for name, err := range map[string]error{
		"no direction":    w.WriteFrame(sessions.FrameRecord{Frame: []byte("{}")}),
		"bad direction":   w.WriteFrame(sessions.FrameRecord{Dir: 9, Frame: []byte("{}")}),
		"unknown source":  w.WriteFrame(sessions.FrameRecord{Dir: classify.H2S, Src: "replay"}),
		"no event kind":   w.WriteEvent(sessions.EventRecord{}),
		"unknown event":   w.WriteEvent(sessions.EventRecord{Kind: "reboot"}),
		"bad gap dir":     w.WriteEvent(sessions.EventRecord{Kind: sessions.EventGap, Dir: 7, Missing: 1}),
		"negative gap":    w.WriteEvent(sessions.EventRecord{Kind: sessions.EventGap, Missing: -1}),
		"wire is default": w.WriteFrame(sessions.FrameRecord{Dir: classify.H2S, Src: sessions.SrcWire}),
	} {
		if name == "wire is default" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if got := lines(t, buf.Bytes()[before:]); len(got) != 1 || got[0] != `{"t":0,"dir":"h2s","frame":""}` {
		t.Errorf("wrote %q, want only the wire record", got)
	}
}

// tornWriter writes only the first limit bytes of its first Write, and
// fails it; later writes go through.
type tornWriter struct {
	buf   bytes.Buffer
	limit int
	torn  bool
}

var errDiskFull = errors.New("disk full")

func (w *tornWriter) Write(p []byte) (int, error) {
	if w.limit >= 0 && !w.torn && w.buf.Len() > 0 {
		w.torn = true
		n, _ := w.buf.Write(p[:w.limit])
		return n, errDiskFull
	}
	return w.buf.Write(p)
}

func TestWriterStartsANewLineAfterATornWrite(t *testing.T) {
	tw := &tornWriter{limit: 10}
	w, err := sessions.NewWriter(tw, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFrame(sessions.FrameRecord{T: 1, Dir: classify.H2S, Frame: []byte("lost")}); !errors.Is(err, errDiskFull) {
		t.Fatalf("torn write: err = %v, want %v", err, errDiskFull)
	}
	if err := w.WriteFrame(sessions.FrameRecord{T: 2, Dir: classify.H2S, Frame: []byte("kept")}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFrame(sessions.FrameRecord{T: 3, Dir: classify.H2S, Frame: []byte("also kept")}); err != nil {
		t.Fatal(err)
	}
	evs, skipped := readAll(t, tw.buf.Bytes())
	if skipped != 1 {
		t.Errorf("skipped %d lines, want the torn one", skipped)
	}
	if len(evs) != 2 || string(evs[0].Frame) != "kept" || string(evs[1].Frame) != "also kept" {
		t.Errorf("read %+v, want the two records after the torn one", evs)
	}
}

func TestWriteFrameDoesNotAllocate(t *testing.T) {
	w, err := sessions.NewWriter(io.Discard, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	recs := []sessions.FrameRecord{
		{T: 1, Dir: classify.H2S, Frame: frame1KiB(1), Kind: "request", ID: []byte("1"), Method: "tools/call"},
		{T: 2, Dir: classify.S2H, Src: sessions.SrcInject, Frame: []byte("é\u2028\x00 text"), Header: []byte("Content-Length: 9\r\nX: y\r\n\r\n"), EOF: true},
		{T: 3, Dir: classify.Err, Frame: bytes.Repeat([]byte("\xff\xfe"), 600)},
	}
	for _, rec := range recs {
		if err := w.WriteFrame(rec); err != nil { // grow the buffer once
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() { _ = w.WriteFrame(rec) }); n != 0 {
			t.Errorf("WriteFrame of %.20q allocates %v times", rec.Frame, n)
		}
	}
}

// The open end of a forced raw injection is written with "partial":true and
// read back, the index keeps the flag.
func TestPartialFlagIsWrittenReadAndIndexed(t *testing.T) {
	w, buf := newTestWriter(t)
	if err := w.WriteFrame(sessions.FrameRecord{T: 1, Dir: classify.H2S, Src: sessions.SrcInject, Frame: []byte(`{"jsonrpc":`), Partial: true}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"src":"inject","partial":true`)) {
		t.Errorf("the record does not say partial: %s", buf.Bytes())
	}
	evs, _ := readAll(t, buf.Bytes())
	if len(evs) != 1 || !evs[0].Partial || string(evs[0].Frame) != `{"jsonrpc":` {
		t.Fatalf("read back %+v", evs)
	}
	x := sessions.NewIndex(sessions.IndexOptions{})
	x.Add(&evs[0], 0)
	if e := x.At(0); !e.Partial || e.Src != sessions.SrcInject {
		t.Errorf("indexed as %+v", e)
	}
}
