package tap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// holdRig is one direction of a tap's intercept, without processes: a
// relay that offers frames to its queue, and the bytes its receiver read.
type holdRig struct {
	ic   *interceptor
	h    *holdQueue
	r    *relay
	out  *bytes.Buffer
	recs []item
}

func newHoldRig(t *testing.T, filter string, timeout time.Duration) *holdRig {
	t.Helper()
	g := &holdRig{out: new(bytes.Buffer)}
	tp := &Tap{opts: Options{Warn: func(string) {}}, rec: &recorder{}}
	ic, err := newInterceptor(tp, filter, "", timeout)
	if err != nil {
		t.Fatal(err)
	}
	tp.intercept = ic
	g.ic, g.h = ic, ic.dirs[classify.H2S]
	d := &dest{dir: classify.H2S, w: g.out, note: func(it item) { g.recs = append(g.recs, it) }}
	g.h.dst = d
	ic.dirs[classify.S2H].dst = &dest{dir: classify.S2H, w: new(bytes.Buffer), note: func(item) {}}
	g.r = &relay{dir: classify.H2S, dst: d}
	return g
}

// send has the relay read one line: held, or forwarded.
func (g *holdRig) send(t *testing.T, line string) {
	t.Helper()
	frame := []byte(line + "\n")
	sp := classify.NewSplitter(classify.FramingNDJSON)
	if n, end := sp.Split(frame, false); !end || n != len(frame) {
		t.Fatalf("%q is not one frame", line)
	}
	if !g.h.engaged() || !g.h.offer(g.r, nil, frame, sp.Frame(), now()) {
		g.r.flush(frame, now())
	}
}

// heldNs are the numbers of the frames the queue holds, oldest first.
func (g *holdRig) heldNs() []int64 {
	var ns []int64
	for _, f := range g.h.held() {
		ns = append(ns, f.n)
	}
	return ns
}

// Edits count toward what a direction holds. An edit of a frame that waits
// behind an undecided one stays in the tap until that one goes, so edits
// past maxHeldBytes are refused with a sentence that says what to do; and
// once every frame has gone, the queue's count of bytes is back to zero (it
// was taken off with each edit's size, which it was never given: after
// edits it went below zero, and the bound let more through).
func TestEditsCountTowardWhatADirectionHolds(t *testing.T) {
	g := newHoldRig(t, "method:hold", time.Hour)
	for i := 1; i <= 6; i++ {
		g.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"hold"}`, i))
	}
	ns := g.heldNs()
	if len(ns) != 6 {
		t.Fatalf("held %v", ns)
	}
	big := `{"jsonrpc":"2.0","id":9,"method":"hold","params":{"pad":"` + strings.Repeat("x", maxEdit-100) + `"}}`
	var refused error
	edited := 0
	for _, n := range ns[1:] {
		err := g.h.decide(n, sessions.HeldEdited, func(f *heldFrame) error {
			f.edit, f.editBody = []byte(big+"\n"), []byte(big)
			return nil
		})
		if err != nil {
			refused = err
			break
		}
		edited++
	}
	if refused == nil || !strings.Contains(refused.Error(), "forward") {
		t.Errorf("%d edits of %d MiB each were all kept behind an undecided frame (bound %d MiB); the last said %v", edited, maxEdit>>20, maxHeldBytes>>20, refused)
	}
	if g.h.bytes > maxHeldBytes {
		t.Errorf("the queue holds %d bytes, past its bound of %d", g.h.bytes, maxHeldBytes)
	}
	g.h.releaseAll(sessions.HeldForwarded)
	if len(g.heldNs()) != 0 || g.h.bytes != 0 {
		t.Errorf("after every frame went, the queue holds %v and counts %d bytes", g.heldNs(), g.h.bytes)
	}
}

// Replies count toward what a direction holds, as edits do: a reply to a
// frame that waits behind an undecided one stays in the tap until that one
// goes, so replies past maxHeldBytes are refused.
func TestRepliesCountTowardWhatADirectionHolds(t *testing.T) {
	g := newHoldRig(t, "method:hold", time.Hour)
	for i := 1; i <= 6; i++ {
		g.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"hold"}`, i))
	}
	ns := g.heldNs()
	big := []byte(`{"jsonrpc":"2.0","id":9,"result":{"pad":"` + strings.Repeat("x", maxEdit-100) + `"}}` + "\n")
	var refused error
	replied := 0
	for _, n := range ns[1:] {
		err := g.h.decide(n, sessions.HeldAnswered, func(f *heldFrame) error {
			f.reply = &injection{frame: big}
			return nil
		})
		if err != nil {
			refused = err
			break
		}
		replied++
	}
	if refused == nil || !strings.Contains(refused.Error(), "forward") {
		t.Errorf("%d replies of %d MiB each were all kept behind an undecided frame (bound %d MiB); the last said %v", replied, maxEdit>>20, maxHeldBytes>>20, refused)
	}
	if g.h.bytes > maxHeldBytes {
		t.Errorf("the queue holds %d bytes, past its bound of %d", g.h.bytes, maxHeldBytes)
	}
}

