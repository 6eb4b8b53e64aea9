package sessions_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/sessions/check"
)

// writeSession writes a session file of the records (FrameRecord or
// EventRecord) in a temporary directory and returns its path and bytes.
func writeSession(t testing.TB, h sessions.Header, recs ...any) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w, err := sessions.NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		switch r := r.(type) {
		case sessions.FrameRecord:
			err = w.WriteFrame(r)
		case sessions.EventRecord:
			err = w.WriteEvent(r)
		default:
			t.Fatalf("not a record: %T", r)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return writeFile(t, buf.Bytes()), buf.Bytes()
}

func writeFile(t testing.TB, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func indexFile(t testing.TB, path string, opts sessions.IndexOptions) *sessions.Index {
	t.Helper()
	x, err := sessions.IndexFile(path, opts, nil)
	if err != nil {
		t.Fatalf("IndexFile: %v", err)
	}
	return x
}

// entryBySeq returns the entry for line seq.
func entryBySeq(t testing.TB, x *sessions.Index, seq int64) sessions.Entry {
	t.Helper()
	i, ok := x.BySeq(seq)
	if !ok {
		t.Fatalf("no entry for line %d", seq)
	}
	return x.At(i)
}

func req(t int64, id, method string) sessions.FrameRecord {
	return sessions.FrameRecord{T: t, Dir: classify.H2S, Frame: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"method":%q}`, id, method)}
}

func result(t int64, id string) sessions.FrameRecord {
	return sessions.FrameRecord{T: t, Dir: classify.S2H, Frame: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, id)}
}

func errorAnswer(t int64, id string) sessions.FrameRecord {
	return sessions.FrameRecord{T: t, Dir: classify.S2H, Frame: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, id)}
}

// lineFinding is a finding as both Check and an Index report it.
type lineFinding struct {
	Line     int64
	Code     classify.Code
	Severity classify.Severity
	Member   int
	Related  int64
	Message  string
}

func compareLineFindings(a, b lineFinding) int {
	return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Code, b.Code), cmp.Compare(a.Member, b.Member),
		cmp.Compare(a.Related, b.Related), cmp.Compare(a.Message, b.Message))
}

func TestIndexFindsWhatCheckFindsOnEveryLine(t *testing.T) {
	files, _ := filepath.Glob("../testdata/sessions/conversations/*.jsonl")
	real, _ := filepath.Glob("../testdata/sessions/real/*.jsonl")
	files = append(files, real...)
	if len(files) < 10 {
		t.Fatalf("found only %d sessions", len(files))
	}
	// And one with what the recorded conversations lack: batches with
	// findings on their members, a malformed lsp header, bytes that are
	// not UTF-8, stderr and events between frames.
	h := testHeader()
	h.Profile = "jsonrpc"
	mixed, _ := writeSession(t, h,
		sessions.FrameRecord{T: 1, Dir: classify.H2S, Frame: []byte(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"1.0","id":2,"method":"b"},{"id":null,"method":7},3]`)},
		sessions.FrameRecord{T: 2, Dir: classify.S2H, Frame: []byte(`[{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":9,"error":{"code":1}}]`)},
		sessions.FrameRecord{T: 3, Dir: classify.Err, Frame: []byte("panic: \xff")},
		sessions.EventRecord{T: 4, Kind: sessions.EventNote, Text: sessions.NoteFramingLSP},
		sessions.FrameRecord{T: 5, Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","id":3,"method":"c"}`), Header: []byte("Content-Length: 5\r\nContent-Length: 6\r\n\r\n")},
		sessions.FrameRecord{T: 6, Dir: classify.S2H, Frame: []byte("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\"\xfe\"}")},
		sessions.FrameRecord{T: 7, Dir: classify.S2H, Frame: []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`)},
		sessions.EventRecord{T: 90_000_000, Kind: sessions.EventExit, Code: intp(1)},
	)
	// A session of profile auto that turns out to use lsp framing.
	lspNote, _ := writeSession(t, testHeader(),
		req(1, "1", "ping"),
		sessions.EventRecord{T: 2, Kind: sessions.EventNote, Text: sessions.NoteFramingLSP},
		req(3, "2", "textDocument/didOpen"),
	)
	files = append(files, mixed, lspNote)
	names := map[string]string{mixed: "mixed", lspNote: "lsp-note"}
	for _, path := range files {
		t.Run(cmp.Or(names[path], strings.TrimSuffix(filepath.Base(path), ".jsonl")), func(t *testing.T) {
			sameFindingsAsCheck(t, path)
		})
	}
}

// sameFindingsAsCheck indexes the session file at path and compares the
// findings on every line with Check's.
func sameFindingsAsCheck(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := check.Run(bytes.NewReader(data), check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want []lineFinding
	wantCodes := map[int64]sessions.CodeSet{}
	wantWorst := map[int64]classify.Severity{}
	for _, f := range rep.Findings {
		line := int64(f.Line)
		want = append(want, lineFinding{line, f.Code, f.Severity, f.Member, int64(f.Related), f.Message})
		wantCodes[line] = wantCodes[line].With(f.Code)
		wantWorst[line] = max(wantWorst[line], f.Severity)
	}

	x := indexFile(t, path, sessions.IndexOptions{})
	var got []lineFinding
	bad := 0
	for i := range x.Len() {
		e := x.At(i)
		var codes sessions.CodeSet
		for _, f := range x.Findings(i) {
			got = append(got, lineFinding{e.Seq, f.Code, f.Severity, f.Member, f.Related, f.Message})
			codes = codes.With(f.Code)
		}
		if (e.Codes != wantCodes[e.Seq] || codes != e.Codes || e.Worst != wantWorst[e.Seq]) && bad < 10 {
			bad++
			t.Errorf("line %d: codes %v (findings %v), worst %v; Check found %v, worst %v",
				e.Seq, e.Codes.Codes(), codes.Codes(), e.Worst, wantCodes[e.Seq].Codes(), wantWorst[e.Seq])
		}
	}
	slices.SortFunc(want, compareLineFindings)
	slices.SortFunc(got, compareLineFindings)
	if !slices.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Errorf("%d findings, Check's %d; the first that differ:\n got: %+v\nwant: %+v", len(got), len(want), got[i:min(i+3, len(got))], want[i:min(i+3, len(want))])
	}
	c := x.Counts()
	if c.H2S+c.S2H != rep.Frames || c.Skipped != rep.Skipped || x.Profile() != rep.Profile {
		t.Errorf("counts %+v, profile %v; Check: %d frames, %d skipped, profile %v", c, x.Profile(), rep.Frames, rep.Skipped, rep.Profile)
	}
}

func TestReadFileJudgesLikeCheckWhenTheProfileIsDecidedMidFile(t *testing.T) {
	// Many batches of frames before and after the handshake shows MCP:
	// frames classified ahead by the profile then known are judged again
	// once MCP is decided, and later batches are classified as MCP.
	var recs []any
	for i := range 5000 {
		recs = append(recs, req(int64(i), fmt.Sprint(i), "ping"), sessions.FrameRecord{T: int64(i), Dir: classify.S2H, Frame: []byte(`{"jsonrpc":"2.0","id":null,"result":{}}`)})
	}
	recs = append(recs,
		sessions.FrameRecord{T: 6000, Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)},
		sessions.FrameRecord{T: 6001, Dir: classify.S2H, Frame: []byte(`{"jsonrpc":"2.0","id":"init","result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)},
		sessions.FrameRecord{T: 6002, Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)},
	)
	for i := range 10000 {
		recs = append(recs, req(int64(7000+i), "null", "tools/call"), req(int64(7000+i), fmt.Sprint(i), "tools/call"), result(int64(7000+i), fmt.Sprint(i)))
	}
	path, _ := writeSession(t, testHeader(), recs...)
	sameFindingsAsCheck(t, path)
}

