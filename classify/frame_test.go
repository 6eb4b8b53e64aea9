package classify

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var splitterUpdate = flag.Bool("update-frames", false, "rewrite the frames sections of testdata/frames/*.txtar from what the splitter does")

// The cases in testdata/frames are txtar-like files: a comment saying the
// behaviour the case pins, then sections "-- name --". Sections:
//
//	framing  ndjson, lsp or auto
//	input    the stream; each line is escaped text (\r \n \t \\ \xHH) and
//	         the file's own line breaks are not part of it
//	frames   one line per frame: "META | BYTES", BYTES escaped as above,
//	         META the resolved framing then, when not zero, header=N,
//	         term=N, plain, eof and bad=NAME (see splitterBadName)
//
// Each case is checked whole (SplitAll) and fed in pieces of several sizes.
func TestSplitterCases(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "frames", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in testdata/frames: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			c := splitterParseCase(t, string(raw))
			got := SplitAll(c.input, c.framing)
			splitterCheckFrames(t, c.input, got)
			text := splitterFormat(c.input, got)
			if *splitterUpdate {
				out := c.head + "-- frames --\n" + text
				if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if text != c.frames {
				t.Errorf("frames differ\n got:\n%s\nwant:\n%s", text, c.frames)
			}
			for _, size := range []int{1, 2, 3, 5, 8, 13, 64} {
				fed := splitterFeed(t, c.input, c.framing, func() int { return size })
				if fmt.Sprint(fed) != fmt.Sprint(got) {
					t.Errorf("fed in pieces of %d: %v\nwhole: %v", size, fed, got)
				}
			}
		})
	}
}

type splitterCase struct {
	head    string // everything before the frames section
	framing Framing
	input   []byte
	frames  string
}

func splitterParseCase(t testing.TB, text string) splitterCase {
	t.Helper()
	var c splitterCase
	sections := map[string]string{}
	cur := ""
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, "-- ") && strings.HasSuffix(strings.TrimRight(line, "\n"), " --") {
			cur = strings.TrimSuffix(strings.TrimPrefix(strings.TrimRight(line, "\n"), "-- "), " --")
			if _, dup := sections[cur]; dup {
				t.Fatalf("section %q twice", cur)
			}
			sections[cur] = ""
			continue
		}
		if cur == "" {
			continue
		}
		sections[cur] += line
	}
	i := strings.Index(text, "-- frames --\n")
	if i < 0 {
		t.Fatal("no frames section")
	}
	c.head = text[:i]
	c.frames = sections["frames"]
	f, err := ParseFraming(strings.TrimSpace(sections["framing"]))
	if err != nil {
		t.Fatal(err)
	}
	c.framing = f
	for line := range strings.Lines(sections["input"]) {
		b, err := splitterUnescape(strings.TrimRight(line, "\n"))
		if err != nil {
			t.Fatalf("input: %v", err)
		}
		c.input = append(c.input, b...)
	}
	return c
}

func splitterUnescape(s string) ([]byte, error) {
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 == len(s) {
			return nil, fmt.Errorf("lone backslash at the end of %q", s)
		}
		i++
		switch s[i] {
		case 'r':
			out = append(out, '\r')
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case '\\':
			out = append(out, '\\')
		case 'x':
			if i+2 >= len(s) {
				return nil, fmt.Errorf("short \\x escape in %q", s)
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return nil, fmt.Errorf("bad \\x escape in %q", s)
			}
			out = append(out, byte(v))
			i += 2
		default:
			return nil, fmt.Errorf("unknown escape \\%c in %q", s[i], s)
		}
	}
	return out, nil
}

