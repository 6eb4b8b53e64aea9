package tap

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// followNote is one line a follower reads from the tap.
type followNote struct {
	Size int64 `json:"size"`
	End  bool  `json:"end"`
	Busy bool  `json:"busy"`
}

// serveFollowing runs serveFollow on h and returns its notes as they come.
func serveFollowing(t *testing.T, h *hub) <-chan followNote {
	t.Helper()
	pr, pw := io.Pipe()
	stop := make(chan struct{})
	go func() {
		h.serveFollow(pw, stop)
		pw.Close()
	}()
	notes := make(chan followNote, 1<<16)
	go func() {
		defer close(notes)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var n followNote
			if err := json.Unmarshal(sc.Bytes(), &n); err != nil {
				t.Errorf("the tap sent %q: %v", sc.Bytes(), err)
				return
			}
			notes <- n
		}
	}()
	t.Cleanup(func() {
		close(stop)
		pr.Close()
	})
	return notes
}

// The file grows by the thousand flushes a second when a tap runs flat
// out: while it is busy a follower is told at most once every
// followEvery; otherwise of each flush at once; and always, at the end, of
// the latest size.
func TestFollowNotesAreSpacedOnlyWhileTheTapIsBusy(t *testing.T) {
	h := newHub(classify.FramingNDJSON)
	var waited atomic.Int64
	h.meter = newBusyMeter(func() time.Duration { return time.Duration(waited.Load()) }, nil)
	notes := serveFollowing(t, h)
	if n := <-notes; n.Size != 0 {
		t.Fatalf("first note %+v, want size 0", n)
	}
	var end int64
	// run advances the file every 200 µs for d, the traffic waiting share
	// of the time, and counts the notes that came meanwhile.
	run := func(d time.Duration, share float64) (count, flushes int) {
		for start := time.Now(); time.Since(start) < d; {
			before := time.Now()
			time.Sleep(200 * time.Microsecond)
			waited.Add(int64(share * float64(time.Since(before))))
			end += 1000
			h.advance(end, Stats{})
			flushes++
			for len(notes) > 0 {
				<-notes
				count++
			}
		}
		return count, flushes
	}
	const span = 200 * time.Millisecond
	spaced := int(span/followEvery) + 2 // the most notes a busy tap sends in span
	if n, f := run(span, 0); n <= spaced && f > 2*spaced {
		t.Errorf("an idle tap sent %d notes in %v for %d flushes, want each flush told", n, span, f)
	}
	run(2*busyWindow, 0.6) // the tap is found busy
	if n, f := run(span, 0.6); n > spaced {
		t.Errorf("a busy tap sent %d notes in %v for %d flushes, want at most one every %v", n, span, f, followEvery)
	}
	h.close()
	last := followNote{}
	for n := range notes {
		last = n
	}
	if !last.End || last.Size != end {
		t.Errorf("last note %+v, want the end at size %d", last, end)
	}
}

// Notes say busy while the tap's traffic spends more than busyShare of
// the time waiting for its recorder, and stop saying so when it no longer
// waits.
func TestFollowNotesSayBusyWhileTrafficWaitsForTheRecorder(t *testing.T) {
	h := newHub(classify.FramingNDJSON)
	var waited atomic.Int64
	h.meter = newBusyMeter(func() time.Duration { return time.Duration(waited.Load()) }, nil)
	notes := serveFollowing(t, h)
	<-notes
	var end int64
	// run advances the file every ms for d, the traffic waiting share of
	// the time, and returns the notes that came meanwhile.
	run := func(d time.Duration, share float64) []followNote {
		var got []followNote
		for start := time.Now(); time.Since(start) < d; {
			before := time.Now()
			time.Sleep(time.Millisecond)
			waited.Add(int64(share * float64(time.Since(before))))
			end += 1000
			h.advance(end, Stats{})
			for len(notes) > 0 {
				got = append(got, <-notes)
			}
		}
		return got
	}
	busyIn := func(ns []followNote) (busy, all int) {
		for _, n := range ns {
			if n.Busy {
				busy++
			}
		}
		return busy, len(ns)
	}
	if b, n := busyIn(run(300*time.Millisecond, 0)); b != 0 {
		t.Errorf("with no waiting, %d of %d notes said busy", b, n)
	}
	got := run(300*time.Millisecond, 0.6)
	if b, n := busyIn(got[len(got)/2:]); b == 0 {
		t.Errorf("with the traffic waiting 60%% of the time, none of the last %d notes said busy", n)
	}
	got = run(300*time.Millisecond, 0)
	if b, n := busyIn(got[len(got)/2:]); b != 0 {
		t.Errorf("after the waiting stopped, %d of the last %d notes still said busy", b, n)
	}
}