func TestTimeoutFoundLaterMarksTheEarlierRequest(t *testing.T) {
	// Line 2 times out and is answered at line 4; line 3 never is.
	x := indexFile(t, "../testdata/sessions/conversations/late-response-and-timeout.jsonl", sessions.IndexOptions{})
	late, hung, answer := entryBySeq(t, x, 2), entryBySeq(t, x, 3), entryBySeq(t, x, 4)
	if !late.Codes.Has(classify.CodeTimeout) || late.Status != sessions.StatusLate || late.Worst != classify.Warn {
		t.Errorf("request answered after its timeout: codes %v, status %v, worst %v", late.Codes.Codes(), late.Status, late.Worst)
	}
	if !hung.Codes.Has(classify.CodeTimeout) || hung.Status != sessions.StatusTimedOut {
		t.Errorf("request never answered: codes %v, status %v", hung.Codes.Codes(), hung.Status)
	}
	if !answer.Codes.Has(classify.CodeLateResponse) || answer.Pair != 2 {
		t.Errorf("late answer: codes %v, pair %d", answer.Codes.Codes(), answer.Pair)
	}
}

func TestAdvanceMarksARequestThatTimesOutLive(t *testing.T) {
	x := sessions.NewIndex(sessions.IndexOptions{Timeout: 10 * time.Second})
	x.SetHeader(testHeader())
	add := func(line int, rec sessions.FrameRecord) {
		x.Add(&sessions.Event{Line: line, T: rec.T, Dir: rec.Dir, Frame: rec.Frame, Src: sessions.SrcWire}, -1)
	}
	add(2, req(1_000_000, "1", "tools/call"))
	if e := x.At(0); e.Status != sessions.StatusPending || !e.Codes.Empty() {
		t.Fatalf("request just sent: status %v, codes %v", e.Status, e.Codes.Codes())
	}
	if p := x.Pending(); len(p) != 1 || p[0].Seq != 2 || x.Counts().Pending != 1 {
		t.Fatalf("Pending() = %+v, counts %+v", p, x.Counts())
	}
	x.Advance(10 * time.Second)
	if e := x.At(0); e.Status != sessions.StatusPending {
		t.Fatalf("before its deadline: status %v", e.Status)
	}
	x.Advance(11 * time.Second)
	if e := x.At(0); e.Status != sessions.StatusTimedOut || !e.Codes.Has(classify.CodeTimeout) || x.Counts().Warnings != 1 {
		t.Fatalf("after its deadline: status %v, codes %v, counts %+v", e.Status, e.Codes.Codes(), x.Counts())
	}
	if fs := x.Findings(0); len(fs) != 1 || fs[0].Code != classify.CodeTimeout || !strings.Contains(fs[0].Message, "10 s") {
		t.Errorf("Findings(0) = %+v", fs)
	}
	add(3, result(12_000_000, "1"))
	if e := x.At(0); e.Status != sessions.StatusLate || e.Pair != 3 {
		t.Errorf("answered late: status %v, pair %d", e.Status, e.Pair)
	}
	if p := x.Pending(); len(p) != 0 || x.Counts().Pending != 0 {
		t.Errorf("Pending() after the answer = %+v, counts %+v", p, x.Counts())
	}
}

