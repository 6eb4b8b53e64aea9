package sessions_test

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// pendingFollower keeps a list of the requests in flight from an Index's
// PendingChanges, as a view does.
type pendingFollower struct {
	gen    uint64
	list   []classify.PendingRequest
	resets int
	buf    []sessions.PendingChange
}

func (f *pendingFollower) sync(x *sessions.Index) {
	changes, gen, all, reset := x.PendingChanges(f.gen, f.buf[:0])
	f.gen, f.buf = gen, changes
	if reset {
		f.list = all
		f.resets++
		return
	}
	left := map[int64]bool{}
	for _, c := range changes {
		i, found := slices.BinarySearchFunc(f.list, c.Request.Seq, func(p classify.PendingRequest, seq int64) int { return cmp.Compare(p.Seq, seq) })
		found = found && !left[c.Request.Seq]
		switch c.Kind {
		case sessions.PendingAdded:
			if !found {
				f.list = slices.Insert(f.list, i, c.Request)
			}
		case sessions.PendingLeft:
			left[c.Request.Seq] = found
		case sessions.PendingTimedOut:
			if found {
				f.list[i].TimedOut = true
			}
		}
	}
	f.list = slices.DeleteFunc(f.list, func(p classify.PendingRequest) bool { return left[p.Seq] })
}

// withoutDeadlines is the list as PendingChanges describes it.
func withoutDeadlines(ps []classify.PendingRequest) []classify.PendingRequest {
	out := slices.Clone(ps)
	for i := range out {
		out[i].Deadline = 0
	}
	return out
}

// The requests in flight, as a reader keeps them from PendingChanges
// after each record and each move of the clock, are the ones Pending
// lists, in every recorded session and through answers, cancellations
// (and answers after them), ids reused, timeouts, late answers, null ids
// and batches; a reader that has seen every change gets none.
func TestPendingChangesKeepAListEqualToPending(t *testing.T) {
	files, _ := filepath.Glob("../testdata/sessions/*/*.jsonl")
	h := testHeader()
	h.Profile = "jsonrpc"
	cancel := func(t int64, id string) sessions.FrameRecord {
		return sessions.FrameRecord{T: t, Dir: classify.H2S, Frame: fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s}}`, id)}
	}
	made, _ := writeSession(t, testHeader(),
		req(1000, "0", "initialize"), result(2000, "0"),
		req(3000, "1", "tools/call"), req(3100, "2", "tools/call"), req(3200, `"a"`, "ping"),
		result(4000, "2"), cancel(5000, "1"), result(6000, "1"),
		req(7000, "3", "tools/call"), req(7100, "3", "tools/call"), result(8000, "3"),
		req(9000, "null", "tools/call"),
		req(10_000, "4", "slow"), result(80_000_000, "4"),
		sessions.FrameRecord{T: 80_000_100, Dir: classify.H2S, Frame: []byte(`[{"jsonrpc":"2.0","id":10,"method":"a"},{"jsonrpc":"2.0","id":11,"method":"b"}]`)},
		req(80_000_200, "12", "c"), result(80_000_300, "11"), result(80_000_400, "12"), errorAnswer(80_000_500, "10"),
		sessions.EventRecord{T: 90_000_000, Kind: sessions.EventExit},
	)
	batch, _ := writeSession(t, h,
		sessions.FrameRecord{T: 1000, Dir: classify.H2S, Frame: []byte(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]`)},
		req(1500, "3", "c"), result(2000, "2"), errorAnswer(3000, "1"),
	)
	files = append(files, made, batch)
	if len(files) < 10 {
		t.Fatalf("too few sessions: %v", files)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r := sessions.NewReader(f)
			x := sessions.NewIndex(sessions.IndexOptions{Timeout: 30 * time.Second})
			if hdr, ok := r.Header(); ok {
				x.SetHeader(hdr)
			}
			var fl pendingFollower
			check := func(after string) {
				t.Helper()
				fl.sync(x)
				if got, want := withoutDeadlines(fl.list), withoutDeadlines(x.Pending()); !slices.Equal(got, want) {
					t.Fatalf("after %s: the list kept from the changes is\n%+v\nPending lists\n%+v", after, got, want)
				}
			}
			check("no record")
			for {
				ev, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				x.Add(ev, r.Offset())
				check(fmt.Sprintf("line %d", ev.Line))
				x.Advance(time.Duration(ev.T)*time.Microsecond + time.Minute/2)
				check(fmt.Sprintf("the clock moved past line %d", ev.Line))
			}
			if changes, _, all, reset := x.PendingChanges(fl.gen, nil); len(changes) != 0 || all != nil || reset {
				t.Errorf("a reader that saw every change gets %d changes, %d requests, reset %v", len(changes), len(all), reset)
			}
		})
	}
}

// A reader that falls further behind than the changes an Index keeps gets
// the whole list again, and nothing is lost; one that keeps up is told of
// the requests the tracker stops following (past 100,000 in flight).
func TestPendingChangesListEverythingToAReaderFarBehind(t *testing.T) {
	x := sessions.NewIndex(sessions.IndexOptions{})
	x.SetHeader(testHeader())
	var behind, along pendingFollower
	behind.sync(x)
	along.sync(x)
	line := 2
	add := func(rec sessions.FrameRecord) {
		x.Add(&sessions.Event{Line: line, T: rec.T, Dir: rec.Dir, Frame: rec.Frame, Src: sessions.SrcWire}, -1)
		if line++; line%10_000 == 0 {
			along.sync(x)
		}
	}
	for i := range 100_010 {
		add(req(int64(1000+i), fmt.Sprint(i), "tools/call"))
	}
	for i := range 50_000 {
		add(result(int64(200_000+i), fmt.Sprint(2*i+10)))
	}
	resets := behind.resets
	behind.sync(x)
	if behind.resets != resets+1 {
		t.Errorf("a reader 150,000 changes behind was not given the whole list")
	}
	along.sync(x)
	if along.resets != 0 {
		t.Errorf("a reader that kept up was given the whole list %d times", along.resets)
	}
	want := withoutDeadlines(x.Pending())
	if len(want) != 50_000 || want[0].ID != "11" {
		t.Fatalf("Pending lists %d requests from id %s; want 50,000 from id 11 (the 10 first no longer followed, the even ids answered)", len(want), want[0].ID)
	}
	for _, fl := range []*pendingFollower{&behind, &along} {
		if !slices.Equal(withoutDeadlines(fl.list), want) {
			t.Errorf("the list has %d requests, Pending %d", len(fl.list), len(want))
		}
	}
}