// A tap whose traffic stops after a note that said busy says, with no
// flush to carry it, that it no longer is: its views hold back until told.
func TestATapThatStopsBeingBusySaysSoWithNoFlush(t *testing.T) {
	h := newHub(classify.FramingNDJSON)
	var waited atomic.Int64
	h.meter = newBusyMeter(func() time.Duration { return time.Duration(waited.Load()) }, nil)
	notes := serveFollowing(t, h)
	<-notes
	var end int64
	for start := time.Now(); time.Since(start) < 3*busyWindow; {
		before := time.Now()
		time.Sleep(time.Millisecond)
		waited.Add(int64(0.9 * float64(time.Since(before))))
		end += 1000
		h.advance(end, Stats{})
	}
	busy := false
	for len(notes) > 0 {
		busy = (<-notes).Busy
	}
	for !busy {
		select {
		case n := <-notes:
			busy = n.Busy
		case <-time.After(5 * time.Second):
			t.Fatal("the notes never said busy while the traffic waited 90% of the time")
		}
	}
	// The traffic stops: no flush, no wait.
	for {
		select {
		case n := <-notes:
			if !n.Busy {
				if n.Size != end {
					t.Errorf("the note that the tap is no longer busy says size %d, want %d", n.Size, end)
				}
				return
			}
		case <-time.After(busyHold):
			t.Fatalf("no note said the tap was no longer busy within %v of its traffic stopping", busyHold)
		}
	}
}

// A follower reads the file as far as the notes say, keeps up with the
// notes while its reader is busy elsewhere (so Busy is current), says busy
// from a busy note until a note says otherwise (or busyHold passes with no
// note: a tap short of CPU sends them late), and ends at the end note.
func TestFollowerTracksTheTapsNotesWhileItsReaderIsAway(t *testing.T) {
	r, say := pipedFollower(t, "0123456789abcdef")
	say(`{"size":4}`)
	buf := make([]byte, 64)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "0123" {
		t.Fatalf("Read = %q, %v; want the 4 bytes announced", buf[:n], err)
	}
	// The reader is away: notes still arrive.
	say(`{"size":10,"busy":true}`)
	if !waitUntil(time.Second, r.Busy) {
		t.Fatal("Busy stayed false after a busy note")
	}
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "456789" {
		t.Fatalf("Read = %q, %v; want the next 6 bytes", buf[:n], err)
	}
	time.Sleep(busyHold / 4)
	if !r.Busy() {
		t.Fatalf("Busy went false %v after a busy note, with no note since", busyHold/4)
	}
	say(`{"size":10}`)
	if !waitUntil(busyHold/4, func() bool { return !r.Busy() }) {
		t.Fatal("Busy stayed true after a note that did not say busy")
	}
	say(`{"size":10,"busy":true}`)
	if !waitUntil(time.Second, r.Busy) {
		t.Fatal("Busy stayed false after a second busy note")
	}
	if !waitUntil(busyHold+time.Second, func() bool { return !r.Busy() }) {
		t.Fatalf("Busy still true %v after the last busy note", busyHold)
	}
	say(`{"size":16,"end":true}`)
	got, err := io.ReadAll(r)
	if err != nil || string(got) != "abcdef" {
		t.Fatalf("ReadAll = %q, %v; want the rest, then EOF", got, err)
	}
}

// pipedFollower follows a file holding content, with notes from the tap
// given by say (on the test's goroutine).
func pipedFollower(t *testing.T, content string) (r *Follower, say func(note string)) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	tapEnd, viewEnd := net.Pipe()
	r = newFollower(f, viewEnd)
	t.Cleanup(func() {
		tapEnd.Close()
		r.Close()
	})
	return r, func(note string) {
		t.Helper()
		if _, err := io.WriteString(tapEnd, note+"\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// waitUntil polls cond until it holds or d passes.
func waitUntil(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// Reading a closed follower, or a Read waiting when it closes, ends with
// net.ErrClosed, never with the io.EOF of a session that ended.
func TestClosedFollowerReadsAsClosedNotEnded(t *testing.T) {
	open := func() *Follower {
		r, say := pipedFollower(t, "0123")
		say(`{"size":4}`)
		buf := make([]byte, 8)
		if n, err := r.Read(buf); n != 4 || err != nil {
			t.Fatalf("Read = %d, %v", n, err)
		}
		return r
	}
	r := open()
	r.Close()
	time.Sleep(10 * time.Millisecond) // the notes reader sees the end
	if _, err := r.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a Read after Close returned %v, want net.ErrClosed", err)
	}
	r = open()
	got := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 8))
		got <- err
	}()
	time.Sleep(10 * time.Millisecond)
	r.Close()
	if err := <-got; !errors.Is(err, net.ErrClosed) {
		t.Errorf("a Read waiting when the follower closed returned %v, want net.ErrClosed", err)
	}
}

