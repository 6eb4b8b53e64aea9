package tap

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/sessions/check"
)

// Frames too large for the recorder to hold (parseLimit) are not lost: they
// are streamed into the session file, and the record is still the frame's
// exact bytes, with its header block and its eof mark, so that replaying the
// file gives back what each side read.
func TestSessionFileHoldsFramesLargerThanTheRecorderHoldsExactly(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("moves hundreds of MiB")
	}
	big := bytes.Repeat([]byte("0123456789abcdef\x00\xff\r"), (17<<20)/19)
	small := []byte(`{"jsonrpc":"2.0","method":"after"}`)
	lsp := func(header string, body []byte) []byte {
		return append([]byte(header), body...)
	}
	plain := func(body []byte) []byte { return lsp(fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)), body) }
	cases := []struct {
		name    string
		framing classify.Framing
		input   []byte
	}{
		{"ndjson line", classify.FramingNDJSON, bytes.Join([][]byte{big, small, nil}, []byte("\n"))},
		{"ndjson last line without newline", classify.FramingNDJSON, bytes.Join([][]byte{small, big}, []byte("\n"))},
		{"lsp plain header", classify.FramingLSP, append(plain(big), plain(small)...)},
		{"lsp other headers", classify.FramingLSP, append(lsp(fmt.Sprintf("Content-Type: application/json\r\ncontent-length: %d\r\n\r\n", len(big)), big), plain(small)...)},
		{"lsp body cut by the end of the stream", classify.FramingLSP, lsp(fmt.Sprintf("Content-Length: %d\r\n\r\n", len(big)+100), big)},
		{"auto lsp with a huge first frame", classify.FramingAuto, append(plain(big), plain(small)...)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startSession(t, Options{Argv: []string{"/bin/cat"}, Framing: c.framing, Record: true, NoRedact: true})
			go func() {
				s.in.Write(c.input)
				s.in.Close()
			}()
			if res := s.wait(t, generous); res.ExitCode != 0 {
				t.Fatalf("Result %+v", res)
			}
			if got := s.out.bytes(); !bytes.Equal(got, c.input) {
				t.Fatalf("the host read: %s", firstDiff(got, c.input))
			}
			_, evs, skipped := readSession(t, s.tap.Path())
			if skipped != 0 {
				t.Errorf("the reader skipped %d lines of the session file", skipped)
			}
			framing := c.framing
			if framing == classify.FramingAuto {
				framing = classify.FramingLSP
			}
			for _, dir := range []classify.Direction{classify.H2S, classify.S2H} {
				if got := replay(evs, dir, framing); !bytes.Equal(got, c.input) {
					t.Errorf("%s frames replayed: %s", dir, firstDiff(got, c.input))
				}
			}
		})
	}
}

