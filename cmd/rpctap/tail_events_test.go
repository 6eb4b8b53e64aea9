package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tail says what a session is missing, as the view does: each gap (how
// many frames of which direction the tap could not record), in text and
// in --json, where it is an object of its own.
func TestTailPrintsTheGapsOfASession(t *testing.T) {
	header := `{"rpctap":"session","version":1,"id":"x","started":"2026-12-02T00:00:00Z","argv":["srv"],"framing":"ndjson","profile":"mcp"}`
	path := filepath.Join(t.TempDir(), "s.jsonl")
	body := strings.Join([]string{header,
		`{"t":1000,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}"}`,
		`{"t":2000,"event":"gap","dir":"s2h","missing":24}`,
		`{"t":3000,"event":"exit","code":0}`}, "\n") + "\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if text, want := string(tailOf(t, path, false)), "# 24 frames toward the host missing: the tap could not record them"; !strings.Contains(text, want) {
		t.Errorf("tail does not say %q:\n%s", want, text)
	}
	var gap map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(tailOf(t, path, true))), "\n") {
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("tail --json: %v: %s", err, line)
		}
		if g, ok := doc["gap"].(map[string]any); ok {
			gap = g
		}
	}
	if gap["dir"] != "s2h" || gap["missing"] != 24.0 {
		t.Errorf("tail --json: gap %v, want dir s2h, missing 24", gap)
	}
}
