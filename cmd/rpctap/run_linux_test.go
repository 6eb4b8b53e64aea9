package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// Nothing is lost: when the session file stops taking writes for a while (a
// full disk; here a file size limit the test lifts), the traffic goes on,
// rpctap says so once and says when the file takes writes again, and the
// file accounts for every frame: the ones it holds plus the ones its gap
// records count as missing are all the frames that crossed.
func TestSessionFileCountsTheFramesItCouldNotHold(t *testing.T) {
	r := startRunWrapped(t, []string{"/bin/sh", "-c", `ulimit -S -f 128 && exec "$0" "$@"`}, nil, []string{"/bin/cat"})
	const n = 3000
	frame := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"n","params":{"i":%d,"pad":"%s"}}`+"\n", i, strings.Repeat("x", 100))
	}
	send := func(from, to int) {
		var b strings.Builder
		for i := from; i < to; i++ {
			b.WriteString(frame(i))
		}
		go io.WriteString(r.stdin, b.String()) // the tap's stdout is read below, meanwhile
		for i := from; i < to; i++ {
			if l := r.line(t, 30*time.Second); l != frame(i) {
				t.Fatalf("frame %d came back as %q", i, l)
			}
		}
	}
	send(0, n) // far past 64 KiB of file
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(r.stderr.String(), "cannot write the session file") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// The disk has room again.
	lim := syscall.Rlimit{Cur: ^uint64(0), Max: ^uint64(0)}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(r.cmd.Process.Pid), syscall.RLIMIT_FSIZE, uintptr(unsafe.Pointer(&lim)), 0, 0, 0); e != 0 {
		t.Fatalf("prlimit: %v", e)
	}
	send(n, 2*n)
	r.stdin.Close()
	if code := r.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit status %d", code)
	}
	lines := rpctapLines(r.stderr.String())
	if len(lines) != 3 || !strings.Contains(lines[0], "cannot write the session file") || !strings.Contains(lines[1], "takes writes again") {
		t.Errorf("rpctap said %q; want that it cannot write the file, then that it can, then how many frames it misses", lines)
	}
	held, missing, gaps, skipped := sessionCounts(t, r.path)
	t.Logf("held %v, missing %v in %d gap records, %d lines skipped", held, missing, gaps, skipped)
	// Every record in the file is whole, and the last line says how many
	// frames of each direction the file is missing.
	if skipped != 0 {
		t.Errorf("%d lines of the file are not whole records", skipped)
	}
	want := fmt.Sprintf("is missing %d frames host→server and %d server→host; its gap records say where", missing[classify.H2S], missing[classify.S2H])
	if len(lines) == 0 || !strings.Contains(lines[len(lines)-1], want) {
		t.Errorf("rpctap said %q last; want %q", lines, want)
	}
	for _, d := range []classify.Direction{classify.H2S, classify.S2H} {
		if held[d]+missing[d] != 2*n {
			t.Errorf("%s: %d frames in the file and %d counted missing; %d crossed", d, held[d], missing[d], 2*n)
		}
	}
	if gaps == 0 {
		t.Error("no gap record")
	}
}

// A header the file cannot take (here: over the file size limit, from a
// long command line) is a failing write like any other: the traffic goes
// on, rpctap says so, nothing crashes.
func TestSessionHeaderTheFileCannotTakeLeavesTrafficAlone(t *testing.T) {
	long := strings.Repeat("a", 100<<10) // the header quotes the command line
	r := startRunWrapped(t, []string{"/bin/sh", "-c", `ulimit -S -f 16 && exec "$0" "$@"`}, nil, []string{"/bin/sh", "-c", "exec cat", long, long, long})
	const frame = `{"jsonrpc":"2.0","method":"n"}` + "\n"
	go io.WriteString(r.stdin, frame)
	if l := r.line(t, 30*time.Second); l != frame {
		t.Fatalf("the frame came back as %q", l)
	}
	r.stdin.Close()
	if code := r.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit status %d; stderr: %s", code, r.stderr)
	}
	if !strings.Contains(r.stderr.String(), "cannot write the session file") || strings.Contains(r.stderr.String(), "panic") {
		t.Errorf("rpctap said %q; want that it cannot write the session file, and no panic", r.stderr)
	}
}

// End to end: a file that fills and never takes writes again (here a file
// size limit never lifted) holds whole records only, and rpctap's last line
// on stderr says how many frames of each direction it is missing: all those
// that crossed and are not in it.
func TestSessionFileThatNeverTakesWritesAgainSaysWhatItMisses(t *testing.T) {
	r := startRunWrapped(t, []string{"/bin/sh", "-c", `ulimit -S -f 64 && exec "$0" "$@"`}, nil, []string{"/bin/cat"})
	const n = 3000
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"m","params":{"pad":"%s"}}`+"\n", i, strings.Repeat("y", 100))
	}
	go func() { io.WriteString(r.stdin, b.String()); r.stdin.Close() }()
	got, err := io.ReadAll(r.stdout)
	if err != nil || string(got) != b.String() {
		t.Fatalf("the host read %d bytes (%v), want the %d it sent", len(got), err, b.Len())
	}
	if code := r.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit status %d; stderr: %s", code, r.stderr)
	}
	held, _, _, skipped := sessionCounts(t, r.path)
	if skipped != 0 {
		t.Errorf("%d lines of the file are not whole records", skipped)
	}
	if held[classify.S2H] == n {
		t.Fatal("the file took every frame: the size limit did not bite")
	}
	lines := rpctapLines(r.stderr.String())
	want := fmt.Sprintf("is missing %d frames host→server and %d server→host", n-held[classify.H2S], n-held[classify.S2H])
	if len(lines) == 0 || !strings.Contains(lines[len(lines)-1], want) || !strings.Contains(lines[len(lines)-1], "ends without the gap and exit records") {
		t.Errorf("rpctap said %q; want its last line to say the file %s and ends without its gap and exit records", lines, want)
	}
}

