package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

// RecordingFraming finds each direction's note, whichever direction's
// first frame comes first: the one framing both share, or auto.
func TestRecordingFramingReadsEachDirectionsNote(t *testing.T) {
	const header = `{"rpctap":"session","version":1,"id":"x","started":"2026-11-29T18:42:00.123456Z","framing":"auto"}` + "\n"
	for body, want := range map[string]classify.Framing{
		`{"t":1,"event":"note","dir":"h2s","text":"framing: lsp"}` + "\n" + `{"t":2,"dir":"h2s","frame":"{}"}` + "\n" + `{"t":3,"dir":"s2h","frame":"{}"}` + "\n": classify.FramingAuto,
		`{"t":1,"dir":"h2s","frame":"{}"}` + "\n" + `{"t":2,"event":"note","dir":"s2h","text":"framing: lsp"}` + "\n" + `{"t":3,"dir":"s2h","frame":"{}"}` + "\n": classify.FramingAuto,
		`{"t":1,"event":"note","dir":"h2s","text":"framing: lsp"}` + "\n" + `{"t":2,"event":"note","dir":"s2h","text":"framing: lsp"}` + "\n":                     classify.FramingLSP,
		`{"t":1,"event":"note","text":"framing: lsp"}` + "\n" + `{"t":2,"dir":"h2s","frame":"{}"}` + "\n":                                                         classify.FramingLSP,
		`{"t":1,"dir":"h2s","frame":"{}"}` + "\n" + `{"t":3,"dir":"s2h","frame":"{}"}` + "\n":                                                                     classify.FramingNDJSON,
	} {
		path := filepath.Join(t.TempDir(), "s.jsonl")
		os.WriteFile(path, []byte(header+body), 0o600)
		if got, err := FramingOf(path); err != nil || got != want {
			t.Errorf("%s: %s, %v; want %s", strings.ReplaceAll(body, "\n", " "), got, err, want)
		}
	}
}