func TestPairsLinkBothWaysWithLatencyAndTheRequestsMethod(t *testing.T) {
	path, _ := writeSession(t, testHeader(),
		req(1000, "7", "tools/call"),                            // line 2
		req(1500, `"b"`, "resources/read"),                      // line 3
		sessions.EventRecord{T: 2000, Kind: "note", Text: "hi"}, // line 4
		errorAnswer(5000, `"b"`),                                // line 5
		result(9000, "7"),                                       // line 6
	)
	x := indexFile(t, path, sessions.IndexOptions{})
	for _, tc := range []struct {
		req, resp int64
		method    string
		id        string
		latency   time.Duration
		status    sessions.Status
	}{
		{2, 6, "tools/call", "7", 8 * time.Millisecond, sessions.StatusOK},
		{3, 5, "resources/read", `"b"`, 3500 * time.Microsecond, sessions.StatusError},
	} {
		rq, rs := entryBySeq(t, x, tc.req), entryBySeq(t, x, tc.resp)
		if rq.Pair != tc.resp || rs.Pair != tc.req {
			t.Errorf("lines %d and %d: pairs %d and %d", tc.req, tc.resp, rq.Pair, rs.Pair)
		}
		if rq.Latency != tc.latency || rs.Latency != tc.latency {
			t.Errorf("lines %d and %d: latencies %v and %v, want %v", tc.req, tc.resp, rq.Latency, rs.Latency, tc.latency)
		}
		if rq.Method != tc.method || rs.Method != tc.method {
			t.Errorf("lines %d and %d: methods %q and %q, want the request's %q", tc.req, tc.resp, rq.Method, rs.Method, tc.method)
		}
		if rq.ID != tc.id || rs.ID != tc.id {
			t.Errorf("lines %d and %d: ids %s and %s, want %s as on the wire", tc.req, tc.resp, rq.ID, rs.ID, tc.id)
		}
		if rq.Status != tc.status || rs.Status != tc.status {
			t.Errorf("lines %d and %d: statuses %v and %v, want %v", tc.req, tc.resp, rq.Status, rs.Status, tc.status)
		}
		if rq.Kind != classify.KindRequest || rs.Kind != classify.KindResponse || rq.Dir != classify.H2S || rs.Dir != classify.S2H {
			t.Errorf("lines %d and %d: %v %v and %v %v", tc.req, tc.resp, rq.Dir, rq.Kind, rs.Dir, rs.Kind)
		}
	}
	if note := entryBySeq(t, x, 4); note.Event != sessions.EventNote || note.Pair != 0 || note.Status != sessions.StatusNone || note.IsFrame() {
		t.Errorf("note: %+v", note)
	}
}

func TestEventOfAKindThisVersionDoesNotKnowIsKept(t *testing.T) {
	path := writeFile(t, []byte(`{"t":5,"event":"findings","n":3}`+"\n"+`{"t":6,"dir":"h2s","frame":"{}"}`+"\n"))
	x := indexFile(t, path, sessions.IndexOptions{})
	if e := x.At(0); x.Len() != 2 || e.Event != "findings" || e.IsFrame() || e.Method != "" || e.Seq != 1 {
		t.Errorf("Len() = %d, entry %+v", x.Len(), e)
	}
	if c := x.Counts(); c.Events != 1 || c.H2S != 1 {
		t.Errorf("counts %+v", c)
	}
}