// A view that does not read is cut off once the lines waiting for it pass a
// bound in bytes, not only in lines: 4096 lines of held frames of a MiB
// each would otherwise wait in the tap's memory.
func TestAViewThatDoesNotReadIsCutOffPastABoundInBytes(t *testing.T) {
	a, b := net.Pipe() // b is never read
	defer b.Close()
	v := &holdView{c: a, out: make(chan []byte, holdOutbox), done: make(chan struct{})}
	line := bytes.Repeat([]byte("x"), 1<<20)
	sent := 0
	for ; sent < holdOutbox; sent++ {
		select {
		case <-v.done:
		default:
			v.send(line)
			continue
		}
		break
	}
	if sent*len(line) > 2*maxOutboxBytes {
		t.Errorf("a view that reads nothing was sent %d lines of 1 MiB before it was cut off", sent)
	}
}

// A view hears that a frame is held before it can hear that the frame
// went: frames decided the moment they are held (by another view, or a
// short hold time) are never told as released first and held after,
// which left them on the view's held list though the tap held them no
// longer. The sender waits while the queue holds maxHeldFrames: past
// that the tap lets every held frame go, and the next one through
// unheld and never told as held (see the next test), and on one core
// the forwarding view can lag that far behind.
func TestAViewHearsOfAHeldFrameBeforeItsRelease(t *testing.T) {
	g := newHoldRig(t, "method:hold", time.Hour)
	v := &holdView{c: nopConn{}, out: make(chan []byte, holdOutbox), done: make(chan struct{})}
	g.ic.views[v] = struct{}{}
	const frames = 2000
	stop := make(chan struct{})
	decided := make(chan struct{})
	go func() { // a second view that forwards every frame as soon as it is held
		defer close(decided)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, f := range g.h.held() {
				g.h.decide(f.n, sessions.HeldForwarded, nil)
			}
		}
	}()
	order := map[int64]string{}
	read := func() {
		for {
			select {
			case line := <-v.out:
				var ev HoldEvent
				if err := json.Unmarshal(line, &ev); err != nil {
					t.Fatal(err)
				}
				switch {
				case ev.Held != nil:
					order[ev.Held.N] += "h"
				case ev.Released != nil:
					order[ev.Released.N] += "r"
				case ev.Notice != "":
					t.Fatalf("the view was told %q", ev.Notice)
				}
			default:
				return
			}
		}
	}
	for i := 0; i < frames; i++ {
		for len(g.h.held()) >= maxHeldFrames { // only this goroutine adds to the queue
			runtime.Gosched()
		}
		g.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"hold"}`, i))
		read()
	}
	close(stop)
	<-decided
	g.h.releaseAll(sessions.HeldForwarded)
	read()
	bad := 0
	for n, o := range order {
		if o != "hr" {
			bad++
			if bad < 5 {
				t.Errorf("frame %d: the view heard %q (h held, r released)", n, o)
			}
		}
	}
	if bad > 0 || len(order) != frames {
		t.Errorf("%d of %d frames told out of order; %d told", bad, frames, len(order))
	}
}

// The bound on what a direction holds, as a view hears it: when a direction
// would hold more than it may, the view is told that every frame it held went
// on, in order and as overflow, and then why; the frame past the bound goes
// on unheld, so it is never told as held (a view waiting to hear of every
// frame it sent held waits for one that never comes); and the next match is
// held again, and told.
func TestAViewHearsEveryHeldFrameGoWhenADirectionHoldsTooMany(t *testing.T) {
	g := newHoldRig(t, "method:hold", time.Hour)
	v := &holdView{c: nopConn{}, out: make(chan []byte, holdOutbox), done: make(chan struct{})}
	g.ic.views[v] = struct{}{}
	for i := 0; i <= maxHeldFrames+1; i++ {
		g.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"hold"}`, i))
	}
	var got []string // h:ID, r:ID:how, or notice
	ids := map[int64]string{}
	for len(v.out) > 0 {
		var ev HoldEvent
		if err := json.Unmarshal(<-v.out, &ev); err != nil {
			t.Fatal(err)
		}
		switch {
		case ev.Held != nil:
			var m struct{ ID json.RawMessage }
			if err := json.Unmarshal(ev.Held.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			ids[ev.Held.N] = string(m.ID)
			got = append(got, "h:"+string(m.ID))
		case ev.Released != nil:
			got = append(got, "r:"+ids[ev.Released.N]+":"+ev.Released.How)
		case strings.Contains(ev.Notice, fmt.Sprintf("holds at most %d frames", maxHeldFrames)):
			got = append(got, "notice")
		default:
			got = append(got, fmt.Sprintf("%+v", ev))
		}
	}
	var want []string
	for i := 0; i < maxHeldFrames; i++ {
		want = append(want, fmt.Sprintf("h:%d", i))
	}
	for i := 0; i < maxHeldFrames; i++ {
		want = append(want, fmt.Sprintf("r:%d:%s", i, sessions.HeldOverflow))
	}
	want = append(want, "notice", fmt.Sprintf("h:%d", maxHeldFrames+1))
	at := func(s []string, i int) string {
		if i < len(s) {
			return s[i]
		}
		return "nothing"
	}
	for i := range max(len(got), len(want)) {
		if at(got, i) != at(want, i) {
			t.Fatalf("the view heard %d events; event %d is %s, want %s", len(got), i, at(got, i), at(want, i))
		}
	}
	if last := fmt.Sprintf(`"id":%d,`, maxHeldFrames); !bytes.HasSuffix(bytes.TrimSpace(g.out.Bytes()), []byte(`{"jsonrpc":"2.0",`+last+`"method":"hold"}`)) {
		t.Errorf("the frame past the bound was not the last the receiver read: %q", g.out.Bytes()[max(0, g.out.Len()-200):])
	}
}

