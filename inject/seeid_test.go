package inject

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// seeAsAFrame is how the view fed the allocator an index's entry before
// SeeID: a frame made up around the entry's id, classified and seen.
func seeAsAFrame(a *IDs, dir classify.Direction, kind classify.Kind, id string) {
	see := func(rest string) {
		m := classify.Classify([]byte(`{"jsonrpc":"2.0","id":`+id+rest), dir, classify.JSONRPC)
		a.See(&m)
	}
	switch {
	case id == "":
	case kind == classify.KindRequest:
		see(`,"method":"x"}`)
	case kind == classify.KindResponse:
		see(`,"result":null}`)
	}
}

// seeBoth feeds an entry's kind and id to a by SeeID and to old as a
// made-up frame, as the view does (requests and responses only).
func seeBoth(a, old *IDs, dir classify.Direction, kind classify.Kind, id string) {
	if kind == classify.KindRequest || kind == classify.KindResponse {
		a.SeeID(dir, kind, id)
		seeAsAFrame(old, dir, kind, id)
	}
}

func sameIDs(t *testing.T, what string, a, old *IDs) {
	t.Helper()
	if a.top != old.top || a.used != old.used || !reflect.DeepEqual(a.inFlight, old.inFlight) {
		t.Fatalf("%s: SeeID keeps top %v, used %v, %d/%d in flight; a made-up frame %v, %v, %d/%d",
			what, a.top, a.used, len(a.inFlight[classify.H2S]), len(a.inFlight[classify.S2H]),
			old.top, old.used, len(old.inFlight[classify.H2S]), len(old.inFlight[classify.S2H]))
	}
}

// SeeID takes in the ids of every recorded session as a frame made up
// around each id did.
func TestSeeIDTakesInARecordedSessionsIdsAsAFrameOfThemDid(t *testing.T) {
	var paths []string
	filepath.WalkDir("../testdata/sessions", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			paths = append(paths, p)
		}
		return nil
	})
	fed := 0
	for _, p := range paths {
		x := sessions.NewIndex(sessions.IndexOptions{})
		if err := x.ReadFile(context.Background(), p, nil); err != nil {
			continue // not every file there is a whole session
		}
		a, old := NewIDs(), NewIDs()
		for _, e := range x.Entries(nil, 0, x.Len()) {
			seeBoth(a, old, e.Dir, e.Kind, e.ID)
			if e.ID != "" {
				fed++
			}
		}
		sameIDs(t, p, a, old)
	}
	if fed < 100 {
		t.Fatalf("only %d ids in %d session files", fed, len(paths))
	}
}

// SeeID takes in what classify finds of any frame as a frame made up
// around its id did.
func FuzzSeeIDAgainstAFrameMadeUpAroundTheID(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"a"}`,
		`{"jsonrpc":"2.0","id":"rpctap-7","method":"a"}`,
		`{"jsonrpc":"2.0","id":"rpctap-7","result":{}}`,
		`{"jsonrpc":"2.0","id":"\u0072pctap-12","method":"a"}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":{},"method":"a"}`,
		`{"jsonrpc":"2.0","id":[1],"result":1}`,
		`{"jsonrpc":"2.0","id":1.50,"method":"a"}`,
		`[{"jsonrpc":"2.0","id":2,"method":"a"}]`,
	} {
		f.Add([]byte(s), false, byte(0))
		f.Add([]byte(s), true, byte(1))
	}
	f.Fuzz(func(t *testing.T, body []byte, toHost bool, profile byte) {
		dir := classify.H2S
		if toHost {
			dir = classify.S2H
		}
		p := classify.JSONRPC
		if profile%2 == 1 {
			p = classify.MCP
		}
		m := classify.Classify(body, dir, p)
		id := ""
		if m.HasID() {
			id = string(m.ID().Raw)
		}
		a, old := NewIDs(), NewIDs()
		// Twice: a frame and its answer, or the same one again.
		seeBoth(a, old, dir, m.Kind, id)
		seeBoth(a, old, dir.Opposite(), m.Kind, id)
		seeBoth(a, old, dir, m.Kind, id)
		sameIDs(t, string(body), a, old)
	})
}
