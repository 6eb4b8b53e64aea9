package tap

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// A tap that records no file, with no view, tail, OTLP exporter or
// intercept, notes nothing of what it relays (it only counts the frames,
// for ls); a view that attaches begins the record: it is told where it
// begins, and gets every frame from there on, each direction's in
// order, up to the exit.
func TestATapNoOneReadsNotesNothingAndAViewGetsEveryFrameFromWhereItsRecordBegins(t *testing.T) {
	s := startSession(t, Options{Argv: []string{"/bin/cat"}, Framing: classify.FramingNDJSON, Listen: true, NoRedact: true})
	const before, after = 1000, 2000
	if err := sendNotesBy(s, 0, before, 0); err != nil {
		t.Fatal(err)
	}
	s.out.wait(t, generous, "the echo of every frame sent before a view attached", func(s *sink) bool { return s.lines >= before })
	// Counted as relayed once the relays are done with them.
	deadline := time.Now().Add(generous)
	for s.tap.info().Frames < 2*before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := s.tap.info().Frames; got != 2*before {
		t.Fatalf("ls counts %d frames relayed, want %d", got, 2*before)
	}
	var unnoted int64
	for _, r := range s.tap.relays {
		if r != nil {
			unnoted += r.unnoted.Load()
		}
	}
	s.tap.rec.mu.Lock()
	noted := s.tap.rec.frames
	s.tap.rec.mu.Unlock()
	if unnoted != 2*before || noted != 0 {
		t.Fatalf("with no one reading, the tap noted %d frames and relayed %d unnoted; want 0 noted and %d unnoted", noted, unnoted, 2*before)
	}

	_, rd := attach(t)
	// The view reads as the records come, as a view does.
	var evs []sessions.Event
	var readErr error
	read, all := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(read)
		for {
			ev, err := rd.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					readErr = err
				}
				return
			}
			e := *ev
			e.Frame = bytes.Clone(ev.Frame) // the reader reuses its buffer
			evs = append(evs, e)
			if e.Dir == classify.S2H && string(e.Frame) == string(note(after-1)) {
				close(all) // the session may end: the tap's exit waits for no view
			}
		}
	}()
	if err := sendNotesBy(s, before, after, 0); err != nil {
		t.Fatal(err)
	}
	select {
	case <-all:
	case <-read:
	case <-time.After(generous):
		t.Fatal("the view did not get the last frame")
	}
	s.in.Close()
	<-read
	if readErr != nil {
		t.Fatalf("the view's stream failed: %v", readErr)
	}
	if len(evs) == 0 || evs[0].Kind != sessions.EventNote || evs[0].Text != noteBegins {
		t.Fatalf("the view's record began with %+v; want the note that says the record begins there", evs[:min(len(evs), 1)])
	}
	next := [3]int{classify.H2S: before, classify.S2H: before}
	exited := false
	for _, ev := range evs[1:] {
		switch {
		case ev.Kind == sessions.EventExit:
			exited = true
		case ev.IsFrame() && (ev.Dir == classify.H2S || ev.Dir == classify.S2H):
			if want := note(next[ev.Dir]); string(ev.Frame) != string(want) {
				t.Fatalf("%s frame %q, want %q: the record is not every frame from its start", ev.Dir, ev.Frame, want)
			}
			next[ev.Dir]++
		case ev.Kind == sessions.EventNote && ev.Gap:
			t.Fatalf("the view was told of a gap: %q", ev.Text)
		}
	}
	s.wait(t, generous)
	if next[classify.H2S] != after || next[classify.S2H] != after || !exited {
		t.Errorf("the view got frames up to %d host→server and %d server→host, exit %v; want every frame up to %d, and the exit", next[classify.H2S], next[classify.S2H], exited, after)
	}
}

// A view that attaches while a frame too large to hold streams through
// the tap begins the record after that frame: the record holds no part
// of a frame whose start it does not hold.
func TestAViewThatAttachesMidFrameGetsTheRecordFromTheNextFrame(t *testing.T) {
	s := startSession(t, Options{Argv: []string{"/bin/cat"}, Framing: classify.FramingNDJSON, Listen: true, NoRedact: true})
	head := []byte(`{"jsonrpc":"2.0","method":"big","params":{"x":"`)
	s.write(t, append(head, bytes.Repeat([]byte("a"), 3*holdLimit)...))
	// The tap streams it on: its start reached the server and came back.
	s.out.wait(t, generous, "the big frame's start echoed", func(s *sink) bool { return s.n >= 2*holdLimit })
	_, rd := attach(t)
	var evs []sessions.Event
	read := make(chan error, 1)
	go func() {
		for {
			ev, err := rd.Next()
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				read <- err
				return
			}
			e := *ev
			e.Frame = bytes.Clone(ev.Frame)
			evs = append(evs, e)
			if e.Dir == classify.S2H && string(e.Frame) == string(note(1)) {
				s.in.Close() // the view has the last frame: the session may end
			}
		}
	}()
	s.write(t, []byte(`aaaa"}}`+"\n"))
	s.write(t, append(note(1), '\n'))
	if err := <-read; err != nil {
		t.Fatalf("the view's stream failed: %v", err)
	}
	s.wait(t, generous)
	var frames []string
	for _, e := range evs {
		if e.IsFrame() && e.Dir != classify.Err {
			frames = append(frames, e.Dir.String()+" "+string(clip(e.Frame, 200)))
		}
	}
	want := []string{"h2s " + string(note(1)), "s2h " + string(note(1))}
	if len(frames) != 2 || frames[0] != want[0] || frames[1] != want[1] {
		t.Errorf("the view's record holds the frames %q; want only %q: no part of the frame it attached in", frames, want)
	}
}

// The server's stderr is recorded from the first whole line after a view
// attached to a tap that noted nothing: not from the middle of a line.
func TestAViewThatAttachesMidLineGetsTheServersStderrFromTheNextLine(t *testing.T) {
	s := startSession(t, Options{Argv: sh(`printf 'begun ' >&2; read x; printf 'ended\nnext line\n' >&2; cat`), Framing: classify.FramingNDJSON, Listen: true, NoRedact: true})
	s.err.waitFor(t, "begun ")
	c, err := net.Dial("unix", liveSocket(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, `{"op":"attach"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(generous))
	rd := sessions.NewReader(c)
	if _, ok := rd.Header(); !ok {
		t.Fatal("the live view did not begin with the session header")
	}
	s.write(t, append(note(0), '\n')) // the server reads it, then ends its line
	var lines []string
	for {
		ev, err := rd.Next()
		if err != nil {
			t.Fatalf("the view's stream failed before the server's next line: %v (lines %q)", err, lines)
		}
		if ev.IsFrame() && ev.Dir == classify.Err {
			lines = append(lines, string(ev.Frame))
			if string(ev.Frame) == "next line" {
				break
			}
		}
	}
	s.in.Close()
	s.wait(t, generous)
	if len(lines) != 1 {
		t.Errorf("the view's record holds the stderr lines %q; want only %q, the first whole line after it attached", lines, "next line")
	}
}
