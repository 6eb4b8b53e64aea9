package tap

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// The intercept connection of the live socket (see the top of socket.go):
// a view sends {"op":"intercept"} and then action lines; the tap sends it
// the filters, the frames it holds, what became of them and the answers to
// the actions. Types here are the tap's side and the client's.

// maxEdit bounds the bytes of an edited frame or a reply a view sends.
const maxEdit = 4 << 20

// holdOutbox is how many lines wait for a view that is slow to read them;
// a view that lets more wait is cut off (it misses nothing it cannot ask
// again: attaching again lists the frames held).
const holdOutbox = 4096

// maxOutboxBytes bounds the bytes of the lines that wait for one view: a
// held frame's line may be a MiB or more, and holdOutbox of them would
// not be a bound on the tap's memory.
const maxOutboxBytes = 64 << 20

// A holdView is one intercepting view's connection.
type holdView struct {
	c      net.Conn
	out    chan []byte
	queued atomic.Int64 // bytes of the lines in out
	done   chan struct{}
	once   sync.Once
	setter bool // the view set the filters (under interceptor.vmu)
}

// send queues a line for the view, never waiting: a view that is not
// reading is cut off.
func (v *holdView) send(line []byte) {
	if v.queued.Add(int64(len(line))) > maxOutboxBytes {
		v.cut()
		return
	}
	select {
	case <-v.done:
	case v.out <- line:
	default:
		v.cut()
	}
}

func (v *holdView) cut() { v.once.Do(func() { close(v.done); v.c.Close() }) }

// writeLoop writes the view's lines until it is cut off.
func (v *holdView) writeLoop() {
	for {
		select {
		case <-v.done:
			return
		case line := <-v.out:
			v.queued.Add(-int64(len(line)))
			v.c.SetWriteDeadline(time.Now().Add(requestTimeout))
			if _, err := v.c.Write(line); err != nil {
				v.cut()
				return
			}
		}
	}
}

// holdAction is a line a view sends on its intercept connection.
type holdAction struct {
	Act  string  `json:"act"`
	N    int64   `json:"n,omitempty"`
	All  bool    `json:"all,omitempty"`
	H2S  *string `json:"h2s,omitempty"`
	S2H  *string `json:"s2h,omitempty"`
	Size *int64  `json:"size,omitempty"`
}

// HeldFrame is a frame the tap holds, as the tap tells views of it.
type HeldFrame struct {
	N        int64  `json:"n"`
	Dir      string `json:"dir"`
	T        int64  `json:"t"`       // µs since the session started, when the tap read it
	Matched  bool   `json:"matched"` // held by the filter; false: it waits behind a held frame
	HoldMs   int64  `json:"hold_ms"` // how long it may still be held
	Frame    string `json:"frame,omitempty"`
	FrameB64 []byte `json:"frame_b64,omitempty"`
	Redacted bool   `json:"redacted,omitempty"` // secrets in it are masked here, not on the wire
}

// Bytes is the held frame's body.
func (h HeldFrame) Bytes() []byte {
	if h.FrameB64 != nil {
		return h.FrameB64
	}
	return []byte(h.Frame)
}

// HoldRelease says what became of a held frame: it left the tap.
type HoldRelease struct {
	N   int64  `json:"n"`
	Dir string `json:"dir"`
	How string `json:"how"` // a sessions.Held… outcome
}

// HoldFilters are the intercept filters in force.
type HoldFilters struct {
	H2S    string `json:"h2s"`
	S2H    string `json:"s2h"`
	HoldMs int64  `json:"hold_ms"` // how long a frame is held at most
}

// A HoldEvent is one line the tap sends on an intercept connection: one
// of its fields is set.
type HoldEvent struct {
	Filters  *HoldFilters `json:"filters,omitempty"`
	Held     *HeldFrame   `json:"held,omitempty"`
	Released *HoldRelease `json:"released,omitempty"`
	Notice   string       `json:"notice,omitempty"`
	// The answer to an action.
	OK    *bool  `json:"ok,omitempty"`
	Act   string `json:"act,omitempty"`
	N     int64  `json:"n,omitempty"`
	Error string `json:"error,omitempty"`
}

func holdLine(ev HoldEvent) []byte {
	b, _ := json.Marshal(ev)
	return append(b, '\n')
}

func (ic *interceptor) broadcast(line []byte) {
	ic.vmu.Lock()
	defer ic.vmu.Unlock()
	for v := range ic.views {
		v.send(line)
	}
}

