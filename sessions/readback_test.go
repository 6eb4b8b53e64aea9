package sessions

import (
	"os"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

// goldenSession is a recorded conversation with something of everything:
// a handshake, a notification, stderr with an escape, a payload carrying
// </script><script>, markup, a fence, bidi and terminal escapes and a
// secret, a long string, an error answer, a long array, a request that
// times out, a line that is not JSON, and the exit.
const goldenSession = "../testdata/export/session.jsonl"

// countingReaderAt counts the reads of a file.
type countingReaderAt struct {
	f     *os.File
	reads int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.f.ReadAt(p, off)
}

// A reader of answers that looks in the request reader's window first
// reads an answer close after its request with it: the walk of a pair
// format reads the file once, not once for the requests and again for
// the answers.
func TestAnswersCloseToTheirRequestsAreReadWithThem(t *testing.T) {
	x, err := IndexFile(goldenSession, IndexOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(goldenSession)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, shared := range []bool{false, true} {
		c := &countingReaderAt{f: f}
		reqs, answers := NewRecordReader(c), NewRecordReader(c)
		if shared {
			answers.peer = reqs.window
		}
		n := 0
		for i := range x.Counts().Entries {
			e := x.At(i)
			rr := reqs
			if e.Kind == classify.KindResponse {
				rr = answers
			}
			ev, err := rr.Read(e)
			if err != nil {
				t.Fatal(err)
			}
			if int64(ev.Line) != e.Seq {
				t.Fatalf("line %d read as %d", e.Seq, ev.Line)
			}
			n++
		}
		if want := map[bool]int{false: 2, true: 1}[shared]; c.reads != want {
			t.Errorf("shared window %v: %d reads of the file for its %d records, want %d", shared, c.reads, n, want)
		}
	}
}