func splitterEscape(b []byte) string {
	var sb strings.Builder
	for i, c := range b {
		switch {
		case c == ' ' && i == len(b)-1:
			sb.WriteString(`\x20`) // an editor would strip it
		case c == '\r':
			sb.WriteString(`\r`)
		case c == '\n':
			sb.WriteString(`\n`)
		case c == '\t':
			sb.WriteString(`\t`)
		case c == '\\':
			sb.WriteString(`\\`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, c)
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String()
}

// splitterBadName names a Bad message for the case files; the body-cut
// message carries its numbers: eof-in-body:DECLARED:ARRIVED. It returns ""
// for a message that is none of the splitter's.
func splitterBadName(msg string) string {
	switch msg {
	case frameBadEmptyStart:
		return "empty-start"
	case frameBadNotHeader:
		return "not-header"
	case frameBadNoLength:
		return "no-length"
	case frameBadLengthValue:
		return "length-value"
	case frameBadLengthsDiffer:
		return "lengths-differ"
	case frameBadLineTooLong:
		return "line-too-long"
	case frameBadBlockTooLong:
		return "block-too-long"
	case frameBadEOFInHeader:
		return "eof-in-header"
	}
	var declared, arrived int64
	if _, err := fmt.Sscanf(msg, frameBadEOFInBodyWords, &declared, &arrived); err == nil &&
		fmt.Sprintf(frameBadEOFInBodyWords, declared, arrived) == msg {
		return fmt.Sprintf("eof-in-body:%d:%d", declared, arrived)
	}
	return ""
}

func splitterFormat(input []byte, frames []FrameSpan) string {
	var sb strings.Builder
	for _, f := range frames {
		sb.WriteString(f.Framing.String())
		if f.HeaderLen != 0 {
			fmt.Fprintf(&sb, " header=%d", f.HeaderLen)
		}
		if f.TermLen != 0 {
			fmt.Fprintf(&sb, " term=%d", f.TermLen)
		}
		if f.PlainHeader {
			sb.WriteString(" plain")
		}
		if f.EOF {
			sb.WriteString(" eof")
		}
		if f.Bad != "" {
			sb.WriteString(" bad=" + splitterBadName(f.Bad))
		}
		sb.WriteString(" | ")
		sb.WriteString(splitterEscape(input[f.Start : f.Start+f.Size]))
		sb.WriteString("\n")
	}
	return sb.String()
}

// splitterFeed feeds input to a Splitter the way a tap does: it keeps the
// bytes Split did not consume, appends the next piece (of a size next
// chooses) when Split asks for more, and returns the frames it was told
// about. It fails the test when the splitter breaks its contract.
func splitterFeed(t testing.TB, input []byte, f Framing, next func() int) []FrameSpan {
	t.Helper()
	s := NewSplitter(f)
	var frames []FrameSpan
	var buf []byte
	fed := 0
	var pos, start int64
	for calls := 0; ; calls++ {
		if calls > 4*len(input)+10 {
			t.Fatalf("%v: no end after %d calls", f, calls)
		}
		atEOF := fed == len(input)
		n, end := s.Split(buf, atEOF)
		if n < 0 || n > len(buf) {
			t.Fatalf("%v: Split(%d bytes) consumed %d", f, len(buf), n)
		}
		if len(buf) >= MaxHeaderLine && n == 0 && !end {
			t.Fatalf("%v: Split made no progress with %d bytes at offset %d", f, len(buf), pos)
		}
		buf = buf[n:]
		pos += int64(n)
		if end {
			fi := s.Frame()
			if fi.Size != pos-start {
				t.Fatalf("%v: frame at %d has Size %d but %d bytes were consumed for it", f, start, fi.Size, pos-start)
			}
			frames = append(frames, FrameSpan{Start: start, FrameInfo: fi})
			start = pos
			continue
		}
		if s.Frame() != (FrameInfo{}) {
			t.Fatalf("%v: Frame() is %+v after a Split that ended nothing", f, s.Frame())
		}
		if atEOF {
			if n != 0 || len(buf) != 0 {
				t.Fatalf("%v: at EOF Split neither ended a frame nor consumed everything (n=%d, %d left)", f, n, len(buf))
			}
			break
		}
		k := max(1, min(next(), len(input)-fed))
		buf = append(buf, input[fed:fed+k]...)
		fed += k
	}
	if pos != int64(len(input)) || start != pos {
		t.Fatalf("%v: consumed %d of %d bytes, last frame ended at %d", f, pos, len(input), start)
	}
	return frames
}

// splitterCheckFrames checks what holds for the frames of any stream: they
// cover it exactly, in order, and each one's parts add up and agree with
// its bytes.
func splitterCheckFrames(t testing.TB, input []byte, frames []FrameSpan) {
	t.Helper()
	var at int64
	for i, f := range frames {
		b := input[f.Start : f.Start+f.Size]
		last := i == len(frames)-1
		switch {
		case f.Start != at:
			t.Fatalf("frame %d starts at %d, want %d", i, f.Start, at)
		case f.Size != int64(f.HeaderLen)+f.BodyLen+int64(f.TermLen) || f.HeaderLen < 0 || f.BodyLen < 0:
			t.Fatalf("frame %d: Size %d is not header %d + body %d + term %d", i, f.Size, f.HeaderLen, f.BodyLen, f.TermLen)
		case f.EOF && !last:
			t.Fatalf("frame %d ends at EOF but is not the last", i)
		case f.Size == 0 && !f.EOF:
			t.Fatalf("frame %d is empty", i)
		case f.Bad != "" && splitterBadName(f.Bad) == "":
			t.Fatalf("frame %d: Bad %q is none of the splitter's messages", i, f.Bad)
		}
		switch f.Framing {
		case FramingNDJSON:
			body := b[:f.BodyLen]
			switch {
			case f.HeaderLen != 0 || f.PlainHeader || f.Bad != "":
				t.Fatalf("ndjson frame %d has lsp fields: %+v", i, f.FrameInfo)
			case bytes.IndexByte(body, '\n') >= 0:
				t.Fatalf("ndjson frame %d has a newline in its body", i)
			case f.TermLen == 1 && b[len(b)-1] != '\n', f.TermLen == 0 && !f.EOF, f.TermLen > 1:
				t.Fatalf("ndjson frame %d: TermLen %d, EOF %v, bytes %q", i, f.TermLen, f.EOF, b)
			}
		case FramingLSP:
			switch {
			case f.TermLen != 0:
				t.Fatalf("lsp frame %d has TermLen %d", i, f.TermLen)
			case f.HeaderLen == 0:
				t.Fatalf("lsp frame %d has no header", i)
			case f.HeaderLen > MaxHeaderLine:
				t.Fatalf("lsp frame %d has a %d-byte header block", i, f.HeaderLen)
			case f.Bad != "" && f.BodyLen != 0 && !strings.HasPrefix(splitterBadName(f.Bad), "eof-in-body:"):
				t.Fatalf("lsp frame %d is bad (%s) yet has a body", i, f.Bad)
			case f.PlainHeader && string(b[:f.HeaderLen]) != fmt.Sprintf("Content-Length: %d\r\n\r\n", f.BodyLen):
				t.Fatalf("lsp frame %d: PlainHeader with header %q and a %d-byte body", i, b[:f.HeaderLen], f.BodyLen)
			case f.Bad == "" && !bytes.HasSuffix(b[:f.HeaderLen], []byte("\n\n")) && !bytes.HasSuffix(b[:f.HeaderLen], []byte("\n\r\n")):
				t.Fatalf("lsp frame %d: header %q does not end in a blank line", i, b[:f.HeaderLen])
			}
		default:
			t.Fatalf("frame %d has framing %v", i, f.Framing)
		}
		at += f.Size
	}
	if at != int64(len(input)) {
		t.Fatalf("frames cover %d of %d bytes", at, len(input))
	}
}

func TestFramingStringRoundTrips(t *testing.T) {
	for _, f := range []Framing{FramingNDJSON, FramingLSP, FramingAuto} {
		got, err := ParseFraming(f.String())
		if err != nil || got != f {
			t.Errorf("ParseFraming(%q) = %v, %v", f.String(), got, err)
		}
	}
	if got := Framing(0).String(); got != "unknown" {
		t.Errorf("Framing(0) = %q", got)
	}
	if got, err := ParseFraming(""); err != nil || got != FramingNDJSON {
		t.Errorf(`ParseFraming("") = %v, %v; want the default, ndjson`, got, err)
	}
}

func TestParseFramingErrorSaysWhatToUse(t *testing.T) {
	_, err := ParseFraming("LSP ")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`"LSP "`, "ndjson", "lsp", "auto"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestZeroSplitterSplitsNDJSON(t *testing.T) {
	var s Splitter
	if n, end := s.Split([]byte("Content-Length: 0\r\n\r\n"), false); n != 19 || !end || s.Frame().Framing != FramingNDJSON {
		t.Fatalf("zero Splitter: Split = %d, %v, Frame %+v", n, end, s.Frame())
	}
}

func TestNewSplitterReadsUnknownFramingAsNDJSON(t *testing.T) {
	for _, f := range []Framing{0, 4, 255} {
		if got := NewSplitter(f).Framing(); got != FramingNDJSON {
			t.Errorf("NewSplitter(%d).Framing() = %v", f, got)
		}
	}
}

// splitterStep is one call of Split and what it must answer.
type splitterStep struct {
	data  string
	atEOF bool
	n     int
	end   bool
	frame FrameInfo // checked when end
}

func splitterRun(t *testing.T, f Framing, steps []splitterStep) {
	t.Helper()
	s := NewSplitter(f)
	for i, st := range steps {
		n, end := s.Split([]byte(st.data), st.atEOF)
		if n != st.n || end != st.end {
			t.Fatalf("step %d: Split(%q, %v) = %d, %v; want %d, %v", i, st.data, st.atEOF, n, end, st.n, st.end)
		}
		want := FrameInfo{}
		if end {
			want = st.frame
		}
		if got := s.Frame(); got != want {
			t.Fatalf("step %d: Frame() = %+v\nwant %+v", i, got, want)
		}
	}
}

func TestSplitCallContract(t *testing.T) {
	tests := []struct {
		name    string
		framing Framing
		steps   []splitterStep
	}{
		{"ndjson without a newline consumes everything and goes on", FramingNDJSON, []splitterStep{
			{data: `{"a":`, n: 5},
			{data: `1}`, n: 2},
			{data: "\n{", n: 1, end: true, frame: FrameInfo{Framing: FramingNDJSON, Size: 8, BodyLen: 7, TermLen: 1}},
		}},
		{"ndjson ends one frame per call", FramingNDJSON, []splitterStep{
			{data: "a\nb\nc", n: 2, end: true, frame: FrameInfo{Framing: FramingNDJSON, Size: 2, BodyLen: 1, TermLen: 1}},
			{data: "b\nc", n: 2, end: true, frame: FrameInfo{Framing: FramingNDJSON, Size: 2, BodyLen: 1, TermLen: 1}},
			{data: "c", n: 1},
		}},
		{"ndjson open frame ends at EOF with no data", FramingNDJSON, []splitterStep{
			{data: "abc", n: 3},
			{data: "", atEOF: true, n: 0, end: true, frame: FrameInfo{Framing: FramingNDJSON, Size: 3, BodyLen: 3, EOF: true}},
			{data: "", atEOF: true},
		}},
		{"empty data asks for more", FramingNDJSON, []splitterStep{
			{data: ""},
			{data: "", atEOF: true},
		}},
		{"lsp waits for a whole header line", FramingLSP, []splitterStep{
			{data: "Content-Len"},
			{data: "Content-Length: 2\r"},
			{data: "Content-Length: 2\r\nContent-Ty", n: 19},
			{data: "Content-Ty"},
			{data: "Content-Type: x\r\n\r", n: 17},
			{data: "\r\n{}", n: 4, end: true, frame: FrameInfo{Framing: FramingLSP, Size: 40, HeaderLen: 38, BodyLen: 2}},
		}},
		{"lsp streams the body in pieces", FramingLSP, []splitterStep{
			{data: "Content-Length: 10\r\n\r\n{\"a\"", n: 26},
			{data: ":1,", n: 3},
			{data: "", n: 0},
			{data: "\"b}Content", n: 3, end: true, frame: FrameInfo{Framing: FramingLSP, Size: 32, HeaderLen: 22, PlainHeader: true, BodyLen: 10}},
			{data: "Content"},
		}},
		{"lsp short body ends at EOF with no data", FramingLSP, []splitterStep{
			{data: "Content-Length: 10\r\n\r\n{}", n: 24},
			{data: "", atEOF: true, n: 0, end: true, frame: FrameInfo{Framing: FramingLSP, Size: 24, HeaderLen: 22, BodyLen: 2, EOF: true,
				Bad: fmt.Sprintf(frameBadEOFInBodyWords, 10, 2)}},
		}},
		{"lsp header lines ended at EOF with no data", FramingLSP, []splitterStep{
			{data: "Content-Length: 10\r\n", n: 20},
			{data: "", atEOF: true, n: 0, end: true, frame: FrameInfo{Framing: FramingLSP, Size: 20, HeaderLen: 20, EOF: true, Bad: frameBadEOFInHeader}},
			{data: "", atEOF: true},
		}},
		{"auto waits through whitespace and a prefix", FramingAuto, []splitterStep{
			{data: " \r\n"},
			{data: " \r\n\tconTENT"},
			{data: " \r\n\tconTENT-t"},
			{data: " \r\n\tconTENT-typ"},
			{data: " \r\n\tconTENT-type:", n: 3, end: true, frame: FrameInfo{Framing: FramingLSP, Size: 3, HeaderLen: 3, Bad: frameBadNotHeader}},
		}},
		{"auto decides ndjson on the first other byte", FramingAuto, []splitterStep{
			{data: "\n"},
			{data: "\n{", n: 1, end: true, frame: FrameInfo{Framing: FramingNDJSON, Size: 1, TermLen: 1}},
			{data: "{", n: 1},
		}},
		{"auto prefix at EOF is ndjson", FramingAuto, []splitterStep{
			{data: "Content-Length"},
			{data: "Content-Length", atEOF: true, n: 14, end: true, frame: FrameInfo{Framing: FramingNDJSON, Size: 14, BodyLen: 14, EOF: true}},
		}},
		{"auto whitespace only at EOF is ndjson", FramingAuto, []splitterStep{
			{data: "  "},
			{data: "  ", atEOF: true, n: 2, end: true, frame: FrameInfo{Framing: FramingNDJSON, Size: 2, BodyLen: 2, EOF: true}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { splitterRun(t, tt.framing, tt.steps) })
	}
}

func TestSplitterFramingIsAutoUntilDecided(t *testing.T) {
	s := NewSplitter(FramingAuto)
	s.Split([]byte("  Content-"), false)
	if got := s.Framing(); got != FramingAuto {
		t.Fatalf("undecided: Framing() = %v", got)
	}
	s.Split([]byte("  Content-Length: 0\r\n\r\n"), false)
	if got := s.Framing(); got != FramingLSP {
		t.Fatalf("decided: Framing() = %v", got)
	}
	s = NewSplitter(FramingAuto)
	s.Split(nil, true)
	if got := s.Framing(); got != FramingNDJSON {
		t.Fatalf("empty stream: Framing() = %v", got)
	}
}

func TestSplitLSPCutsHeaderAtMaxHeaderLine(t *testing.T) {
	long := strings.Repeat("x", MaxHeaderLine+10)
	filler := "X-Filler: " + strings.Repeat("f", 1000) + "\r\n"
	fill := strings.Repeat(filler, MaxHeaderLine/len(filler))
	exact := "Content-Length: 2\r\n" + fill
	exact += "X-Pad: " + strings.Repeat("p", MaxHeaderLine-len(exact)-len("X-Pad: \r\n\r\n")) + "\r\n\r\n"
	tests := []struct {
		name  string
		input string
		want  []FrameInfo
	}{
		{"a header line longer than the limit is cut there",
			long + "\r\nContent-Length: 2\r\n\r\n{}",
			[]FrameInfo{
				{Framing: FramingLSP, Size: MaxHeaderLine, HeaderLen: MaxHeaderLine, Bad: frameBadLineTooLong},
				{Framing: FramingLSP, Size: 12, HeaderLen: 12, Bad: frameBadNotHeader},
				{Framing: FramingLSP, Size: 23, HeaderLen: 21, BodyLen: 2, PlainHeader: true},
			}},
		{"a header block longer than the limit is cut there",
			"Content-Length: 2\r\n" + fill + fill + "\r\n{}",
			[]FrameInfo{
				{Framing: FramingLSP, Size: MaxHeaderLine, HeaderLen: MaxHeaderLine, Bad: frameBadBlockTooLong},
			}},
		{"a header block of exactly the limit is read",
			exact + "{}Content-Length: 0\r\n\r\n",
			[]FrameInfo{
				{Framing: FramingLSP, Size: MaxHeaderLine + 2, HeaderLen: MaxHeaderLine, BodyLen: 2},
				{Framing: FramingLSP, Size: 21, HeaderLen: 21, PlainHeader: true},
			}},
		{"a header line that fills the limit leaves no room for the blank line",
			"X: " + strings.Repeat("y", MaxHeaderLine-len("X: \r\n")) + "\r\n\r\n",
			[]FrameInfo{
				{Framing: FramingLSP, Size: MaxHeaderLine, HeaderLen: MaxHeaderLine, Bad: frameBadBlockTooLong},
				{Framing: FramingLSP, Size: 2, HeaderLen: 2, Bad: frameBadEmptyStart},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(exact) != MaxHeaderLine {
				t.Fatalf("bad test: exact block is %d bytes", len(exact))
			}
			input := []byte(tt.input)
			whole := SplitAll(input, FramingLSP)
			splitterCheckFrames(t, input, whole)
			for i, w := range tt.want {
				if i >= len(whole) {
					t.Fatalf("%d frames, want at least %d", len(whole), len(tt.want))
				}
				if whole[i].FrameInfo != w {
					t.Errorf("frame %d = %+v\nwant %+v", i, whole[i].FrameInfo, w)
				}
			}
			for _, size := range []int{1, 1000, 4096, MaxHeaderLine, MaxHeaderLine + 1} {
				fed := splitterFeed(t, input, FramingLSP, func() int { return size })
				if fmt.Sprint(fed) != fmt.Sprint(whole) {
					t.Errorf("fed in pieces of %d: frames differ from SplitAll", size)
				}
			}
		})
	}
}

func TestSplitAutoDecidesWithinMaxHeaderLine(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  Framing
	}{
		{"header after a little whitespace", "\r\n  \tContent-Length: 0\r\n\r\n", FramingLSP},
		{"header that ends at the limit", strings.Repeat(" ", MaxHeaderLine-len("Content-Type:")) + "Content-Type: x\r\nContent-Length: 0\r\n\r\n", FramingLSP},
		{"header cut by the limit", strings.Repeat(" ", MaxHeaderLine-len("Content-Type")) + "Content-Type: x\r\n", FramingNDJSON},
		{"header after the limit", strings.Repeat(" ", MaxHeaderLine) + "Content-Length: 0\r\n\r\n", FramingNDJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := []byte(tt.input)
			whole := SplitAll(input, FramingAuto)
			splitterCheckFrames(t, input, whole)
			if len(whole) == 0 || whole[0].Framing != tt.want {
				t.Fatalf("framing %v, want %v", whole[0].Framing, tt.want)
			}
			for _, size := range []int{1, 777, 8192} {
				fed := splitterFeed(t, input, FramingAuto, func() int { return size })
				if fmt.Sprint(fed) != fmt.Sprint(whole) {
					t.Errorf("fed in pieces of %d: frames differ from SplitAll", size)
				}
			}
		})
	}
}

func TestSplitStreams10MiBFrameInPieces(t *testing.T) {
	if testing.Short() {
		t.Skip("10 MiB fed a byte at a time")
	}
	line := bytes.Repeat([]byte(`{"x":"0123456789abcdef\u0000"}`), (10<<20)/30+1)[:10<<20]
	ndjson := append(append([]byte{}, line...), "\r\n{}"...)
	lsp := append(fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", len(line)), line...)
	lsp = append(lsp, "Content-Length: 2\r\n\r\n{}"...)
	tests := []struct {
		framing Framing
		input   []byte
		want    []FrameSpan
	}{
		{FramingNDJSON, ndjson, []FrameSpan{
			{0, FrameInfo{Framing: FramingNDJSON, Size: int64(len(line)) + 2, BodyLen: int64(len(line)) + 1, TermLen: 1}},
			{int64(len(line)) + 2, FrameInfo{Framing: FramingNDJSON, Size: 2, BodyLen: 2, EOF: true}},
		}},
		{FramingAuto, lsp, []FrameSpan{
			{0, FrameInfo{Framing: FramingLSP, Size: int64(len(lsp) - 23), HeaderLen: len(lsp) - 23 - len(line), BodyLen: int64(len(line)), PlainHeader: true}},
			{int64(len(lsp) - 23), FrameInfo{Framing: FramingLSP, Size: 23, HeaderLen: 21, BodyLen: 2, PlainHeader: true}},
		}},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tt := range tests {
		for _, chunk := range []string{"1", "7", "4096", "65536", "random"} {
			t.Run(tt.framing.String()+"/"+chunk, func(t *testing.T) {
				next := func() int { return rng.IntN(64<<10) + 1 }
				if size, err := strconv.Atoi(chunk); err == nil {
					next = func() int { return size }
				}
				got := splitterFeed(t, tt.input, tt.framing, next)
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Fatalf("frames %+v\nwant %+v", got, tt.want)
				}
			})
		}
	}
}

// TestSplitBadMessagesNeverRepeatPeerBytes feeds malformed headers made of
// a marker and checks that no Bad message carries it.
func TestSplitBadMessagesNeverRepeatPeerBytes(t *testing.T) {
	const mark = "QQZZ"
	input := []byte(mark + "\r\n" +
		"Content-Length: " + mark + "\r\n\r\n" +
		"X-" + mark + ": " + mark + "\r\n\r\n" +
		"Content-Length: 1\r\nContent-Length: 2" + mark + "\r\n\r\n" +
		"Content-Length: 1\r\nContent-Length: 2\r\n\r\n" +
		"\r\n" +
		"Content-Length: 99\r\n\r\n" + mark)
	frames := SplitAll(input, FramingLSP)
	splitterCheckFrames(t, input, frames)
	seen := map[string]bool{}
	for _, f := range frames {
		if strings.Contains(f.Bad, mark) {
			t.Errorf("Bad repeats peer bytes: %q", f.Bad)
		}
		seen[splitterBadName(f.Bad)] = true
	}
	for _, want := range []string{"not-header", "length-value", "no-length", "lengths-differ", "empty-start", "eof-in-body:99:4"} {
		if !seen[want] {
			t.Errorf("no frame with bad=%s; got %v", want, seen)
		}
	}
}

func TestSplitBadMessagesAreSentences(t *testing.T) {
	for _, msg := range []string{frameBadEmptyStart, frameBadNotHeader, frameBadNoLength, frameBadLengthValue,
		frameBadLengthsDiffer, frameBadLineTooLong, frameBadBlockTooLong, frameBadEOFInHeader, fmt.Sprintf(frameBadEOFInBodyWords, 10, 3)} {
		if msg == "" || msg[0] < 'A' || msg[0] > 'Z' || !strings.HasSuffix(msg, ".") || strings.Contains(msg, "%!") {
			t.Errorf("%q is not a sentence", msg)
		}
	}
	if msg := fmt.Sprintf(frameBadEOFInBodyWords, 10, 3); !strings.Contains(msg, "10") || !strings.Contains(msg, "3 arrived") {
		t.Errorf("%q does not say how many bytes were declared and how many arrived", msg)
	}
	if MaxHeaderLine != 64<<10 {
		t.Errorf("the too-long messages say 64 KiB but MaxHeaderLine is %d", MaxHeaderLine)
	}
}

func TestSplitDoesNotAllocatePerFrame(t *testing.T) {
	for _, tt := range []struct {
		framing Framing
		frame   []byte
	}{
		{FramingNDJSON, splitterNDJSONFrame(1024)},
		{FramingLSP, splitterLSPFrame(1024)},
		{FramingAuto, splitterLSPFrame(1024)},
	} {
		input := bytes.Repeat(tt.frame, 64)
		s := NewSplitter(tt.framing)
		allocs := testing.AllocsPerRun(100, func() {
			data := input
			for len(data) > 0 {
				n, end := s.Split(data, false)
				if !end {
					panic("frame did not end")
				}
				data = data[n:]
			}
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations per 64 frames", tt.framing, allocs)
		}
	}
}

// TestSplitNDJSONIsLinesAfterNewline checks ndjson against the obvious
// reference: bytes.SplitAfter on '\n'.
func TestSplitNDJSONIsLinesAfterNewline(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		input := splitterRandomStream(rng)
		got, want := SplitAll(input, FramingNDJSON), splitterLines(input)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("input %q\n got %v\nwant %v", input, got, want)
		}
	}
}

// splitterLines is the reference ndjson framer.
func splitterLines(input []byte) []FrameSpan {
	var want []FrameSpan
	var at int64
	for _, line := range bytes.SplitAfter(input, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		fi := FrameInfo{Framing: FramingNDJSON, Size: int64(len(line)), BodyLen: int64(len(line))}
		if line[len(line)-1] == '\n' {
			fi.BodyLen--
			fi.TermLen = 1
		} else {
			fi.EOF = true
		}
		want = append(want, FrameSpan{at, fi})
		at += int64(len(line))
	}
	return want
}

// TestSplitLSPFindsEveryWellFormedFrame builds streams of well-formed
// frames (odd header spellings and hostile bodies included) and checks the
// splitter finds exactly those frames.
func TestSplitLSPFindsEveryWellFormedFrame(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		var input []byte
		var want []FrameSpan
		for range rng.IntN(6) {
			start := len(input)
			body := splitterRandomStream(rng)
			var plain bool
			input, plain = splitterAppendLSP(rng, input, body)
			hdr := len(input) - start
			input = append(input, body...)
			want = append(want, FrameSpan{int64(start), FrameInfo{Framing: FramingLSP, Size: int64(hdr + len(body)), HeaderLen: hdr, BodyLen: int64(len(body)), PlainHeader: plain}})
		}
		for _, f := range []Framing{FramingLSP, FramingAuto} {
			if len(want) == 0 && f == FramingAuto {
				continue
			}
			got := SplitAll(input, f)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%v: input %q\n got %v\nwant %v", f, input, got, want)
			}
			fed := splitterFeed(t, input, f, func() int { return rng.IntN(40) + 1 })
			if fmt.Sprint(fed) != fmt.Sprint(want) {
				t.Fatalf("%v fed in pieces: input %q\n got %v\nwant %v", f, input, fed, want)
			}
		}
	}
}

// TestSplitFedInRandomPiecesMatchesSplitAll is the property the tap relies
// on: however a stream is cut into reads, the frames are the same, and
// their bytes put back together are the stream.
func TestSplitFedInRandomPiecesMatchesSplitAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := range n {
		input := splitterRandomStream(rng)
		if i%100 == 0 {
			// Now and then something long enough to hit MaxHeaderLine.
			input = append(input, bytes.Repeat([]byte{" x\r"[rng.IntN(3)]}, MaxHeaderLine+rng.IntN(100)-50)...)
			input = append(input, splitterRandomStream(rng)...)
		}
		for _, f := range []Framing{FramingNDJSON, FramingLSP, FramingAuto} {
			whole := SplitAll(input, f)
			splitterCheckFrames(t, input, whole)
			maxPiece := []int{1, 3, 16, 300, 100000}[rng.IntN(5)]
			fed := splitterFeed(t, input, f, func() int { return rng.IntN(maxPiece) + 1 })
			if fmt.Sprint(fed) != fmt.Sprint(whole) {
				t.Fatalf("%v: input %q\nfed  %v\nwhole %v", f, input, fed, whole)
			}
		}
	}
}

