package main

import (
	"path/filepath"
	"testing"
)

// y copies the selected frame with OSC 52. Inside tmux with its default
// set-clipboard (external) tmux drops the sequence: the view says the
// frame was not copied, and what to type; with set-clipboard on the frame
// reaches tmux's clipboard (its paste buffer), and the view says copied.
func TestCopyUnderTmuxSaysWhetherTheClipboardGetsIt(t *testing.T) {
	session, err := filepath.Abs("../../testdata/sessions/recorded/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	env := watchEnv(t, t.TempDir())
	bin := rpctapBinary(t)

	waitfor, keys, _ := tmuxScreen(t, 100, 30, env[len(env)-3:], bin, "ui", session)
	waitfor("recorded", "ping")
	keys("y")
	waitfor("frame #19 not copied: tmux drops OSC 52; run tmux set -s set-clipboard on")
	keys("q")

	waitfor, keys, _ = tmuxScreen(t, 100, 30, env[len(env)-3:], "sh", "-c",
		`tmux set -s set-clipboard on && "$0" ui "$1"; echo "tmux buffer:"; tmux show-buffer`, bin, session)
	waitfor("recorded", "ping")
	keys("y")
	waitfor("copied frame #19 (36 bytes)")
	keys("q")
	waitfor("tmux buffer:", `{"jsonrpc":"2.0","id":6,"result":{}}`)
}
