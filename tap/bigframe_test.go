package tap

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions/check"
)

// Invariant 3 for frames too large for the recorder to hold (parseLimit): they
// are streamed into the session file, and the record is still the frame's
// exact bytes, with its header block and its eof mark, so that replaying
// the file gives back what each side read.
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
