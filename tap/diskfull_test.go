package tap

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// fullFile is a session file on a disk with room for only so many bytes:
// a write past them writes what fits and fails with ENOSPC, as a full
// disk does. The disk stays full: room the file frees by truncation is
// taken at once by others, until setRoom.
type fullFile struct {
	mu    sync.Mutex
	data  []byte
	pos   int64
	room  int64
	freed bool // setRoom was called: the room stays
	// freeAtExit: the disk has room again once the tap tries to write
	// the exit record (it keeps trying to write what the file misses).
	freeAtExit bool
	// sizeLimit: room is a limit on the file's size (ulimit -f), not a
	// full disk: a write past it fails with EFBIG, and what truncation
	// frees can be written again.
	sizeLimit bool
	failed    int // writes that failed
}

func (f *fullFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := int64(len(p))
	if f.freeAtExit && bytes.Contains(p, []byte(`"event":"exit"`)) {
		f.room, f.freed = 1<<30, true
	}
	if f.pos+n > f.room {
		n = max(f.room-f.pos, 0)
	}
	if end := f.pos + n; end > int64(len(f.data)) {
		f.data = append(f.data, make([]byte, end-int64(len(f.data)))...)
	}
	copy(f.data[f.pos:], p[:n])
	f.pos += n
	if n < int64(len(p)) {
		f.failed++
		if f.sizeLimit {
			return int(n), &os.PathError{Op: "write", Path: "session.jsonl", Err: syscall.EFBIG}
		}
		return int(n), &os.PathError{Op: "write", Path: "session.jsonl", Err: syscall.ENOSPC}
	}
	return int(n), nil
}

func (f *fullFile) Seek(off int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch whence {
	case io.SeekStart:
		f.pos = off
	case io.SeekCurrent:
		f.pos += off
	default:
		f.pos = int64(len(f.data)) + off
	}
	return f.pos, nil
}

func (f *fullFile) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data = f.data[:min(size, int64(len(f.data)))]
	if !f.freed && !f.sizeLimit {
		// A write that failed before setRoom may truncate after it:
		// a disk that was freed stays freed.
		f.room = min(f.room, int64(len(f.data)))
	}
	return nil
}

func (f *fullFile) Close() error { return nil }

func (f *fullFile) setRoom(n int64) {
	f.mu.Lock()
	f.room, f.freed = n, true
	f.mu.Unlock()
}

// waitFailed waits until a write to the file has failed.
func (f *fullFile) waitFailed(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(generous); ; time.Sleep(time.Millisecond) {
		f.mu.Lock()
		n := f.failed
		f.mu.Unlock()
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write to the full disk failed within %v", generous)
		}
	}
}

func (f *fullFile) bytes() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return bytes.Clone(f.data)
}

