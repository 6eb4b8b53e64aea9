package tui

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rpctap/rpctap/source"
)

// The header says how the server ended when it failed: its exit status,
// or the signal that ended it, from the session's exit record.
func TestTheHeaderSaysTheStatusOfAServerThatFailed(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ exit, want string }{
		{`{"t":9,"event":"exit","code":7}`, "recorded, exit 7"},
		{`{"t":9,"event":"exit","code":143,"signal":"SIGTERM"}`, "recorded, SIGTERM"},
	} {
		path := filepath.Join(dir, c.want+".jsonl")
		os.WriteFile(path, []byte(`{"rpctap":"session","version":1,"id":"x","started":"2026-01-01T00:00:00Z","name":"srv"}`+"\n"+
			`{"t":5,"dir":"err","frame":"Error: missing API_KEY"}`+"\n"+c.exit+"\n"), 0o600)
		tm := startProgram(t, []*source.Source{openFile(t, path)}, 100, 24)
		waitFor(t, tm, "srv  "+c.want+"  ")
		finalView(t, tm)
	}
}
