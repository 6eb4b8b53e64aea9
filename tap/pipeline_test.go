package tap

import (
	"syscall"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// A relay notes quietly and wakes the recorder only after its write, which
// may wait on a slow receiver. If its note filled the intake, another
// noter (the other direction) must still get through: the intake wakes
// the recorder itself when it is full.
func TestFullIntakeWakesTheRecorderForAQuietNoter(t *testing.T) {
	var in intake
	in.init()
	go func() { // the dispatcher
		var items []item
		var spans []intakeSpans
		var buf []byte
		for {
			got, gs, gb, done := in.take(items, spans, buf)
			if done {
				return
			}
			items, spans, buf = got, gs, gb
		}
	}()
	defer in.close()
	// Let the dispatcher take a first item and go back to waiting.
	in.put(item{dir: classify.H2S, data: []byte("first\n")}, true)
	for {
		in.mu.Lock()
		n := len(in.items)
		in.mu.Unlock()
		if n == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	in.put(item{dir: classify.H2S, data: make([]byte, intakeLimit)}, false) // no kick follows
	done := make(chan struct{})
	go func() {
		in.put(item{dir: classify.S2H, data: []byte("answer\n")}, false)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a note waited for room while the recorder slept with a full intake")
	}
}

// The tracker's clock moves to now only when nothing noted waits to be
// recorded; otherwise an answer still in the pipeline would be taken for
// missing (a timeout, then a late response).
func TestTrackerClockWaitsForFramesStillBeingRecorded(t *testing.T) {
	r := &recorder{lastAt: 5 * time.Second, free: make(chan *batch, batchesInFlight)}
	r.in.init()
	for range batchesInFlight {
		r.free <- newBatch()
	}
	if got := r.settledClock(10 * time.Second); got != 10*time.Second {
		t.Errorf("with nothing in the pipeline the clock goes to %s, want now (10s)", got)
	}
	r.in.put(item{dir: classify.S2H, data: []byte("answer\n")}, false)
	if got := r.settledClock(10 * time.Second); got != 5*time.Second {
		t.Errorf("with a frame noted and not recorded the clock goes to %s, want the last recorded frame's time (5s)", got)
	}
	var items []item
	var spans []intakeSpans
	r.in.take(items, spans, nil)
	if got := r.settledClock(10 * time.Second); got != 5*time.Second {
		t.Errorf("with a frame taken by the dispatcher and not yet in a batch the clock goes to %s, want 5s", got)
	}
	<-r.free // a batch on its way
	if got := r.settledClock(10 * time.Second); got != 5*time.Second {
		t.Errorf("with a batch in flight the clock goes to %s, want 5s", got)
	}
}

// Noters that wait for room in a full intake wait quietly: they do not
// wake each other (a loop that burnt a core while recording was behind).
func TestNotersWaitingForRoomDoNotSpin(t *testing.T) {
	var in intake
	in.init()
	in.put(item{dir: classify.H2S, data: make([]byte, intakeLimit)}, false)
	for range 2 {
		go in.put(item{dir: classify.S2H, data: []byte("x\n")}, false)
	}
	time.Sleep(50 * time.Millisecond) // both wait for room
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	time.Sleep(300 * time.Millisecond)
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	in.close()
	cpu := time.Duration(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()) * time.Nanosecond
	if cpu > 100*time.Millisecond {
		t.Errorf("two noters waiting for room used %s of CPU in 300 ms", cpu)
	}
}

// The intake sums how long notes waited for room (the traffic waiting for
// its recorder), which the tap tells its views; a note that finds room
// adds nothing.
func TestIntakeSumsTheTimeNotesWaitForRoom(t *testing.T) {
	var in intake
	in.init()
	in.put(item{dir: classify.H2S, data: []byte("x\n")}, false)
	if w := in.waited.Load(); w != 0 {
		t.Fatalf("a note that found room counted %v of waiting", time.Duration(w))
	}
	in.put(item{dir: classify.H2S, data: make([]byte, intakeLimit)}, false)
	done := make(chan struct{})
	go func() {
		in.put(item{dir: classify.S2H, data: []byte("y\n")}, false)
		close(done)
	}()
	time.Sleep(50 * time.Millisecond)
	in.take(nil, nil, nil) // the recorder takes what waits: room
	<-done
	if w := time.Duration(in.waited.Load()); w < 40*time.Millisecond {
		t.Errorf("a note that waited about 50 ms for room counted %v", w)
	}
	in.close()
}