// A frame over the recorder's parse limit is judged live from its first
// bytes (oversize); the session header names the limit, so that a reader
// of the file judges it the same way and not by classify.MaxParse.
func TestSessionFileJudgesFramesOverTheParseLimitAsTheTapDid(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("moves tens of MiB")
	}
	body := bytes.Repeat([]byte("x"), parseLimit+1024)
	big := append(append([]byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`), body...), `"}}`...)
	s := startSession(t, Options{Argv: []string{"/bin/cat"}, Framing: classify.FramingNDJSON, Record: true, NoRedact: true})
	go func() {
		s.in.Write(append(big, '\n'))
		s.in.Close()
	}()
	if res := s.wait(t, generous); res.ExitCode != 0 {
		t.Fatalf("Result %+v", res)
	}
	h, _, _ := readSession(t, s.tap.Path())
	if h.ParseLimit != parseLimit {
		t.Errorf("the session header says parse limit %d, want the tap's %d", h.ParseLimit, parseLimit)
	}
	f, err := os.Open(s.tap.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := check.Run(f, check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rep.Findings, func(f check.Finding) bool { return f.Code == classify.CodeOversize }) {
		t.Errorf("Check of the file found %+v, want oversize for the %d-byte frame", rep.Findings, len(big))
	}
}

// A frame too large for the recorder to hold whose bytes are valid UTF-8
// is recorded in "frame", as one held whole is (frame_b64 is for bytes
// that are not UTF-8), with its derived fields (kind, id, method), and
// with its secrets masked.
func TestSessionFileRecordsALargeUTF8FrameAsTextWithItsDerivedFields(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("moves tens of MiB")
	}
	const unit = "é✓ plain \u2028 \\ \" "
	text := strings.Repeat(unit, (parseLimit+1<<20)/len(unit))
	big := []byte(`{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"echo","arguments":{"token":"s3cr3t-value-42","text":"` + strings.ReplaceAll(strings.ReplaceAll(text, `\`, `\\`), `"`, `\"`) + `"}}}`)
	for _, redact := range []bool{false, true} {
		t.Run(fmt.Sprintf("redact %v", redact), func(t *testing.T) {
			s := startSession(t, Options{Argv: []string{"/bin/cat"}, Framing: classify.FramingNDJSON, Record: true, NoRedact: !redact,
				Env: []string{"PATH=" + os.Getenv("PATH"), "SERVICE_AUTH_TOKEN=s3cr3t-value-42"}})
			go func() {
				s.in.Write(append(big, '\n'))
				s.in.Close()
			}()
			if res := s.wait(t, generous); res.ExitCode != 0 {
				t.Fatalf("Result %+v", res)
			}
			data, err := os.ReadFile(s.tap.Path())
			if err != nil {
				t.Fatal(err)
			}
			want := big
			if redact {
				want = bytes.ReplaceAll(big, []byte("s3cr3t-value-42"), []byte("***SERVICE_AUTH_TOKEN***"))
			}
			if len(big) <= parseLimit {
				t.Fatalf("the frame is %d bytes, no more than the recorder holds", len(big))
			}
			for _, line := range bytes.Split(data, []byte("\n")) {
				if len(line) < parseLimit {
					continue
				}
				if bytes.Contains(line, []byte(`"frame_b64"`)) {
					t.Fatalf("the %d-byte UTF-8 frame is recorded in frame_b64 (%d bytes)", len(big), len(line))
				}
				for _, field := range []string{`"kind":"request"`, `"id":"big-1"`, `"method":"tools/call"`} {
					if !bytes.Contains(line[:200], []byte(field)) {
						t.Errorf("the record begins %q, without %s", line[:200], field)
					}
				}
				if redact != bytes.Contains(line[:200], []byte(`"redacted":true`)) {
					t.Errorf("the record begins %q: redacted should be %v", line[:200], redact)
				}
				ev, err := sessions.NewReader(bytes.NewReader(line)).Next()
				if err != nil || !bytes.Equal(ev.Frame, want) {
					t.Errorf("the record does not read back as the frame: %v, %d bytes of %d", err, len(ev.Frame), len(want))
				}
				return
			}
			t.Fatal("the session file has no record of the large frame")
		})
	}
}

// A large frame's bytes are judged text or not as they come, in pieces
// that cut characters anywhere: as utf8.Valid judges them whole.
func TestUTF8CheckJudgesBytesInPiecesAsTheyAreWhole(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"a", "é", "✓", "😀", "\u2028", "\xff", "\xe2\x80", "\x80", "\xf0\x9f", "\xed\xa0\x80", "\xef\xbf\xbd"}
	for range 5000 {
		var b []byte
		for range rnd.IntN(12) {
			p := pieces[rnd.IntN(len(pieces))]
			if rnd.IntN(4) != 0 {
				p = pieces[rnd.IntN(5)] // mostly valid
			}
			b = append(b, p...)
		}
		var c utf8Check
		for rest := b; len(rest) > 0; {
			n := min(len(rest), 1+rnd.IntN(4))
			c.Write(rest[:n])
			rest = rest[n:]
		}
		if c.valid() != utf8.Valid(b) {
			t.Fatalf("%q in pieces: valid %v, utf8.Valid says %v", b, c.valid(), utf8.Valid(b))
		}
	}
}
