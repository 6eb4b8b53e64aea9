package tap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// The tap is never slowed by observers, and the live socket's promise: a
// subscriber that falls behind gets a gap note and every record after it,
// from the session file.

// note is the i-th frame the host sends in these tests.
func note(i int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":%d}}`, i)
}

// liveSocket is where a tap run by this test process listens.
func liveSocket(t *testing.T) string {
	t.Helper()
	dir, err := sessions.LiveDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, strconv.Itoa(os.Getpid())+".sock")
}

// startListening runs cat behind a tap that records and listens, and waits
// until it serves its socket (it does before it relays anything: the echo
// of a first frame proves it).
func startListening(t *testing.T) *session {
	t.Helper()
	s := startSession(t, Options{Argv: []string{"/bin/cat"}, Framing: classify.FramingNDJSON, Record: true, Listen: true, NoRedact: true})
	s.write(t, append(note(0), '\n'))
	s.out.waitFor(t, "\n")
	return s
}

// attach connects to the tap's socket as a live view and reads the header.
func attach(t *testing.T) (net.Conn, *sessions.Reader) {
	t.Helper()
	c, err := net.Dial("unix", liveSocket(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, `{"op":"attach"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(generous))
	rd := sessions.NewReader(c)
	if h, ok := rd.Header(); !ok || h.Argv[0] != "/bin/cat" {
		t.Fatalf("the live view began with %+v, %v; want the session header", h, ok)
	}
	return c, rd
}

// sendNotes writes notes from..to-1 as the host, many to a write.
func sendNotes(s *session, from, to int) error { return sendNotesBy(s, from, to, 32<<10) }

// sendNotesBy writes notes from..to-1 as the host, up to size bytes to a
// write (0: one frame to a write, so that the tap reads them one by one).
func sendNotesBy(s *session, from, to, size int) error {
	var b []byte
	for i := from; i < to; i++ {
		b = append(append(b, note(i)...), '\n')
		if len(b) > size || i == to-1 {
			if _, err := s.in.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	return nil
}

// frameLog checks that a live view sees each direction's frames in order,
// each once.
type frameLog struct {
	next  [3]int
	gaps  int
	other []string
}

func (l *frameLog) add(e *sessions.Event) error {
	switch {
	case e.Kind == sessions.EventNote && strings.Contains(e.Text, "fell behind"):
		l.gaps++
	case !e.IsFrame():
		l.other = append(l.other, e.Kind)
	case e.Dir == classify.H2S || e.Dir == classify.S2H:
		if want := note(l.next[e.Dir]); !bytes.Equal(e.Frame, want) {
			return fmt.Errorf("line %d: %s frame %q, want %q (frame %d of that direction)", e.Line, e.Dir, e.Frame, want, l.next[e.Dir])
		}
		l.next[e.Dir]++
	}
	return nil
}

func TestStuckSubscriberDoesNotSlowTrafficAndCatchesUpFromTheFile(t *testing.T) {
	n := 100_000
	if testing.Short() || raceEnabled {
		n = 30_000
	}
	s := startListening(t)
	c, rd := attach(t)
	_ = c
	// The view reads nothing from here on while n frames go each way,
	// written one by one, so that the tap has far more to record than
	// its recorder's queue holds.
	start := time.Now()
	go sendNotesBy(s, 1, n, 0)
	s.out.wait(t, generous, fmt.Sprintf("%d frames back from the server", n), func(s *sink) bool { return s.lines >= int64(n) })
	took := time.Since(start)
	t.Logf("%d frames each way past a stuck view in %v", n, took.Round(time.Millisecond))

	// The view reads again, while the session is still live: it gets a
	// gap note and then every frame, in order.
	var log frameLog
	for log.next[classify.H2S] < n || log.next[classify.S2H] < n {
		e, err := rd.Next()
		if err != nil {
			t.Fatalf("the view stopped after %v frames: %v", log.next, err)
		}
		if err := log.add(e); err != nil {
			t.Fatal(err)
		}
	}
	if log.gaps == 0 {
		t.Errorf("the view fell %d records behind and got no gap note", 2*n)
	}
	if rd.Skipped() != 0 {
		t.Errorf("the view had %d lines that are not records", rd.Skipped())
	}
	s.in.Close()
	s.wait(t, generous)
}

func TestTrafficFlowsWithNoSubscriber(t *testing.T) {
	n := 100_000
	if testing.Short() || raceEnabled {
		n = 30_000
	}
	s := startListening(t)
	start := time.Now()
	go sendNotes(s, 1, n)
	s.out.wait(t, generous, fmt.Sprintf("%d frames back from the server", n), func(s *sink) bool { return s.lines >= int64(n) })
	t.Logf("%d frames each way with no view in %v", n, time.Since(start).Round(time.Millisecond))
	s.in.Close()
	s.wait(t, generous)
	_, evs, _ := readSession(t, s.tap.Path())
	var log frameLog
	for i := range evs {
		if err := log.add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if log.next[classify.H2S] != n || log.next[classify.S2H] != n {
		t.Errorf("the file holds %v frames, want %d each way", log.next, n)
	}
}

func TestSubscriberKilledMidStreamDoesNotDisturbTraffic(t *testing.T) {
	n := 50_000
	if testing.Short() || raceEnabled {
		n = 20_000
	}
	s := startListening(t)
	c, rd := attach(t)
	go sendNotes(s, 1, n)
	// Read a little, then vanish with unread data in the socket, as a
	// killed process does.
	for range 100 {
		if _, err := rd.Next(); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	s.out.wait(t, generous, fmt.Sprintf("%d frames back from the server", n), func(s *sink) bool { return s.lines >= int64(n) })
	// A new view attaches and gets the whole session so far.
	_, rd2 := attach(t)
	var log frameLog
	for log.next[classify.H2S] < n || log.next[classify.S2H] < n {
		e, err := rd2.Next()
		if err != nil {
			t.Fatalf("the second view stopped after %v frames: %v", log.next, err)
		}
		if err := log.add(e); err != nil {
			t.Fatal(err)
		}
	}
	s.in.Close()
	if res := s.wait(t, generous); res.ExitCode != 0 {
		t.Errorf("Result %+v", res)
	}
}

// A live view gets each record as it happens, not when enough have piled
// up to fill a buffer or when the session ends.
func TestSubscriberSeesEachRecordAsItComes(t *testing.T) {
	s := startListening(t)
	c, rd := attach(t)
	var log frameLog
	for i := 1; i <= 3; i++ {
		s.write(t, append(note(i), '\n'))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for log.next[classify.S2H] <= i {
			e, err := rd.Next()
			if err != nil {
				t.Fatalf("frame %d did not reach the live view: %v", i, err)
			}
			if err := log.add(e); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// When the session file cannot be written, nothing else is lost: the
// traffic goes on and the tap says so, once.
func TestUnwritableSessionFileLeavesTrafficAloneAndWarnsOnce(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startSession(t, Options{Argv: []string{"/bin/cat"}, Record: true, Path: filepath.Join(notDir, "session.jsonl")})
	go sendNotes(s, 0, 1000)
	s.out.wait(t, generous, "1000 frames back", func(s *sink) bool { return s.lines >= 1000 })
	s.in.Close()
	res := s.wait(t, generous)
	if res.ExitCode != 0 || res.Path != "" {
		t.Errorf("Result %+v, want exit 0 and no session path", res)
	}
	warns := strings.Split(strings.TrimSuffix(s.warns.String(), "\n"), "\n")
	if len(warns) != 1 || !strings.Contains(warns[0], "cannot record this session") || !strings.Contains(warns[0], "not a directory") {
		t.Errorf("warnings %q, want one saying the session cannot be recorded and why", warns)
	}
}

// A live view that keeps up gets the whole session, up to the exit
// record, and then the end of the stream.
func TestSubscriberGetsEveryRecordUpToTheExitThenEOF(t *testing.T) {
	for range 20 {
		s := startListening(t)
		_, rd := attach(t)
		sendNotes(s, 1, 100)
		s.in.Close()
		var log frameLog
		for {
			e, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := log.add(e); err != nil {
				t.Fatal(err)
			}
		}
		s.wait(t, generous)
		if log.next[classify.H2S] != 100 || log.next[classify.S2H] != 100 || len(log.other) == 0 || log.other[len(log.other)-1] != sessions.EventExit {
			t.Fatalf("the view got %v frames and then %q; want 100 each way and the exit record last", log.next, log.other)
		}
	}
}

// A follower reads the session file itself as the tap says it grows: it
// gets the file byte for byte, up to the exit record, and then EOF.
func TestFollowerReadsTheSessionFileByteForByteUpToTheExit(t *testing.T) {
	s := startListening(t)
	info, err := QueryInfo(liveSocket(t))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Follow(info)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		got <- b
	}()
	if err := sendNotes(s, 1, 20_000); err != nil {
		t.Fatal(err)
	}
	s.in.Close()
	s.wait(t, generous)
	var stream []byte
	select {
	case stream = <-got:
	case <-time.After(generous):
		t.Fatal("the follower did not end with the session")
	}
	file, err := os.ReadFile(s.tap.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stream, file) {
		t.Fatalf("the follower read %d bytes; the session file has %d", len(stream), len(file))
	}
	if !bytes.Contains(stream, []byte(`"event":"exit"`)) {
		t.Error("the follower stopped before the exit record")
	}
}

// A tap started with a relative --record path announces the file by its
// absolute path, so a view in another directory follows the right file.
func TestRelativeRecordPathIsAnnouncedAbsolute(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	s := startSession(t, Options{Argv: []string{"/bin/cat"}, Framing: classify.FramingNDJSON, Record: true, Path: "rel.jsonl", Listen: true, NoRedact: true})
	s.write(t, append(note(0), '\n'))
	s.out.waitFor(t, "\n")
	info, err := QueryInfo(liveSocket(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "rel.jsonl"); info.Session != want {
		t.Fatalf("the tap announces its file as %q, want %q", info.Session, want)
	}
	// Elsewhere, a file of the same name is not taken for the tap's.
	other := t.TempDir()
	t.Chdir(other)
	os.WriteFile("rel.jsonl", []byte(`{"rpctap":"session","version":1,"id":"other","started":"2026-01-01T00:00:00.000000Z"}`+"\n"), 0o600)
	r, err := Follow(info)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	info.Session = filepath.Join(other, "rel.jsonl")
	if _, err := Follow(info); err == nil || !strings.Contains(err.Error(), "is not the session file") {
		t.Errorf("following a file with another session's header: %v; want it refused", err)
	}
}

// A view that falls behind a tap that records no file is told what it
// missed: a gap note that counts the frames it did not get, where they
// were; and the records after the gap come to it again.
func TestAViewBehindATapWithNoFileIsToldWhatItMissed(t *testing.T) {
	s := startSession(t, Options{Argv: []string{"/bin/cat"}, Framing: classify.FramingNDJSON, Listen: true, NoRedact: true})
	s.write(t, append(note(0), '\n'))
	s.out.waitFor(t, "\n")
	c, rd := attach(t) // and not read until the traffic is over
	const n = 50_000
	if err := sendNotes(s, 1, n); err != nil {
		t.Fatal(err)
	}
	s.out.wait(t, generous, "every frame back", func(s *sink) bool { return s.lines >= n })
	// The view reads again, while the tap still runs; once it has been
	// told of its gap, a last frame comes after it, and the session ends.
	// The view reads to the end of its stream: the last frame may fall in
	// a later gap too.
	c.SetReadDeadline(time.Now().Add(generous))
	frames, missed, marked := 0, int64(0), false
	sendLast := func() {
		marked = true
		s.write(t, append(note(n), '\n'))
		s.in.Close()
	}
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the view's stream failed (%v) after %d frames, told of %d frames missed", err, frames, missed)
		}
		if ev.IsFrame() && string(ev.Frame) != string(note(0)) { // its echo may come after the attach
			frames++
			if !marked && ev.Dir == classify.S2H && string(ev.Frame) == string(note(n-1)) {
				sendLast() // it kept up: nothing was missed
			}
		}
		if ev.Kind == sessions.EventNote && ev.Gap {
			var m int64
			if _, err := fmt.Sscanf(ev.Text, "this view fell behind the live session and missed %d frame", &m); err != nil || m != ev.Missing {
				t.Errorf("the gap note does not say what was missed: %q, missing %d", ev.Text, ev.Missing)
			}
			missed += ev.Missing
			if !marked {
				sendLast()
			}
		}
	}
	if !marked {
		t.Fatalf("the view's stream ended after %d frames with no gap note and without the frames of the traffic's end", frames)
	}
	s.wait(t, generous)
	// Notes 1..n each way.
	all := 2 * n
	if missed == 0 {
		if frames < all {
			t.Fatalf("the view got %d of %d frames and was told of no gap", frames, all)
		}
		t.Skipf("the view kept up with every frame (%d): nothing to miss", frames)
	}
	if lost := all - frames; missed != int64(lost) {
		t.Errorf("told of %d frames missed, for %d frames missing", missed, lost)
	}
}