func TestBatchRequestIsPendingUntilEveryMemberIsAnswered(t *testing.T) {
	h := testHeader()
	h.Profile = "jsonrpc"
	path, _ := writeSession(t, h,
		sessions.FrameRecord{T: 1000, Dir: classify.H2S, Frame: []byte(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]`)},
		result(2000, "2"),
		errorAnswer(3000, "1"),
	)
	x := sessions.NewIndex(sessions.IndexOptions{})
	var seen []sessions.Status
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := sessions.NewReader(f)
	hdr, _ := r.Header()
	x.SetHeader(hdr)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		x.Add(ev, r.Offset())
		seen = append(seen, x.At(0).Status)
	}
	if want := []sessions.Status{sessions.StatusPending, sessions.StatusPending, sessions.StatusError}; !slices.Equal(seen, want) {
		t.Errorf("batch status after each record: %v, want %v", seen, want)
	}
	if b := x.At(0); b.Pair != 3 || b.ID != "" || b.Kind != classify.KindBatch {
		t.Errorf("batch: %+v", b)
	}
}

func TestCancelledRequestStaysCancelledWhenAnsweredAfter(t *testing.T) {
	x := indexFile(t, "../testdata/sessions/conversations/cancelled.jsonl", sessions.IndexOptions{})
	e := entryBySeq(t, x, 5)
	if e.Status != sessions.StatusCancelled || !e.Codes.Has(classify.CodeCancelled) || e.Pair != 7 {
		t.Errorf("cancelled request: status %v, codes %v, pair %d", e.Status, e.Codes.Codes(), e.Pair)
	}
	if fs := x.Findings(mustPos(t, x, 5)); len(fs) != 1 || fs[0].Related != 6 {
		t.Errorf("Findings = %+v, want cancelled linking line 6", fs)
	}
}

// A request whose answer may be among the frames a gap record says the
// file is missing (the gap is toward the host, after the request) is not
// pending: its status is gap, and the pending list and count leave it
// out; one answered after the gap is answered. What came after the gap
// is judged as ever, and the index counts the frames missing.
func TestARequestAGapMayHaveAnsweredIsNotPending(t *testing.T) {
	x := indexFile(t, "../testdata/sessions/conversations/frames-missing.jsonl", sessions.IndexOptions{})
	for _, c := range []struct {
		seq    int64
		status sessions.Status
	}{{7, sessions.StatusGap}, {9, sessions.StatusOK}, {12, sessions.StatusPending}, {13, sessions.StatusGap}} {
		if e := entryBySeq(t, x, c.seq); e.Status != c.status {
			t.Errorf("line %d: status %v, codes %v; want %v", c.seq, e.Status, e.Codes.Codes(), c.status)
		}
	}
	if e := entryBySeq(t, x, 7); !e.Codes.Has(classify.CodeFramesMissing) {
		t.Errorf("line 7: codes %v; want frames-missing", e.Codes.Codes())
	}
	var pending []int64
	for _, p := range x.Pending() {
		pending = append(pending, p.Seq)
	}
	if c := x.Counts(); c.Pending != 1 || c.Missing != 4 || !slices.Equal(pending, []int64{12}) {
		t.Errorf("%d pending (%v), %d frames missing; want only line 12 pending, and 4 missing", c.Pending, pending, c.Missing)
	}
}

func mustPos(t testing.TB, x *sessions.Index, seq int64) int {
	t.Helper()
	i, ok := x.BySeq(seq)
	if !ok {
		t.Fatalf("no entry for line %d", seq)
	}
	return i
}

func TestBySeqFindsEveryLineAcrossBlankAndUnreadableLines(t *testing.T) {
	const file = `{"rpctap":"session","version":1,"id":"b","started":"2026-11-29T18:00:00Z"}

{"t":1,"dir":"h2s","frame":"{}"}
not a record
{"t":2,"dir":"s2h","frame":"{}"}
{"t":3,"dir":"s2h","frame":"{}"}


{"t":4,"event":"exit","code":0}
`
	x := indexFile(t, writeFile(t, []byte(file)), sessions.IndexOptions{})
	want := []int64{3, 5, 6, 9}
	if x.Len() != len(want) || x.Counts().Skipped != 1 {
		t.Fatalf("Len() = %d, counts %+v", x.Len(), x.Counts())
	}
	for i, seq := range want {
		if got, ok := x.BySeq(seq); !ok || got != i || x.At(i).Seq != seq {
			t.Errorf("BySeq(%d) = %d, %v; want %d", seq, got, ok, i)
		}
	}
	for _, seq := range []int64{-1, 0, 1, 2, 4, 7, 8, 10, 1000} {
		if got, ok := x.BySeq(seq); ok {
			t.Errorf("BySeq(%d) = %d, true for a line with no record", seq, got)
		}
	}
}

func TestReadRecordReturnsTheExactFrameOfAnEntry(t *testing.T) {
	big := bytes.Repeat([]byte(`{"k":"\u2028\"é\\"}`), 20_000) // longer than the Reader's buffer
	recs := []sessions.FrameRecord{
		{T: 1, Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"a\"b\\c\n\u0000"}}`)},
		{T: 2, Dir: classify.S2H, Frame: []byte("not json \xff\xfe bytes")},
		{T: 3, Dir: classify.H2S, Src: sessions.SrcInject, Frame: []byte(`{"jsonrpc":"2.0","method":"n"}`), Header: []byte("Content-Length: 30\r\nX-A: b\r\n\r\n")},
		{T: 4, Dir: classify.S2H, Frame: big, Redacted: true},
		{T: 5, Dir: classify.Err, Frame: []byte("a line of stderr"), EOF: true},
	}
	var all []any
	for _, r := range recs {
		all = append(all, r)
	}
	all = append(all, sessions.EventRecord{T: 6, Kind: sessions.EventGap, Dir: classify.S2H, Missing: 9})
	path, _ := writeSession(t, testHeader(), all...)
	x := indexFile(t, path, sessions.IndexOptions{})
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if x.Len() != len(all) {
		t.Fatalf("Len() = %d, want %d", x.Len(), len(all))
	}
	for i, r := range recs {
		e := x.At(i)
		ev, err := sessions.ReadRecord(f, e)
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if !bytes.Equal(ev.Frame, r.Frame) || !bytes.Equal(ev.Header, r.Header) || ev.T != r.T || ev.Dir != r.Dir || int64(ev.Line) != e.Seq {
			t.Errorf("entry %d: read %.60q %q at t %d on line %d, want %.60q %q", i, ev.Frame, ev.Header, ev.T, ev.Line, r.Frame, r.Header)
		}
		if e.Size != int64(len(r.Frame)) || e.Redacted != r.Redacted || e.EOF != r.EOF || e.Src != cmp.Or(r.Src, sessions.SrcWire) {
			t.Errorf("entry %d: %+v", i, e)
		}
	}
	gap := x.At(len(recs))
	if ev, err := sessions.ReadRecord(f, gap); err != nil || ev.Kind != sessions.EventGap || ev.Missing != 9 || gap.Dir != classify.S2H {
		t.Errorf("gap: %+v, %v (entry %+v)", ev, err, gap)
	}

	// Another file, or an entry with no offset, is an error, not a wrong frame.
	other, _ := writeSession(t, testHeader(), sessions.FrameRecord{T: 1, Dir: classify.H2S, Frame: bytes.Repeat([]byte("x"), 300)})
	g, err := os.Open(other)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for i := range x.Len() {
		if ev, err := sessions.ReadRecord(g, x.At(i)); err == nil {
			t.Errorf("entry %d read from another file: t %d, %.40q", i, ev.T, ev.Frame)
		}
	}
	e := x.At(0)
	e.Offset = -1
	if _, err := sessions.ReadRecord(f, e); err == nil {
		t.Error("an entry with no offset read")
	}
}