// splitterRandomStream returns a short stream made of pieces that matter to
// framers: JSON, headers (good, odd and broken), blank lines, CR, NUL,
// invalid UTF-8 and random bytes.
func splitterRandomStream(rng *rand.Rand) []byte {
	pieces := []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "\n", "\r\n", "\r", "\n\n", " ", "\t", "\x00", "\xff\xfe", "é",
		"Content-Length: ", "content-length:", "CONTENT-TYPE: utf-8", "Content-Length: 2\r\n\r\n{}",
		"Content-Length: 0\r\n\r\n", "Content-Length: 5\n\n", "Content-Length: 10\r\n", "Content-Length: -1",
		"Content-Length: 99999999999999999999", "Content-Length: 3\r\nContent-Length: 4\r\n\r\n",
		"X-Thing: y\r\n", ": nameless\r\n", "not a header\r\n", "Content-Length: 1\r\n\r\nx", "Content-Len",
		"12", "0", "{}", "\r\n\r\n",
	}
	var out []byte
	for range rng.IntN(12) {
		if rng.IntN(8) == 0 {
			for range rng.IntN(8) {
				out = append(out, byte(rng.IntN(256)))
			}
			continue
		}
		out = append(out, pieces[rng.IntN(len(pieces))]...)
	}
	return out
}

