package sessions_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// FuzzRoundTrip writes any frame and header bytes in any direction and
// reads them back: the bytes must come back exactly.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), []byte(nil), uint8(0), int64(1520))
	f.Add([]byte("a\r\n\x00\u2028\u2029\x7f\"\\"), []byte("Content-Length: 3\r\n\r\n"), uint8(1), int64(0))
	f.Add([]byte("\xff\xfe\xed\xa0\x80"), []byte("\xc0\x80"), uint8(2), int64(-1))
	f.Add([]byte(`\ud83d\u0000`), []byte{}, uint8(3), int64(1<<62))
	f.Add([]byte(""), []byte{}, uint8(4), int64(0))
	f.Fuzz(func(t *testing.T, frame, header []byte, dir uint8, at int64) {
		d := classify.Direction(dir%3 + 1)
		if dir&4 != 0 && header == nil {
			header = []byte{} // an empty header is kept apart from none
		}
		if dir&4 == 0 && len(header) == 0 {
			header = nil
		}
		var buf bytes.Buffer
		w, err := sessions.NewWriter(&buf, testHeader())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFrame(sessions.FrameRecord{T: at, Dir: d, Frame: frame, Header: header}); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFrame(sessions.FrameRecord{T: at, Dir: d, Frame: header}); err != nil {
			t.Fatal(err)
		}
		r := sessions.NewReader(&buf)
		e, err := r.Next()
		if err != nil {
			t.Fatalf("first record: %v (skipped %d)", err, r.Skipped())
		}
		if !bytes.Equal(e.Frame, frame) || e.Frame == nil {
			t.Errorf("frame %q read back as %q", frame, e.Frame)
		}
		if !bytes.Equal(e.Header, header) || (e.Header == nil) != (header == nil) {
			t.Errorf("header %#v read back as %#v", header, e.Header)
		}
		if e.Dir != d || e.T != at || e.Line != 2 {
			t.Errorf("read dir %v t %d line %d, want %v %d 2", e.Dir, e.T, e.Line, d, at)
		}
		e, err = r.Next()
		if err != nil || !bytes.Equal(e.Frame, header) || e.Line != 3 {
			t.Errorf("second record: %+v, %v", e, err)
		}
	})
}

// FuzzReadLine feeds the Reader any line: it must not panic, must take
// nothing for a record that is not valid JSON, and must read a frame as
// encoding/json does.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte(`{"t":1,"dir":"h2s","frame":"a\"b\u00e9\ud83d\ude00"}`))
	f.Add([]byte(`{"t":1,"dir":"h2s","frame_b64":"/w==","header":"\r\n"}`))
	f.Add([]byte(`{"t":1,"event":"exit","code":3,"x":[{"y":null}]}`))
	f.Add([]byte(`{"t":1,"dir":"h2s","frame":"\ud800"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.ReplaceAll(line, []byte("\n"), []byte(" "))
		r := sessions.NewReader(bytes.NewReader(append(bytes.Clone(line), '\n')))
		e, err := r.Next()
		if err != nil {
			return
		}
		if _, ok := r.Header(); ok {
			return
		}
		if !json.Valid(line) {
			t.Fatalf("read %+v from a line that is not JSON: %q", e, line)
		}
		if !e.IsFrame() {
			return
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(line, &fields); err != nil {
			t.Fatal(err)
		}
		raw, ok := fields["frame"]
		if !ok || !utf8.Valid(raw) {
			return // frame_b64, or bytes encoding/json would replace
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if string(e.Frame) != want {
			t.Errorf("frame of %q read as %q, encoding/json reads %q", line, e.Frame, want)
		}
	})
}