func TestReaderOffsetIsWhereEachRecordsLineStarts(t *testing.T) {
	long := `{"t":3,"dir":"s2h","frame":"` + strings.Repeat("y", 100_000) + `"}`
	for _, file := range []string{
		`{"rpctap":"session","version":1}` + "\n\n" + `{"t":1,"dir":"h2s","frame":"a"}` + "\nbad\n" + `{"t":2,"dir":"h2s","frame":"b"}` + "\n" + long + "\n" + `{"t":4,"event":"exit"}`,
		"\n" + `{"t":1,"dir":"h2s","frame":"no header"}` + "\r\n" + long + "\n",
	} {
		r := sessions.NewReader(strings.NewReader(file))
		for {
			ev, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			off := r.Offset()
			line := file[off:]
			if i := strings.IndexByte(line, '\n'); i >= 0 {
				line = line[:i]
			}
			if !strings.HasPrefix(line, fmt.Sprintf(`{"t":%d,`, ev.T)) || strings.Count(file[:off], "\n") != ev.Line-1 {
				t.Errorf("record at t %d on line %d: Offset() = %d, where %.30q starts", ev.T, ev.Line, off, line)
			}
		}
	}
}

// bigSession writes a session of n request and response frames of about
// size bytes each.
func bigSession(t testing.TB, n, size int) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w, err := sessions.NewWriter(&buf, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("z", size)
	for i := range n {
		rec := sessions.FrameRecord{T: int64(i) * 100, Dir: classify.H2S, Frame: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"pad":"%s"}}`, i/2, pad)}
		if i%2 == 1 {
			rec = sessions.FrameRecord{T: int64(i) * 100, Dir: classify.S2H, Frame: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"pad":"%s"}}`, i/2, pad)}
		}
		if err := w.WriteFrame(rec); err != nil {
			t.Fatal(err)
		}
	}
	return writeFile(t, buf.Bytes()), buf.Bytes()
}