// A view that attaches after the session ended does not count among the
// views the tap waits for: its Add would race the tap's Wait.
func TestAViewAttachingAfterTheEndIsNotWaitedFor(t *testing.T) {
	h := newHub(classify.FramingNDJSON)
	early, _ := h.attach(true)
	h.close()
	late, _ := h.attach(true)
	if !early.served || late.served {
		t.Fatalf("served: early %v, late %v; want true, false", early.served, late.served)
	}
	h.detach(early)
	waited := make(chan struct{})
	go func() { h.serving.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("the tap waits for a view that attached after the session ended")
	}
	h.detach(late)
}

// A view that falls behind past the note standing for a frame it cannot
// get (one too large to hold, on a tap that records no file) misses that
// frame: the count it is told of includes it.
func TestAViewThatMissesTheNoteOfAFrameTooLargeToHoldCountsTheFrame(t *testing.T) {
	h := newHub(classify.FramingNDJSON)
	s, _ := h.attach(false)
	defer h.detach(s)
	full := published{seq: 2, line: make([]byte, subQueueBytes), end: subQueueBytes, frame: true} // the view's queue is full with it
	note := published{line: appendMissedNote(nil, 0, "a frame of 20 MiB", 1), offset: subQueueBytes, end: subQueueBytes, missed: true}
	h.publish([]published{full, note}, subQueueBytes, Stats{})
	if !s.gap || s.missed != 1 {
		t.Errorf("the view's gap is open %v, missing %d frames; want open, missing the frame too large to hold", s.gap, s.missed)
	}
}

// The busy meter judges a busyWindow at a time, from what the relays
// waited for the recorder and what the process's threads used of the CPU
// and waited for one: past busyShare, busyCPU or busyRunnable of the
// window, the tap is busy, until a window under all three. Within a
// window, the verdict on the last one stands, and no clock is read.
func TestTheBusyMeterJudgesEachWindowByWaitsAndCPU(t *testing.T) {
	var waited, cpu, runnable time.Duration
	schedOK, looks := true, 0
	m := newBusyMeter(func() time.Duration { return waited }, func() (time.Duration, time.Duration, bool) {
		looks++
		return cpu, runnable, schedOK
	})
	clock := time.Unix(1000, 0)
	m.now, m.since = func() time.Time { return clock }, clock
	const w = busyWindow
	steps := []struct {
		what                  string
		elapsed               time.Duration // since the last step
		waited, cpu, runnable time.Duration // added meanwhile
		schedOK               bool
		busy                  bool
	}{
		{"idle", w, 0, w / 10, 0, true, false},
		{"over half a core", w, 0, w*6/10 + time.Millisecond, 0, true, true},
		{"the window not over yet", w / 2, 0, 0, 0, true, true},
		{"the rest of that window idle", w / 2, 0, 0, 0, true, false},
		{"under half a core", w, 0, w * 4 / 10, 0, true, false},
		{"its threads waiting for a CPU", w, 0, w / 10, w*3/10 + time.Millisecond, true, true},
		{"the traffic waiting for the recorder", w, w*3/10 + time.Millisecond, w / 10, 0, true, true},
		{"no scheduler figures, the traffic not waiting", w, 0, w, w, false, false},
		{"no scheduler figures, the traffic waiting", w, w / 2, w, w, false, true},
		{"a long idle window", 10 * w, w, 2 * w, 0, true, false},
	}
	var inWindow time.Duration // of the window open
	for _, s := range steps {
		clock = clock.Add(s.elapsed)
		inWindow += s.elapsed
		open := inWindow < w
		if !open {
			inWindow = 0
		}
		waited, cpu, runnable, schedOK = waited+s.waited, cpu+s.cpu, runnable+s.runnable, s.schedOK
		before := looks
		if got := m.check(); got != s.busy {
			t.Errorf("%s: busy %v, want %v", s.what, got, s.busy)
		}
		if open != (looks == before) {
			t.Errorf("%s: the meter read the scheduler figures %d times, with the window open %v", s.what, looks-before, open)
		}
	}
}
