package tap

import (
	"testing"

	"github.com/rpctap/rpctap/classify"
)

// A trickle of frames (a request, its answer) gathers briefly before the
// recorder takes it, so that its work comes in small pieces between round
// trips; once a take finds many frames, the traffic is heavy and frames
// gather for longer, so that the session file's writes stay batched.
func TestFramesGatherBrieflyInATrickleAndLongerUnderLoad(t *testing.T) {
	var in intake
	in.init()
	take := func(n int) {
		for i := range n {
			in.put(item{dir: classify.H2S, data: note(i)}, false)
		}
		in.take(nil, nil, nil)
	}
	for _, tc := range []struct {
		took int
		want string
	}{
		{1, "brief"}, {2, "brief"}, {busyTake - 1, "brief"}, {busyTake, "longer"}, {500, "longer"}, {3, "brief"},
	} {
		take(tc.took)
		in.mu.Lock()
		d := in.gatherFor()
		in.mu.Unlock()
		want := recordDelay
		if tc.want == "longer" {
			want = recordDelayBusy
		}
		if d != want || recordDelay >= recordDelayBusy {
			t.Errorf("after a take of %d frames, frames gather for %v; want %v (%s)", tc.took, d, want, tc.want)
		}
	}
}
