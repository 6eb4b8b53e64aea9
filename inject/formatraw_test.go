package inject

import (
	"bytes"
	"testing"
)

// What FormatRaw writes, ParseRaw reads back as the same frames, for every
// catalog entry and for bytes the raw syntax escapes.
func TestFormatRawRoundTripsThroughParseRaw(t *testing.T) {
	cases := map[string][][]byte{
		"escapes": {
			[]byte(`{"a":"\\x41 \\c \" \\\\ \u00e9"}`),
			[]byte("ctl \x00\x1b\x7f\r\n tab\t not-utf8 \xff\xfe end\\"),
			[]byte(`back\`),
			[]byte(`\\x`),
		},
	}
	for _, e := range Catalog() {
		if e.Sized {
			continue
		}
		frames, err := e.Frames(Params{ID: `"rpctap-7"`, Tools: []Tool{listTool}})
		if err != nil {
			t.Fatal(err)
		}
		cases[e.Name] = frames
	}
	for name, frames := range cases {
		text := FormatRaw(frames)
		got, err := ParseRaw(text)
		if err != nil {
			t.Errorf("%s: ParseRaw(%q): %v", name, text, err)
			continue
		}
		if len(got) != len(frames) {
			t.Errorf("%s: %d frames back from %q, want %d", name, len(got), text, len(frames))
			continue
		}
		for i := range got {
			if got[i].Raw || !bytes.Equal(got[i].Body, frames[i]) {
				t.Errorf("%s frame %d: back as %q (raw %v) from %q, want %q", name, i, got[i].Body, got[i].Raw, text, frames[i])
			}
		}
	}
}