func (ic *interceptor) heldEvent(f *heldFrame) *HeldFrame {
	body, masked := ic.t.rec.redact.Mask(f.body)
	hf := &HeldFrame{N: f.n, Dir: f.dir.String(), T: int64((f.at - ic.t.rec.started) / time.Microsecond), Matched: f.matched, Redacted: masked}
	if f.matched {
		hf.HoldMs = max(time.Until(f.until).Milliseconds(), 0)
	}
	if utf8.Valid(body) {
		hf.Frame = string(body)
	} else {
		hf.FrameB64 = append([]byte(nil), body...)
	}
	return hf
}

func (ic *interceptor) tellHeld(f *heldFrame) {
	ic.broadcast(holdLine(HoldEvent{Held: ic.heldEvent(f)}))
}

func (ic *interceptor) tellReleased(fs []*heldFrame) {
	for _, f := range fs {
		ic.broadcast(holdLine(HoldEvent{Released: &HoldRelease{N: f.n, Dir: f.dir.String(), How: f.how}}))
	}
}

func (ic *interceptor) tellNotice(msg string) { ic.broadcast(holdLine(HoldEvent{Notice: msg})) }

func (ic *interceptor) filtersLine() []byte {
	ic.vmu.Lock()
	defer ic.vmu.Unlock()
	return ic.filtersLineLocked()
}

func (ic *interceptor) filtersLineLocked() []byte {
	return holdLine(HoldEvent{Filters: &HoldFilters{H2S: ic.exprs[classify.H2S], S2H: ic.exprs[classify.S2H], HoldMs: ic.timeout.Milliseconds()}})
}

// serveIntercept serves a view's intercept connection until it closes.
func (t *Tap) serveIntercept(c net.Conn, br *bufio.Reader, req request) {
	ic := t.intercept
	t.rec.begin() // what the view holds, and what becomes of it, is recorded
	v := &holdView{c: c, out: make(chan []byte, holdOutbox), done: make(chan struct{})}
	go v.writeLoop() // first: the frames held now may be more than fits in out
	if !ic.attach(v) {
		v.once.Do(func() { close(v.done) }) // the writer stops; refuse writes on c
		refuse(c, fmt.Sprintf("%d views intercept this tap already; close one of them first", maxHeldViews))
		return
	}
	defer ic.dropView(v)
	if req.H2S != nil || req.S2H != nil {
		v.answer(holdAction{Act: "filter"}, ic.setFiltersFrom(v, req.H2S, req.S2H))
	}
	c.SetReadDeadline(time.Time{})
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			v.answer(holdAction{}, fmt.Errorf("an action line is longer than %d KiB; send a frame's bytes after the line, with \"size\":N", maxRequest>>10))
			return
		}
		if err != nil {
			return
		}
		var a holdAction
		if err := json.Unmarshal(line, &a); err != nil {
			v.answer(a, errors.New(`an action is a JSON object: {"act":"forward","n":N}, "drop", "edit" or "reply" with "size":N and the bytes, or {"act":"filter","h2s":"EXPR","s2h":"EXPR"}`))
			return
		}
		var body []byte
		if a.Size != nil {
			if *a.Size < 0 || *a.Size > maxEdit {
				v.answer(a, fmt.Errorf("the frame is %d bytes; an edit or a reply may be up to %d MiB", *a.Size, maxEdit>>20))
				return
			}
			body = make([]byte, *a.Size)
			c.SetReadDeadline(time.Now().Add(requestTimeout))
			if _, err := io.ReadFull(br, body); err != nil {
				v.answer(a, fmt.Errorf("the frame's %d bytes did not come whole within %s", *a.Size, requestTimeout))
				return
			}
			c.SetReadDeadline(time.Time{})
		}
		v.answer(a, ic.act(v, a, body))
	}
}

// attach adds a view, and tells it the filters and the frames held now,
// oldest first; false when as many views as may intercept do. Both
// queues are locked meanwhile: a frame is told as held under its queue's
// lock, so the view hears of each frame held once, and of its release
// after.
func (ic *interceptor) attach(v *holdView) bool {
	for _, dir := range []classify.Direction{classify.H2S, classify.S2H} {
		ic.dirs[dir].mu.Lock()
		defer ic.dirs[dir].mu.Unlock()
	}
	ic.vmu.Lock()
	defer ic.vmu.Unlock()
	if len(ic.views) >= maxHeldViews {
		return false
	}
	ic.views[v] = struct{}{}
	v.send(ic.filtersLineLocked())
	var held []*heldFrame
	for _, dir := range []classify.Direction{classify.H2S, classify.S2H} {
		held = append(held, ic.dirs[dir].q...)
	}
	sort.Slice(held, func(i, j int) bool { return held[i].n < held[j].n })
	for _, f := range held {
		v.send(holdLine(HoldEvent{Held: ic.heldEvent(f)}))
	}
	return true
}