// A disk that fills during a session and is never freed leaves a file of
// whole records (the one that did not fit is cut off, not left torn), and
// the tap's last word on stderr says how many frames of each direction the
// file is missing; the frames in the file and those counted missing are all
// the frames that crossed. When the disk has room again before the end, the
// file gets its gap records and its exit record.
func TestFullDiskLeavesWholeRecordsAndCountsTheMissingFrames(t *testing.T) {
	const n = 300
	var frames []byte
	for i := range n {
		frames = fmt.Appendf(frames, `{"jsonrpc":"2.0","method":"n","params":{"i":%d,"pad":"%s"}}`+"\n", i, strings.Repeat("x", 60))
	}
	for _, freed := range []bool{false, true} {
		t.Run(fmt.Sprintf("freed %v", freed), func(t *testing.T) {
			file := &fullFile{room: 4000} // the header and a few dozen records
			warns := newSink(true)
			tp, err := New(Options{Argv: []string{"/bin/cat"}, Record: true, Path: t.TempDir() + "/session.jsonl",
				Warn: func(msg string) { fmt.Fprintln(warns, msg) }})
			if err != nil {
				t.Fatal(err)
			}
			tp.create = func(string) (sessionFile, error) { return file, nil }
			pr, pw := io.Pipe()
			out := newSink(true)
			done := make(chan struct{})
			go func() {
				defer close(done)
				if _, err := tp.Run(context.Background(), pr, out, io.Discard); err != nil {
					t.Errorf("Run: %v", err)
				}
			}()
			pw.Write(frames)
			out.wait(t, generous, "the frames back", func(s *sink) bool { return s.buf.Len() == len(frames) })
			warns.waitFor(t, "cannot write the session file")
			if freed {
				file.setRoom(1 << 30)
			}
			pw.Close()
			<-done
			if !bytes.Equal(out.bytes(), frames) {
				t.Fatal("the host did not read what it sent")
			}

			data := file.bytes()
			if len(data) == 0 || data[len(data)-1] != '\n' {
				t.Errorf("the file ends in a torn line: %q", clip(data[max(len(data)-80, 0):], 80))
			}
			h, evs, skipped := readRecords(t, bytes.NewReader(data))
			if skipped != 0 || h.Version != sessions.Version {
				t.Errorf("%d lines skipped, header version %d; want every line whole, the header first", skipped, h.Version)
			}
			var held, gaps [4]int64
			exits := 0
			for _, e := range evs {
				switch {
				case e.IsFrame():
					held[e.Dir]++
				case e.Kind == sessions.EventGap:
					gaps[e.Dir] += e.Missing
				case e.Kind == sessions.EventExit:
					exits++
				}
			}
			lines := strings.Split(strings.TrimSpace(warns.String()), "\n")
			last := lines[len(lines)-1]
			t.Logf("held %v, gaps %v, %d exit records; said %q", held, gaps, exits, lines)
			missing := [4]int64{classify.H2S: n - held[classify.H2S], classify.S2H: n - held[classify.S2H]}
			if missing[classify.H2S] == 0 || missing[classify.S2H] == 0 {
				t.Fatalf("the file held %v frames: the disk was not full", held)
			}
			want := fmt.Sprintf("is missing %d frames host→server and %d server→host", missing[classify.H2S], missing[classify.S2H])
			if !strings.Contains(last, want) {
				t.Errorf("the last line said %q; want it to say %q", last, want)
			}
			if freed {
				if gaps != missing || exits != 1 {
					t.Errorf("gap records count %v missing and there are %d exit records; want %v and 1", gaps, exits, missing)
				}
				if !strings.Contains(last, "gap records say where") {
					t.Errorf("the last line said %q; want that the gap records say where", last)
				}
			} else {
				if gaps != [4]int64{} || exits != 0 {
					t.Errorf("a full disk took gap records %v and %d exit records", gaps, exits)
				}
				if !strings.Contains(last, "the disk is full") {
					t.Errorf("the last line said %q; want that the disk is full", last)
				}
			}
		})
	}
}