func TestEntriesShowWhileReadFileIsStillReading(t *testing.T) {
	const n = 20_000
	path, data := bigSession(t, n, 400) // about 9 MB: several batches
	x := sessions.NewIndex(sessions.IndexOptions{})
	firstBatch := make(chan int64)
	goOn := make(chan struct{})
	calls := 0
	done := make(chan error, 1)
	go func() {
		done <- x.ReadFile(context.Background(), path, func(read, total int64) {
			calls++
			if calls == 1 {
				firstBatch <- read
				<-goOn // the reading waits while the test looks
			}
		})
	}()
	read := <-firstBatch
	// ReadFile is held inside its first progress call: what readers see now
	// is what it has indexed so far, while the file is not read to its end.
	got := x.Len()
	if got == 0 || got >= n || read >= int64(len(data)) {
		t.Errorf("during ReadFile: Len() = %d of %d, %d of %d bytes read", got, n, read, len(data))
	}
	if got > 0 {
		if e := x.At(got - 1); e.Seq != int64(got)+1 || e.Kind == 0 {
			t.Errorf("last entry so far: %+v", e)
		}
	}
	close(goOn)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if x.Len() != n || calls < 3 {
		t.Errorf("after ReadFile: Len() = %d, want %d; %d progress calls", x.Len(), n, calls)
	}
}

func TestReadFileStopsWhenItsContextIsDone(t *testing.T) {
	const n = 20_000
	path, _ := bigSession(t, n, 400)
	x := sessions.NewIndex(sessions.IndexOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := x.ReadFile(ctx, path, func(int64, int64) { cancel() })
	if !errors.Is(err, context.Canceled) || x.Len() >= n {
		t.Errorf("ReadFile = %v with Len() = %d of %d; want it stopped early with context.Canceled", err, x.Len(), n)
	}
}

func TestReadersMayReadWhileReadFileIndexes(t *testing.T) {
	// Run with -race: readers share the index with the indexing goroutine.
	path, _ := bigSession(t, 20_000, 200)
	x := sessions.NewIndex(sessions.IndexOptions{})
	done := make(chan error, 1)
	go func() { done <- x.ReadFile(context.Background(), path, nil) }()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			var rows []sessions.Entry
			for {
				select {
				case <-stop:
					return
				default:
				}
				n := x.Len()
				rows = x.Entries(rows[:0], n-50, n)
				for _, e := range rows {
					if i, ok := x.BySeq(e.Seq); !ok || x.At(i).Seq != e.Seq {
						t.Errorf("BySeq(%d) = %d, %v", e.Seq, i, ok)
						return
					}
				}
				_ = x.Counts()
				_ = x.Pending()
				if n > 0 {
					_ = x.Findings(n - 1)
				}
			}
		})
	}
	err := <-done
	close(stop)
	wg.Wait()
	if err != nil || x.Len() != 20_000 {
		t.Fatalf("ReadFile: %v, Len() = %d", err, x.Len())
	}
}