// answer tells the view how its action went.
func (v *holdView) answer(a holdAction, err error) {
	ok := err == nil
	ev := HoldEvent{OK: &ok, Act: a.Act, N: a.N}
	if err != nil {
		ev.Error = err.Error()
	}
	v.send(holdLine(ev))
}

// act does what a view asks.
func (ic *interceptor) act(v *holdView, a holdAction, body []byte) error {
	if a.Act == "filter" {
		return ic.setFiltersFrom(v, a.H2S, a.S2H)
	}
	if a.Act == "forward" && a.All {
		for _, dir := range []classify.Direction{classify.H2S, classify.S2H} {
			ic.dirs[dir].releaseAll(sessions.HeldForwarded)
		}
		return nil
	}
	h := ic.queueOf(a.N)
	if h == nil {
		return errNotHeld
	}
	if body != nil {
		// The view shows secrets masked, and so a person edits (or
		// quotes, in a reply) the masks: those left as they were stand
		// for the secrets again, as the frame carried them.
		if orig := h.bodyOf(a.N); orig != nil {
			body = ic.t.rec.redact.Unmask(body, orig)
		}
	}
	switch a.Act {
	case "forward":
		return h.decide(a.N, sessions.HeldForwarded, nil)
	case "drop":
		return h.decide(a.N, sessions.HeldDropped, nil)
	case "edit":
		if body == nil {
			return errors.New(`an edit carries the new frame: {"act":"edit","n":N,"size":BYTES} and then the bytes`)
		}
		inj, err := ic.t.frameToward(h.dir, body, sessions.SrcEdit)
		if err != nil {
			return err
		}
		return h.decide(a.N, sessions.HeldEdited, func(f *heldFrame) error {
			f.edit, f.editBody = inj.frame, inj.parts[0].body
			return nil
		})
	case "reply":
		if body == nil {
			return errors.New(`a reply carries the answer: {"act":"reply","n":N,"size":BYTES} and then the bytes`)
		}
		inj, err := ic.t.frameToward(h.dir.Opposite(), body, sessions.SrcInject)
		if err != nil {
			return err
		}
		return h.decide(a.N, sessions.HeldAnswered, func(f *heldFrame) error {
			if m := classify.Classify(f.body, f.dir, classify.JSONRPC); m.Kind != classify.KindRequest {
				return fmt.Errorf("frame %d is %s, which gets no answer; forward it, edit it or drop it", f.n, m.Kind.Phrase())
			}
			f.reply = inj
			return nil
		})
	}
	return fmt.Errorf("unknown action %q: use forward, edit, drop, reply or filter", a.Act)
}

// setFiltersFrom sets the filters a view asks for (nil: that direction's
// stays), and makes the view one that set them.
func (ic *interceptor) setFiltersFrom(v *holdView, h2s, s2h *string) error {
	ic.fmu.Lock()
	defer ic.fmu.Unlock()
	ic.vmu.Lock()
	cur := ic.exprs
	ic.vmu.Unlock()
	next := [2]string{cur[classify.H2S], cur[classify.S2H]}
	if h2s != nil {
		next[0] = *h2s
	}
	if s2h != nil {
		next[1] = *s2h
	}
	if err := ic.setFilters(next[0], next[1]); err != nil {
		return err
	}
	ic.vmu.Lock()
	if !v.setter {
		v.setter = true
		ic.setters++
	}
	ic.vmu.Unlock()
	ic.broadcast(ic.filtersLine())
	return nil
}

// dropView forgets a view that went away. When it was the last one that
// set the filters, they go back to the tap's own, and every held frame
// goes on as it was.
func (ic *interceptor) dropView(v *holdView) {
	v.cut()
	ic.fmu.Lock()
	ic.vmu.Lock()
	delete(ic.views, v)
	last := false
	if v.setter {
		ic.setters--
		last = ic.setters == 0
	}
	ic.vmu.Unlock()
	if !last {
		ic.fmu.Unlock()
		return
	}
	ic.setFilters(ic.base[classify.H2S], ic.base[classify.S2H])
	ic.fmu.Unlock()
	for _, dir := range []classify.Direction{classify.H2S, classify.S2H} {
		ic.dirs[dir].releaseAll(sessions.HeldDetached)
	}
	ic.broadcast(ic.filtersLine())
	ic.tellNotice("the view that set the intercept went away: the frames it held went on as they were")
}
