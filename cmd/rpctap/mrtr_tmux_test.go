package main

import (
	"strings"
	"testing"
)

// In tmux at 80×24 and at 200×50, rpctap ui of a recording of the Go SDK
// pair's multi round-trip call: the latency column shows, on the call's
// final answer, the call's latency from its first request marked with
// its 2 rounds, and on the input_required answer that round's own; the
// detail pane of the final answer says it ends the call, in 2 rounds.
func TestTheTrafficListShowsAMultiRoundTripCallsLatencyOnItsFinalAnswer(t *testing.T) {
	dir := t.TempDir()
	record := recordConfirm(t, dir, "confirm.jsonl")
	env := watchEnv(t, dir)
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		waitfor, keys, screen := tmuxScreen(t, size[0], size[1], env[len(env)-3:], rpctapBinary(t), "ui", record)
		waitfor("tools/call", "← response     4")
		var asked, final string
		for _, line := range strings.Split(screen(), "\n") {
			switch {
			case strings.Contains(line, "← response     3"):
				asked = line
			case strings.Contains(line, "← response     4"):
				final = line
			}
		}
		if !strings.Contains(final, " ×2 ") || strings.Contains(asked, "×") || !strings.Contains(asked, "tools/call") {
			t.Errorf("at %dx%d, the input_required answer's row is %q and the final answer's %q; want the call's latency marked ×2 on the final answer only", size[0], size[1], asked, final)
		}
		keys("/")
		keys("-l", "id:4 kind:response")
		keys("Enter")
		waitfor("ends the call first sent as #7, after ", "in 2 rounds") // the line may wrap
		keys("q")
	}
}
