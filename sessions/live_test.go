package sessions

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEndsWithExitTellsAFinishedSessionFromOneStillWritten(t *testing.T) {
	dir := t.TempDir()
	head := `{"rpctap":"session","version":1,"id":"x","started":"2026-11-29T18:00:00.000000Z","argv":["s"]}` + "\n"
	frame := `{"t":1,"dir":"h2s","frame":"{\"event\":\"exit\"}"}` + "\n"
	cases := map[string]bool{
		head + frame: false, // the text is in a frame, not an exit record
		head + frame + `{"t":2,"event":"exit","code":0}` + "\n": true,
		head + `{"t":2,"event":"exit","code":0}`:                true, // no final newline
		head:                                                    false,
	}
	for content, want := range cases {
		p := filepath.Join(dir, "s.jsonl")
		os.WriteFile(p, []byte(content), 0o600)
		if got := EndsWithExit(p); got != want {
			t.Errorf("EndsWithExit(%q) = %v, want %v", content, got, want)
		}
	}
}