// nopConn is a connection that takes every write.
type nopConn struct{ net.Conn }

func (nopConn) Close() error                     { return nil }
func (nopConn) Write(b []byte) (int, error)      { return len(b), nil }
func (nopConn) SetWriteDeadline(time.Time) error { return nil }

// held lists the frames the queue holds, oldest first.
func (h *holdQueue) held() []*heldFrame {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*heldFrame(nil), h.q...)
}

// Hold is never forever: a frame read just as the view that set the filter
// goes away is judged by the filter in force when it would be held, not the
// one it was first judged by: else it was held after the view's frames went
// on, with no view to decide it, until its hold time ran out.
func TestAFrameIsNotHeldByAFilterClearedWhileItWasJudged(t *testing.T) {
	g := newHoldRig(t, "method:hold", time.Hour)
	g.r.dst.mu.Lock() // the relay reads the filter, then waits for its dest
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.send(t, `{"jsonrpc":"2.0","id":1,"method":"hold"}`)
	}()
	time.Sleep(100 * time.Millisecond) // (were it not there yet, it would read the cleared filter: the test cannot fail wrongly)
	if err := g.ic.setFilters("", ""); err != nil {
		t.Fatal(err)
	}
	g.r.dst.mu.Unlock()
	<-done
	if ns := g.heldNs(); len(ns) != 0 {
		t.Errorf("a frame is held by a filter cleared before it was held: %v", ns)
	}
	if !bytes.Contains(g.out.Bytes(), []byte(`"method":"hold"`)) {
		t.Errorf("the receiver read %q", g.out.Bytes())
	}
}

// A view that sets a filter just as the last view that set one goes
// away keeps its filter: the one leaving puts the tap's own filters back
// only while no view has set one since (it put them back over the new
// view's filter, which the new view then did not hold by).
func TestAFilterSetAsTheLastSetterLeavesIsKept(t *testing.T) {
	g := newHoldRig(t, "", time.Hour)
	mine := "method:mine"
	for i := 0; i < 8000; i++ {
		a := &holdView{c: nopConn{}, out: make(chan []byte, holdOutbox), done: make(chan struct{})}
		b := &holdView{c: nopConn{}, out: make(chan []byte, holdOutbox), done: make(chan struct{})}
		g.ic.attach(a)
		g.ic.attach(b)
		other := "method:a"
		if err := g.ic.setFiltersFrom(a, &other, &other); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { g.ic.dropView(a); close(done) }()
		g.ic.setFiltersFrom(b, &mine, &mine)
		<-done
		g.ic.vmu.Lock()
		got := g.ic.exprs
		g.ic.vmu.Unlock()
		if got[classify.H2S] != mine {
			t.Fatalf("round %d: the view that set %q is attached, and the tap holds by %q", i, mine, got[classify.H2S])
		}
		g.ic.dropView(b)
	}
}