// sessionCounts reads the session file at path: the frames it holds and
// those its gap records count missing, per direction, its gap records,
// and the lines it skipped as not whole records.
func sessionCounts(t *testing.T, path string) (held, missing [4]int64, gaps int, skipped int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := sessions.NewReader(f)
	for {
		e, err := rd.Next()
		if err == io.EOF {
			return held, missing, gaps, rd.Skipped()
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case e.IsFrame():
			held[e.Dir]++
		case e.Kind == sessions.EventGap:
			missing[e.Dir] += e.Missing
			gaps++
		}
	}
}

// A frame whose record the file size limit has no room for (ulimit -f,
// set for the tap by the shell that starts it) is the only thing the
// file misses, every time: the file goes back to its last whole record,
// holds the gap record in the frame's place, then the small records
// after it and the exit record last, and rpctap's last word says its gap
// records say where. Run many times: none of it may hang on when the
// tap's flushes fall.
func TestARecordOverTheFileSizeLimitIsTheOnlyOneMissingEveryTime(t *testing.T) {
	const pings = `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	for run := range 20 {
		// 20 blocks: the header and small records fit, the 30 kB line does not.
		r := startRunWrapped(t, []string{"/bin/sh", "-c", `ulimit -S -f 20 && exec "$0" "$@"`}, nil,
			[]string{"/bin/sh", "-c", `head -c 30000 /dev/zero | tr "\0" x; echo; cat`})
		go func() { io.WriteString(r.stdin, pings); r.stdin.Close() }()
		got, err := io.ReadAll(r.stdout)
		if want := strings.Repeat("x", 30000) + "\n" + pings; err != nil || string(got) != want {
			t.Fatalf("run %d: the host read %d bytes (%v); want the %d the server wrote", run, len(got), err, len(want))
		}
		if code := r.wait(t, 30*time.Second); code != 0 {
			t.Fatalf("run %d: exit status %d; stderr: %s", run, code, r.stderr)
		}
		f, err := os.Open(r.path)
		if err != nil {
			t.Fatal(err)
		}
		rd := sessions.NewReader(f)
		story := map[classify.Direction][]string{}
		last := ""
		for {
			e, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case e.IsFrame():
				m := classify.Classify(e.Frame, e.Dir, classify.JSONRPC)
				story[e.Dir] = append(story[e.Dir], "id "+string(m.ID().Raw))
				last = "frame"
			case e.Kind == sessions.EventGap:
				story[e.Dir] = append(story[e.Dir], fmt.Sprintf("gap %d", e.Missing))
				last = "gap"
			default:
				last = e.Kind
			}
		}
		skipped := rd.Skipped()
		f.Close()
		h2s, s2h := strings.Join(story[classify.H2S], ", "), strings.Join(story[classify.S2H], ", ")
		if skipped != 0 || h2s != "id 1, id 2" || s2h != "gap 1, id 1, id 2" || last != sessions.EventExit {
			t.Errorf("run %d: the file holds h2s %q, s2h %q, %d lines skipped, its last record a %s; want h2s %q, s2h %q, none skipped, the exit last",
				run, h2s, s2h, skipped, last, "id 1, id 2", "gap 1, id 1, id 2")
		}
		lines := rpctapLines(r.stderr.String())
		if want := "is missing 0 frames host→server and 1 server→host; its gap records say where"; len(lines) == 0 || !strings.Contains(lines[len(lines)-1], want) {
			t.Errorf("run %d: rpctap said %q; want its last line to say the file %s", run, lines, want)
		}
		if t.Failed() {
			return
		}
	}
}

// A real host (the MCP Go SDK client) and server (server-everything)
// through a tap whose session file reaches its size limit at the answer
// to tools/list (ulimit -f, set by the shell that starts the tap): every
// answer reaches the host, and what reads the file does not take the
// requests whose answers the file could not hold for requests the server
// left owed. check says frames are missing (frames-missing on each gap
// record, and on those requests) and reports none of the host's
// requests unanswered-at-end; the view's header counts the frames
// missing and leaves those requests out of its pending count.
func TestRequestsWhoseAnswersTheFileCouldNotHoldAreNotOwed(t *testing.T) {
	client := needPeer(t, "bin/client")
	server := needPeer(t, "node_modules/.bin/mcp-server-everything")
	path := filepath.Join(t.TempDir(), "session.jsonl")
	// 16 blocks: the handshake fits, the answer to tools/list does not.
	tap := `ulimit -S -f 16 && exec "$0" run --no-listen --record "$1" -- "$2" stdio`
	cmd := exec.Command(client, "-call", `echo={"message":"hi"}`, "--", "/bin/sh", "-c", tap, rpctapBinary(t), path, server)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"step":"tools/list"`) || !strings.Contains(string(out), "Echo: hi") {
		t.Fatalf("the client: %v\n%s\nstderr: %s", err, out, stderr.String())
	}
	if !strings.Contains(stderr.String(), "its gap records say where") {
		t.Fatalf("rpctap did not say the file records its gaps: %s", stderr.String())
	}
	_, missing, _, _ := sessionCounts(t, path)
	if missing[classify.S2H] == 0 {
		t.Fatalf("the file misses no frame toward the host (%v): the size limit did not bite at the answer", missing)
	}

	var doc struct {
		Findings []struct {
			Code, Severity, Dir, Kind, Method string
			Line                              int
		} `json:"findings"`
	}
	res, _ := exec.Command(rpctapBinary(t), "check", "--json", path).Output()
	if err := json.Unmarshal(res, &doc); err != nil {
		t.Fatalf("check --json: %v\n%s", err, res)
	}
	gapSaid, listSpared, owed := false, false, 0
	for _, f := range doc.Findings {
		switch {
		case f.Code == "frames-missing" && f.Severity == "warn" && f.Dir == "s2h":
			gapSaid = true
		case f.Code == "frames-missing" && f.Kind == "request" && f.Method == "tools/list":
			listSpared = true
		case f.Code == "unanswered-at-end" && f.Dir == "h2s":
			t.Errorf("check reports the host's request on line %d (%s) unanswered-at-end; its answer is in the gap", f.Line, f.Method)
		case f.Code == "unanswered-at-end":
			owed++ // the server's roots/list, which this host never answers
		}
	}
	if !gapSaid || !listSpared {
		t.Errorf("check found %+v; want frames-missing on the gap toward the host and on tools/list", doc.Findings)
	}

	waitfor, _, _ := tmuxScreen(t, 120, 30, nil, rpctapBinary(t), "ui", path)
	waitfor(fmt.Sprintf("%d missing", missing[classify.H2S]+missing[classify.S2H]+missing[classify.Err]), fmt.Sprintf("%d pending", owed), "GAP")
}