// A disk that has room again only after the session's exit was noted
// gets the gap records and then the exit record, in time order: the gap
// records stand where the frames went missing, at the time of the last
// of them, not at the time the disk had room again (after the exit).
func TestGapRecordsWrittenAtTheEndComeBeforeTheExitInTime(t *testing.T) {
	file := &fullFile{room: 2000, freeAtExit: true}
	tp, err := New(Options{Argv: []string{"/bin/cat"}, Record: true, Path: t.TempDir() + "/session.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	tp.create = func(string) (sessionFile, error) { return file, nil }
	var frames []byte
	for i := range 100 {
		frames = fmt.Appendf(frames, `{"jsonrpc":"2.0","method":"n","params":{"i":%d,"pad":"%s"}}`+"\n", i, strings.Repeat("x", 60))
	}
	pr, pw := io.Pipe()
	out := newSink(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := tp.Run(context.Background(), pr, out, io.Discard); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	pw.Write(frames)
	out.wait(t, generous, "the frames back", func(s *sink) bool { return s.buf.Len() == len(frames) })
	file.waitFailed(t) // the frames go missing: the disk is full
	pw.Close()
	<-done
	_, evs, skipped := readRecords(t, bytes.NewReader(file.bytes()))
	var last int64
	gaps, exits := 0, 0
	for _, e := range evs {
		if e.T < last {
			t.Errorf("line %d (%s %s) at %d µs comes after a record at %d µs", e.Line, e.Kind, e.Dir, e.T, last)
		}
		last = max(last, e.T)
		switch e.Kind {
		case sessions.EventGap:
			gaps++
			if exits > 0 {
				t.Errorf("line %d: a gap record after the exit: no frame goes missing once the server has exited", e.Line)
			}
		case sessions.EventExit:
			exits++
		}
	}
	if skipped != 0 || gaps == 0 || exits != 1 {
		t.Errorf("%d lines skipped, %d gap records, %d exit records; want none skipped, gap records and the exit", skipped, gaps, exits)
	}
}

// A frame too large to hold whose spool cannot even be made (no file
// descriptor left; here its directory is gone) is the one frame missing,
// in a gap record where it was; the next frame is recorded.
func TestAFrameWhoseSpoolCannotBeMadeIsTheOnlyOneMissing(t *testing.T) {
	file := &fullFile{room: 1 << 30}
	warns := newSink(true)
	tp, err := New(Options{Argv: []string{"/bin/cat"}, Record: true, Path: filepath.Join(t.TempDir(), "gone", "session.jsonl"),
		Warn: func(msg string) { fmt.Fprintln(warns, msg) }})
	if err != nil {
		t.Fatal(err)
	}
	tp.create = func(string) (sessionFile, error) { return file, nil }
	big := `{"jsonrpc":"2.0","method":"big","params":{"p":"` + strings.Repeat("x", parseLimit+10) + `"}}` + "\n"
	small := `{"jsonrpc":"2.0","method":"small"}` + "\n"
	pr, pw := io.Pipe()
	out := newSink(false)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := tp.Run(context.Background(), pr, out, io.Discard); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	io.WriteString(pw, big+small)
	pw.Close()
	<-done
	_, evs, _ := readRecords(t, bytes.NewReader(file.bytes()))
	// Per direction: cat sends the big frame back too, and its spool
	// cannot be made either.
	got := map[classify.Direction][]string{}
	for _, e := range evs {
		switch {
		case e.Kind == sessions.EventGap:
			got[e.Dir] = append(got[e.Dir], fmt.Sprintf("gap %d", e.Missing))
		case e.IsFrame():
			got[e.Dir] = append(got[e.Dir], string(e.Frame))
		}
	}
	for _, d := range []classify.Direction{classify.H2S, classify.S2H} {
		if want := "gap 1; " + strings.TrimSpace(small); strings.Join(got[d], "; ") != want {
			t.Errorf("%s: the session file holds %q; want %q", d, got[d], want)
		}
	}
	if !strings.Contains(warns.String(), "could not be kept to be recorded") {
		t.Errorf("the tap said %q", warns.String())
	}
}

// fileRecorder is a recorder of the session file file, driven by the
// test alone: put hands it an item as a relay does, and it is recorded at
// once; flush is the tick's, or with end the session's last.
func fileRecorder(t *testing.T, file sessionFile, warn func(string)) *recorder {
	t.Helper()
	r := &recorder{limit: parseLimit, hub: newHub(classify.FramingNDJSON), tracker: classify.NewTracker(classify.TrackerOptions{}),
		warn: warn, free: make(chan *batch, batchesInFlight), started: now()}
	for range batchesInFlight {
		r.free <- newBatch()
	}
	w, err := sessions.NewWriter(tee{r}, sessions.Header{ID: "test", Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	r.w, r.hub.header = w, bytes.Clone(r.last)
	r.file, r.bw = file, bufio.NewWriterSize(file, 256<<10)
	r.bw.Write(r.hub.header)
	r.seq = 1
	r.flush()
	return r
}

// put records it as the dispatcher does when nothing else is in flight.
func (r *recorder) put(it item) {
	it.at = now()
	r.process(it)
	r.submit()
}

// flushFile flushes as the tick does; with end, as the session's end does.
func (r *recorder) flushFile(end bool) {
	r.mu.Lock()
	r.closed = r.closed || end
	r.flush()
	r.mu.Unlock()
}

// frameItem is a whole frame toward dir: the JSON-RPC request ping with
// a param of pad bytes.
func frameItem(dir classify.Direction, id, pad int) item {
	return item{dir: dir, whole: true, data: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"%s"}}`, id, strings.Repeat("x", pad))}
}

// fileStory is the session file's records after its header, in short:
// "h2s 1" for a frame of id 1 toward the server, "gap s2h 1", "exit",
// "note TEXT"; a torn line is "torn".
func fileStory(t *testing.T, data []byte) string {
	t.Helper()
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return "torn"
	}
	_, evs, skipped := readRecords(t, bytes.NewReader(data))
	var out []string
	if skipped > 0 {
		out = append(out, fmt.Sprintf("%d lines skipped", skipped))
	}
	for _, e := range evs {
		switch {
		case e.IsFrame():
			m := classify.Classify(e.Frame, e.Dir, classify.JSONRPC)
			out = append(out, e.Dir.String()+" "+string(m.ID().Raw))
		case e.Kind == sessions.EventGap:
			out = append(out, fmt.Sprintf("gap %s %d", e.Dir, e.Missing))
		case e.Kind == sessions.EventNote:
			out = append(out, "note "+e.Text)
		default:
			out = append(out, e.Kind)
		}
	}
	return strings.Join(out, "; ")
}

// A record that the file's size limit has no room for, in the buffer
// with the records after it when the session ends, is the only thing
// missing: the file goes back to its last whole record, and the gap
// record, then the note and the exit record after it are written there, in
// the last flush; the tap's last word says the gap records say where.
func TestTheLastFlushWritesTheGapAndTheExitAfterARecordTheFileHadNoRoomFor(t *testing.T) {
	file := &fullFile{room: 2000, sizeLimit: true}
	var said []string
	r := fileRecorder(t, file, func(msg string) { said = append(said, msg) })
	r.put(frameItem(classify.H2S, 1, 10))
	r.flushFile(false)
	r.put(frameItem(classify.S2H, 2, 4000)) // over the limit, and under soloRecord: it waits in the buffer
	r.put(item{event: &sessions.EventRecord{Kind: sessions.EventNote, Text: "a note"}})
	code := 0
	r.put(item{event: &sessions.EventRecord{Kind: sessions.EventExit, Code: &code}})
	r.flushFile(true)
	if got, want := fileStory(t, file.bytes()), "h2s 1; gap s2h 1; note a note; exit"; got != want {
		t.Errorf("the session file holds %q; want %q", got, want)
	}
	report := r.missingReport("session.jsonl")
	if !strings.Contains(report, "missing 0 frames host→server and 1 server→host; its gap records say where") {
		t.Errorf("the tap's last word is %q; said before: %q", report, said)
	}
}

// A large record that the file's size limit has no room for takes no
// record after it with it: it is flushed on its own (or, larger than the
// buffer, written straight to the file), and in its place the file holds
// its gap record, then the small records that came after it, whatever
// the timing of the flushes.
func TestALargeRecordTheFileHasNoRoomForIsTheOnlyOneMissing(t *testing.T) {
	for _, pad := range []int{30000, 300000} {
		t.Run(fmt.Sprintf("pad %d", pad), func(t *testing.T) {
			file := &fullFile{room: 20 << 10, sizeLimit: true}
			r := fileRecorder(t, file, func(string) {})
			r.put(frameItem(classify.H2S, 1, 10))
			r.put(frameItem(classify.S2H, 2, pad))
			r.put(frameItem(classify.S2H, 3, 10))
			r.put(frameItem(classify.S2H, 4, 10))
			r.flushFile(true)
			if got, want := fileStory(t, file.bytes()), "h2s 1; gap s2h 1; s2h 3; s2h 4"; got != want {
				t.Errorf("the session file holds %q; want %q", got, want)
			}
			if file.failed != 1 {
				t.Errorf("%d writes failed; want only the large record's", file.failed)
			}
		})
	}
}

// Notes made while the file takes no writes (a full disk) are kept, and
// written after the gap records once it takes them again, before the
// exit record.
func TestNotesMadeWhileTheDiskIsFullAreWrittenOnceItHasRoom(t *testing.T) {
	file := &fullFile{room: 1000}
	r := fileRecorder(t, file, func(string) {})
	r.put(frameItem(classify.H2S, 1, 10))
	r.flushFile(false)
	r.put(frameItem(classify.S2H, 2, 1000))
	r.flushFile(false) // it fails: the disk is full
	r.put(item{event: &sessions.EventRecord{Kind: sessions.EventNote, Text: "a note"}})
	code := 0
	r.put(item{event: &sessions.EventRecord{Kind: sessions.EventExit, Code: &code}})
	r.flushFile(false)
	file.setRoom(1 << 20)
	r.flushFile(true)
	if got, want := fileStory(t, file.bytes()), "h2s 1; gap s2h 1; note a note; exit"; got != want {
		t.Errorf("the session file holds %q; want %q", got, want)
	}
}