// splitterAppendLSP appends a well-formed header block for body, spelled
// plainly or oddly, and reports whether it is the plain one.
func splitterAppendLSP(rng *rand.Rand, dst, body []byte) ([]byte, bool) {
	start := len(dst)
	canonical := fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))
	if rng.IntN(3) == 0 {
		return append(dst, canonical...), true
	}
	eol := []string{"\r\n", "\n"}[rng.IntN(2)]
	name := []string{"Content-Length", "content-length", "CONTENT-LENGTH", "Content-length"}[rng.IntN(4)]
	if rng.IntN(2) == 0 {
		dst = append(dst, "Content-Type: application/vscode-jsonrpc; charset=utf-8"+eol...)
	}
	sep := []string{"", " ", "  ", "\t"}[rng.IntN(4)]
	after := []string{"", " "}[rng.IntN(2)]
	dst = fmt.Appendf(dst, "%s:%s%0*d%s%s", name, sep, rng.IntN(3)+1, len(body), after, eol)
	if rng.IntN(3) == 0 {
		dst = append(dst, "X-Unknown: Content-Length: 7"+eol...)
	}
	dst = append(dst, eol...)
	return dst, string(dst[start:]) == canonical
}

func splitterNDJSONFrame(size int) []byte {
	frame := []byte(`{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("a", size) + `"}}`)
	frame = frame[:size-1]
	return append(frame, '\n')
}

func splitterLSPFrame(size int) []byte {
	hdr := "Content-Length: 1000\r\n\r\n"
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("a", size) + `"}}`)[:size-len(hdr)]
	return append([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))), body...)
}

