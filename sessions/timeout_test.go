package sessions_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/sessions/check"
)

// A session whose header names its tap's timeout is judged by it when the
// reader is given none: check and the index flag a request unanswered for
// 3 s under a 2 s timeout_ms, not under the default; a timeout given to
// the reader wins over the header's.
func TestHeaderTimeoutJudgesTheSessionUnlessOneIsGiven(t *testing.T) {
	recs := []any{
		sessions.FrameRecord{T: 1000, Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		sessions.EventRecord{T: 3_000_000, Kind: sessions.EventExit},
	}
	timeouts := func(h sessions.Header, given time.Duration) int {
		_, data := writeSession(t, h, recs...)
		rep, err := check.Run(bytes.NewReader(data), check.Options{Timeout: given})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range rep.Findings {
			if f.Code == classify.CodeTimeout {
				n++
			}
		}
		return n
	}
	short := testHeader()
	short.Timeout = 2 * time.Second
	if n := timeouts(short, 0); n != 1 {
		t.Errorf("under the header's 2 s timeout, check found %d timeouts; want 1", n)
	}
	if n := timeouts(testHeader(), 0); n != 0 {
		t.Errorf("with no timeout in the header, check found %d timeouts in 3 s; want 0", n)
	}
	if n := timeouts(short, time.Minute); n != 0 {
		t.Errorf("with a 1 min timeout given, check found %d timeouts; the header's must not win", n)
	}
	_, data := writeSession(t, short, recs...)
	if !bytes.Contains(data, []byte(`"timeout_ms":2000`)) {
		t.Errorf("the header does not name its timeout: %s", bytes.SplitN(data, []byte("\n"), 2)[0])
	}
	path, _ := writeSession(t, short, recs...)
	x := sessions.NewIndex(sessions.IndexOptions{})
	if err := x.ReadFile(context.Background(), path, nil); err != nil {
		t.Fatal(err)
	}
	if h, _ := x.Header(); h.Timeout != 2*time.Second {
		t.Errorf("the index read the header's timeout as %v", h.Timeout)
	}
}