func TestFollowIndexesAFileAsItGrows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.jsonl")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w, err := sessions.NewWriter(out, testHeader())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := w.WriteFrame(req(int64(i), fmt.Sprint(i), "ping")); err != nil {
			t.Fatal(err)
		}
	}

	x := sessions.NewIndex(sessions.IndexOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- x.Follow(ctx, path, time.Millisecond, func(int64, int64) {
			select {
			case progress <- struct{}{}:
			default:
			}
		})
	}()
	waitLen := func(n int) {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for x.Len() < n {
			select {
			case <-progress:
			case <-timeout:
				t.Fatalf("Len() = %d, want %d", x.Len(), n)
			}
		}
		if x.Len() != n {
			t.Fatalf("Len() = %d, want %d", x.Len(), n)
		}
	}
	waitLen(100)
	if c := x.Counts(); c.Pending != 100 {
		t.Errorf("pending %d, want 100", c.Pending)
	}

	// Answers arrive; the last one in two writes, the first without its "\n".
	for i := range 99 {
		if err := w.WriteFrame(result(int64(1000+i), fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	waitLen(199)
	last := `{"t":2000,"dir":"s2h","frame":"{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}"}` + "\n"
	if _, err := out.WriteString(last[:40]); err != nil {
		t.Fatal(err)
	}
	if _, err := out.WriteString(last[40:]); err != nil {
		t.Fatal(err)
	}
	waitLen(200)
	if e := x.At(99); e.Status != sessions.StatusOK || e.Pair != 201 {
		t.Errorf("the last request, answered by the line written in two pieces: %+v", e)
	}
	if c := x.Counts(); c.Pending != 0 || c.Skipped != 0 {
		t.Errorf("counts %+v", c)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Follow returned %v once its context was done", err)
	}
}

func TestFollowHoldsAPartialLastLine(t *testing.T) {
	line := `{"t":1,"dir":"h2s","frame":"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}"}` + "\n"
	path := writeFile(t, []byte(line+line[:30]))
	x := sessions.NewIndex(sessions.IndexOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := make(chan struct{}, 16)
	done := make(chan error, 1)
	go func() {
		done <- x.Follow(ctx, path, time.Millisecond, func(int64, int64) { progress <- struct{}{} })
	}()
	waitProgress := func() {
		t.Helper()
		select {
		case <-progress:
		case <-time.After(20 * time.Second):
			t.Fatalf("no progress; Len() = %d", x.Len())
		}
	}
	waitProgress()
	// The first line is indexed; the half line is held until it ends.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n := x.Len(); n != 1 || x.Counts().Skipped != 0 {
		t.Fatalf("Len() = %d, counts %+v; want the complete line alone", n, x.Counts())
	}
	if _, err := f.WriteString(line[30:]); err != nil {
		t.Fatal(err)
	}
	waitProgress()
	if n := x.Len(); n != 2 || x.Counts().Skipped != 0 {
		t.Errorf("Len() = %d, counts %+v; want the completed line", n, x.Counts())
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

func TestAnIndexReadsOneFile(t *testing.T) {
	path, _ := writeSession(t, testHeader(), req(1, "1", "a"))
	x := indexFile(t, path, sessions.IndexOptions{})
	if err := x.ReadFile(context.Background(), path, nil); err == nil {
		t.Error("a second ReadFile into the same index did not fail")
	}
	if _, err := sessions.IndexFile(filepath.Join(t.TempDir(), "missing.jsonl"), sessions.IndexOptions{}, nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("IndexFile of a missing file: %v", err)
	}
}

func TestEntryCostsAtMost120BytesOfHeap(t *testing.T) {
	// The slope from 100k to 200k entries: the tracker's fixed tables
	// and the first chunks do not count.
	const n = 100_000
	_, data := bigSession(t, 2*n, 10)
	var evs []sessions.Event
	var offs []int64
	r := sessions.NewReader(bytes.NewReader(data))
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, copyEvent(ev))
		offs = append(offs, r.Offset())
	}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	x := sessions.NewIndex(sessions.IndexOptions{})
	x.SetHeader(testHeader())
	for i := range n {
		x.Add(&evs[i], offs[i])
	}
	before := heap()
	for i := n; i < 2*n; i++ {
		x.Add(&evs[i], offs[i])
	}
	after := heap()
	runtime.KeepAlive(x)
	runtime.KeepAlive(evs)
	runtime.KeepAlive(offs)
	perEntry := float64(after-before) / n
	t.Logf("%.1f bytes an entry", perEntry)
	if perEntry > 120 {
		t.Errorf("an entry costs %.1f bytes of heap, want at most 120", perEntry)
	}
}

func TestCodeSetHoldsEveryFindingCode(t *testing.T) {
	var s sessions.CodeSet
	for _, c := range classify.Codes() {
		if s = s.With(c); !s.Has(c) {
			t.Fatalf("CodeSet cannot hold code %v (%d)", c, c)
		}
	}
	if got := s.Codes(); !slices.Equal(got, classify.Codes()) || s.Len() != len(got) {
		t.Errorf("Codes() = %v", got)
	}
}

// A session's header may say that its writer judged frames by a parse
// limit below classify.MaxParse (a tap does, to keep its memory small):
// Check and the Index then judge a larger frame from its first bytes, as
// the writer did, and the header reads back with its limit.
func TestFramesOverTheHeadersParseLimitAreJudgedAsTheWriterDid(t *testing.T) {
	big := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"text":"` + strings.Repeat("x", 100) + `"}}`)
	limited := testHeader()
	limited.ParseLimit = 64
	for _, c := range []struct {
		name     string
		h        sessions.Header
		oversize bool
	}{
		{"limit in the header", limited, true},
		{"no limit", testHeader(), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, _ := writeSession(t, c.h, sessions.FrameRecord{T: 1, Dir: classify.H2S, Frame: big})
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if h, _ := sessions.NewReader(bytes.NewReader(data)).Header(); h.ParseLimit != c.h.ParseLimit {
				t.Errorf("the header reads back with parse limit %d, want %d", h.ParseLimit, c.h.ParseLimit)
			}
			rep, err := check.Run(bytes.NewReader(data), check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := slices.ContainsFunc(rep.Findings, func(f check.Finding) bool { return f.Code == classify.CodeOversize })
			if got != c.oversize {
				t.Errorf("Check found oversize: %v, want %v (findings %+v)", got, c.oversize, rep.Findings)
			}
			sameFindingsAsCheck(t, path)
		})
	}
}

// IndexOptions.Pace is asked between batches while a stream is indexed,
// and while it waits the index grows no further; once it lets go, the
// rest is indexed.
func TestPaceHoldsIndexingBackBetweenBatches(t *testing.T) {
	recs, data := notesSession(t, 5000)
	held, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	x := sessions.NewIndex(sessions.IndexOptions{Pace: func(ctx context.Context) {
		once.Do(func() {
			held <- struct{}{}
			<-release
		})
	}})
	done := make(chan error, 1)
	go func() { done <- x.ReadStream(context.Background(), bytes.NewReader(data), nil) }()
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("the stream was indexed (%v) and Pace never asked", err)
	}
	// The batch before the wait is published (however slowly, under the
	// race detector on a loaded machine), then it stops growing while
	// Pace holds, short of the whole file.
	n, last := 0, -1
	for deadline := time.Now().Add(15 * time.Second); (n == 0 || n != last) && time.Now().Before(deadline); {
		last = n
		time.Sleep(100 * time.Millisecond)
		n = x.Len()
	}
	if n == 0 || n >= len(recs) || n != last {
		t.Errorf("while Pace waited the index had %d of %d records (%d just before), want one batch's worth, held", n, len(recs), last)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := x.Len(); n != len(recs) {
		t.Errorf("after Pace let go the index had %d of %d records", n, len(recs))
	}
}

// notesSession is a session file of n notifications host → server: its
// records and its bytes.
func notesSession(t *testing.T, n int) (recs []any, data []byte) {
	t.Helper()
	for i := range n {
		recs = append(recs, sessions.FrameRecord{T: int64(i), Dir: classify.H2S,
			Frame: fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"n","params":{"i":%d}}`, i)})
	}
	path, _ := writeSession(t, testHeader(), recs...)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return recs, data
}