func benchmarkSplit(b *testing.B, f Framing, frame []byte) {
	input := bytes.Repeat(frame, 64)
	s := NewSplitter(f)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	data := input
	for b.Loop() {
		if len(data) == 0 {
			data = input
		}
		n, end := s.Split(data, false)
		if !end {
			b.Fatal("frame did not end")
		}
		data = data[n:]
	}
}

func BenchmarkSplitNDJSON1KiB(b *testing.B) {
	benchmarkSplit(b, FramingNDJSON, splitterNDJSONFrame(1024))
}
func BenchmarkSplitLSP1KiB(b *testing.B) { benchmarkSplit(b, FramingLSP, splitterLSPFrame(1024)) }

// A malformed Content-Length header block is a frame of kind not-json: a
// strict server owes it -32700, as any unreadable input; a host owes
// nothing to unreadable server output.
func TestBadHeaderIsOwedAParseErrorOnlyByAServer(t *testing.T) {
	spans := SplitAll([]byte("Content-Length: lots\r\n\r\n{}"), FramingLSP)
	if len(spans) == 0 || spans[0].Bad == "" {
		t.Fatalf("the header block was not found bad: %+v", spans)
	}
	info := spans[0].FrameInfo
	m := ClassifyFramed(nil, info, H2S, LSP)
	if m.Kind != KindNotJSON || !m.Has(CodeBadHeader) {
		t.Fatalf("kind %s, findings %v; want not-json with bad-header", m.Kind, m.Findings)
	}
	if m.Answer == nil || m.Answer.Code != ParseError {
		t.Errorf("a server owes %+v; want the -32700 parse error", m.Answer)
	}
	if m := ClassifyFramed(nil, info, S2H, LSP); m.Answer != nil {
		t.Errorf("a host owes %+v for a bad header from the server; want nothing", m.Answer)
	}
}