// trickle is a stream that a tap writes as it goes: it gives its parts
// one at a time, saying it waits (as a tap.Follower does) before each
// part after the first.
type trickle struct {
	parts [][]byte
	wait  func()
}

func (r *trickle) OnWait(f func()) { r.wait = f }

func (r *trickle) Read(p []byte) (int, error) {
	for len(r.parts) > 0 && len(r.parts[0]) == 0 {
		r.parts = r.parts[1:]
		if len(r.parts) > 0 && r.wait != nil {
			r.wait()
		}
	}
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.parts[0])
	r.parts[0] = r.parts[0][n:]
	return n, nil
}

// A stream that a tap writes reaches its end at each of the tap's
// flushes, long before a batch is full: Pace is asked there too, or a
// view would keep up with a busy tap batch by small batch.
func TestPaceIsAskedAtEachEndOfAStreamBeingWritten(t *testing.T) {
	recs, data := notesSession(t, 30)
	lines := bytes.SplitAfter(data, []byte("\n"))
	parts := [][]byte{bytes.Join(lines[:11], nil), bytes.Join(lines[11:21], nil), bytes.Join(lines[21:], nil)}
	var paced atomic.Int32
	x := sessions.NewIndex(sessions.IndexOptions{Pace: func(ctx context.Context) { paced.Add(1) }})
	if err := x.ReadStream(context.Background(), &trickle{parts: parts}, nil); err != nil {
		t.Fatal(err)
	}
	if n := x.Len(); n != len(recs) {
		t.Fatalf("the index has %d of %d records", n, len(recs))
	}
	if n := paced.Load(); n < 2 {
		t.Errorf("Pace was asked %d times for a stream that reached its end twice before it ended, want at each end", n)
	}
}

// The frames of a multi round-trip call are tied to its first request:
// the answer that asked for input says so, and the retry and its answer
// name the first request, the answer with the call's whole latency and
// its rounds.
func TestTheRetryOfAMultiRoundTripCallIsTiedToItsFirstRequest(t *testing.T) {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	frame := func(t int64, dir classify.Direction, s string) sessions.FrameRecord {
		return sessions.FrameRecord{T: t, Dir: dir, Frame: []byte(s)}
	}
	path, _ := writeSession(t, testHeader(),
		frame(1000, classify.H2S, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+meta+`,"name":"confirm"}}`),                                                                    // line 2
		frame(3000, classify.S2H, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s","inputRequests":{"c":{"method":"elicitation/create","params":{}}}}}`), // line 3
		frame(8000, classify.H2S, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{`+meta+`,"name":"confirm","inputResponses":{"c":{"action":"accept"}},"requestState":"s"}}`),      // line 4
		frame(9000, classify.S2H, `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[]}}`),                                                                               // line 5
	)
	x := indexFile(t, path, sessions.IndexOptions{})
	for _, tc := range []struct {
		line int64
		want sessions.CallLink
	}{
		{2, sessions.CallLink{}},
		{3, sessions.CallLink{InputRequired: true, CallLatency: 2 * time.Millisecond, Round: 1}},
		{4, sessions.CallLink{Origin: 2}},
		{5, sessions.CallLink{Origin: 2, CallLatency: 8 * time.Millisecond, Round: 2}},
	} {
		if got := entryBySeq(t, x, tc.line).Call; got != tc.want {
			t.Errorf("line %d: %+v, want %+v", tc.line, got, tc.want)
		}
	}
}

// The capabilities the index gives name the file's lines: the demo
// session's handshake is on lines 2 and 5.
func TestIndexCapabilitiesNameTheLinesTheyCameFrom(t *testing.T) {
	x := indexFile(t, "../testdata/sessions/recorded/session.jsonl", sessions.IndexOptions{})
	c := x.Capabilities()
	if c.Client.Name != "demo-host" || c.Client.Seq != 2 || c.Server.Name != "demo-server" || c.Server.Version != "0.3" || c.Server.Seq != 5 {
		t.Errorf("identities: %+v and %+v", c.Client, c.Server)
	}
	if string(c.ServerCaps.JSON) != `{"tools":{}}` || c.ServerCaps.Seq != 5 || c.AnsweredSeq != 5 || c.Answered != "2025-11-25" {
		t.Errorf("server: %+v", c)
	}
}
