package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/tap"
)

// holdPane lists the frames a live tap holds for the user (intercept),
// oldest first, with the time each may still be held, and lets the user
// forward, edit, drop or answer the selected one. It talks to the tap
// through an intercept connection, opened when the pane first opens; the
// tap's events come in as messages.
type holdPane struct {
	c       *common
	session int             // the view's id, which the tap's events come back with
	conn    *tap.HoldClient // nil until the connection is open
	frames  []heldItem      // oldest first
	filters tap.HoldFilters
	notice  string
	// refused is set when the tap's latest event refused what the view
	// asked: the end of the connection that follows is the tap's doing,
	// and its sentence stays the notice.
	refused bool
	sel     int
	width   int
	height  int
}

// heldItem is a frame the tap holds, and when its hold time runs out on
// the view's clock.
type heldItem struct {
	tap.HeldFrame
	until time.Time
	m     classify.Message
	// decided is the act the user decided for it (forward, edit, drop,
	// reply), while it waits behind a frame held before it ("" undecided).
	decided string
}

func newHoldPane(c *common, session int) *holdPane { return &holdPane{c: c, session: session} }

func (p *holdPane) SetSize(w, h int) { p.width, p.height = w, h }

// holdOpenedMsg says the intercept connection of a view is open (or why
// not).
type holdOpenedMsg struct {
	session int
	conn    *tap.HoldClient
	events  <-chan tap.HoldEvent
	err     error
}

// holdEventMsg is one event of a view's intercept connection; ok is false
// once the connection has ended.
type holdEventMsg struct {
	session int
	ev      tap.HoldEvent
	events  <-chan tap.HoldEvent
	ok      bool
}

// openHoldCmd opens an intercept connection to the tap at socket, setting
// the filters when set is not nil; a goroutine reads its events into a
// channel that waitHoldCmd takes from.
func openHoldCmd(session int, socket string, set *tap.HoldFilters) tea.Cmd {
	return func() tea.Msg {
		var h2s, s2h *string
		if set != nil {
			h2s, s2h = &set.H2S, &set.S2H
		}
		c, err := tap.OpenHold(socket, h2s, s2h)
		if err != nil {
			return holdOpenedMsg{session: session, err: err}
		}
		ch := make(chan tap.HoldEvent, 256)
		go func() {
			defer close(ch)
			for {
				ev, err := c.Next()
				if err != nil {
					return
				}
				ch <- ev
			}
		}()
		return holdOpenedMsg{session: session, conn: c, events: ch}
	}
}

func waitHoldCmd(session int, ch <-chan tap.HoldEvent) tea.Cmd {
	return func() tea.Msg {
		ev, ok := <-ch
		return holdEventMsg{session: session, ev: ev, events: ch, ok: ok}
	}
}

// holdActCmd sends an action on the connection, off Update; the tap's
// answer comes as an event.
func holdActCmd(session int, c *tap.HoldClient, act func(*tap.HoldClient) error) tea.Cmd {
	return func() tea.Msg {
		if err := act(c); err != nil {
			return holdEventMsg{session: session, ev: tap.HoldEvent{Notice: "the tap did not take the action: " + err.Error()}, ok: true}
		}
		return nil
	}
}

// apply takes one event of the tap's.
func (p *holdPane) apply(ev tap.HoldEvent, now time.Time) {
	p.refused = ev.OK != nil && !*ev.OK
	switch {
	case ev.Filters != nil:
		p.filters = *ev.Filters
	case ev.Held != nil:
		for _, f := range p.frames {
			if f.N == ev.Held.N {
				return // told twice: once listed, once held
			}
		}
		it := heldItem{HeldFrame: *ev.Held, until: now.Add(time.Duration(ev.Held.HoldMs) * time.Millisecond)}
		dir, _ := classify.ParseDirection(ev.Held.Dir)
		it.m = classify.Classify(it.Bytes(), dir, classify.JSONRPC)
		at := len(p.frames)
		for at > 0 && p.frames[at-1].N > it.N {
			at--
		}
		p.frames = append(p.frames, heldItem{})
		copy(p.frames[at+1:], p.frames[at:])
		p.frames[at] = it
	case ev.Released != nil:
		for i, f := range p.frames {
			if f.N == ev.Released.N {
				p.frames = append(p.frames[:i], p.frames[i+1:]...)
				if f.Matched { // a frame that waited goes with the one before it: that one's word stays
					p.notice = fmt.Sprintf("#%d %s", f.N, releasedPhrase(ev.Released.How))
				}
				break
			}
		}
		p.sel = min(p.sel, max(len(p.frames)-1, 0))
	case ev.Notice != "":
		p.notice = classify.EscapeString(ev.Notice, 300)
	case ev.OK != nil && !*ev.OK:
		p.notice = classify.EscapeString(ev.Error, 300)
	case ev.OK != nil && ev.N != 0:
		for i := range p.frames {
			if p.frames[i].N == ev.N {
				p.frames[i].decided = ev.Act
			}
		}
	}
}

// decidedWord says what was decided for a frame that still waits.
var decidedWord = map[string]string{"forward": "forward", "edit": "edited", "drop": "drop", "reply": "answered"}

// delivered says whether the frame will reach its receiver: not when it
// was decided to be dropped or answered in its receiver's place.
func (f heldItem) delivered() bool { return f.decided != "drop" && f.decided != "reply" }

// releasedPhrase says how a held frame left the tap.
func releasedPhrase(how string) string {
	switch how {
	case "forwarded":
		return "forwarded"
	case "edited":
		return "forwarded as edited"
	case "dropped":
		return "dropped: its receiver never read it"
	case "answered":
		return "answered in place: its receiver never read it"
	case "timeout":
		return "forwarded as it was: its hold time ran out"
	case "detached":
		return "forwarded as it was: the view that held it went away"
	case "overflow":
		return "forwarded as it was: the tap held as much as it may"
	case "waited":
		return "went on after the frame it waited behind"
	}
	return "forwarded as it was (" + classify.EscapeString(how, 20) + ")"
}

// selected is the frame selected, if any.
func (p *holdPane) selected() (heldItem, bool) {
	if p.sel < len(p.frames) {
		return p.frames[p.sel], true
	}
	return heldItem{}, false
}

// Update takes a message of the pane's: its intercept connection, the
// tap's events on it (the frames held, their filters, its notices), and
// its keys while it has focus.
func (p *holdPane) Update(msg tea.Msg) (intent, tea.Cmd) {
	switch msg := msg.(type) {
	case holdOpenedMsg:
		p.conn = msg.conn
		return intent{}, waitHoldCmd(p.session, msg.events)
	case holdEventMsg:
		if !msg.ok {
			p.conn, p.frames = nil, nil
			if !p.refused {
				p.notice = "the intercept connection ended (the tap is gone?)"
			}
			return intent{}, nil
		}
		p.apply(msg.ev, p.c.now())
		if msg.events != nil {
			return intent{kind: intentKeepTicking}, waitHoldCmd(p.session, msg.events)
		}
	case tea.KeyMsg:
		return p.key(msg), nil
	}
	return intent{}, nil
}

// key handles a key while the pane has focus.
func (p *holdPane) key(msg tea.KeyMsg) intent {
	k := p.c.keys
	switch {
	case key.Matches(msg, k.Up):
		p.sel = max(p.sel-1, 0)
	case key.Matches(msg, k.Down):
		p.sel = min(p.sel+1, max(len(p.frames)-1, 0))
	case key.Matches(msg, k.HoldForwardAll):
		return intent{kind: intentHoldForwardAll}
	}
	f, ok := p.selected()
	if !ok {
		return intent{}
	}
	if !f.Matched {
		for _, b := range []key.Binding{k.HoldForward, k.HoldEdit, k.HoldDrop, k.HoldReply} {
			if key.Matches(msg, b) {
				p.notice = fmt.Sprintf("#%d is not held itself: it waits behind a held frame of its direction, and goes on when that one does", f.N)
			}
		}
		return intent{}
	}
	switch {
	case key.Matches(msg, k.HoldForward):
		return intent{kind: intentHoldForward, seq: f.N}
	case key.Matches(msg, k.HoldDrop):
		return intent{kind: intentHoldDrop, seq: f.N}
	case key.Matches(msg, k.HoldEdit):
		return intent{kind: intentHoldEdit, seq: f.N}
	case key.Matches(msg, k.HoldReply):
		if f.m.Kind != classify.KindRequest {
			p.notice = fmt.Sprintf("#%d is %s, which gets no answer: forward, edit or drop it", f.N, f.m.Kind.Phrase())
			return intent{}
		}
		return intent{kind: intentHoldReply, seq: f.N}
	}
	return intent{}
}

// frame is held frame n, if the pane lists it.
func (p *holdPane) frame(n int64) (heldItem, bool) {
	for _, f := range p.frames {
		if f.N == n {
			return f, true
		}
	}
	return heldItem{}, false
}

// replySkeleton is the reply that fits held request f's method
// (inject.ReplyTo), with its id as on the wire.
func replySkeleton(f heldItem) string {
	b, _ := inject.ReplyTo(&f.m) // f is a request: Update lets only those be answered
	return string(b)
}

// requests is how many of the frames held are requests that will reach
// their receiver, each waiting for an answer that its receiver cannot
// give before it reads it: the session's pending requests that the tap's
// file does not show yet.
func (p *holdPane) requests() int {
	n := 0
	for _, f := range p.frames {
		if f.m.Kind == classify.KindRequest && f.delivered() {
			n++
		}
	}
	return n
}

// blocker is the frame that held frame i waits behind: the oldest frame
// of its direction listed before it that is held and undecided (0 when
// none is listed).
func (p *holdPane) blocker(i int) int64 {
	for _, f := range p.frames[:i] {
		if f.Dir == p.frames[i].Dir && f.Matched && f.decided == "" {
			return f.N
		}
	}
	return 0
}

// ShortHelp is the footer while the pane has focus: at 80 columns, with
// ? and q, all but F fit (the ? screen lists it).
func (p *holdPane) ShortHelp() []key.Binding {
	k := p.c.keys
	return []key.Binding{k.HoldForward, k.HoldEdit, k.HoldDrop, k.HoldReply, k.Back, k.HoldForwardAll, k.Help, k.Quit}
}

// FullHelp is the ? screen while the pane has focus: its keys.
func (p *holdPane) FullHelp() [][]key.Binding {
	k := p.c.keys
	return [][]key.Binding{{k.Up, k.Down, k.HoldForward, k.HoldForwardAll}, {k.HoldEdit, k.HoldDrop, k.HoldReply}, {k.Back, k.Help, k.Quit}}
}

// View draws the pane: the filters, the frames held (oldest first) with
// the seconds each may still be held, the selected one's bytes, and the
// last notice.
func (p *holdPane) View() string {
	now := p.c.now()
	s := p.c.styles
	filters := "intercept off (:intercept EXPR sets it)"
	if p.filters.H2S != "" || p.filters.S2H != "" {
		filters = "intercept → " + orNone(p.filters.H2S) + "  ← " + orNone(p.filters.S2H)
	}
	if p.conn == nil {
		filters = "connecting to the tap…"
	}
	lines := []string{truncate(s.Title.Render("Held")+s.Dim.Render(fmt.Sprintf(" (%d)  ", len(p.frames))+classify.EscapeString(filters, 200)), p.width)}
	if len(p.frames) == 0 {
		lines = append(lines, s.Dim.Render("nothing held"))
	}
	rows := max(p.height-4, 1)
	top := 0
	if p.sel >= rows {
		top = p.sel - rows + 1
	}
	for i := top; i < len(p.frames) && i < top+rows; i++ {
		f := p.frames[i]
		arrow := "→"
		if f.Dir == "s2h" {
			arrow = "←"
		}
		what := f.m.Method()
		if what == "" {
			what = f.m.Kind.String()
		}
		if f.m.HasID() {
			what += " id " + string(f.m.ID().Raw)
		}
		// The seconds left for a frame held and undecided; after the
		// frame's own name, what it waits behind.
		left, behind := "", ""
		if f.Matched && f.decided == "" {
			left = fmt.Sprintf("%ds", int(max(f.until.Sub(now), 0).Round(time.Second)/time.Second))
		} else {
			behind = "the frames held before it"
			if b := p.blocker(i); b != 0 {
				behind = fmt.Sprintf("#%d", b)
			}
			behind = " · waits behind " + behind
			if f.decided != "" {
				behind = " · " + decidedWord[f.decided] + "," + strings.TrimPrefix(behind, " ·")
			}
		}
		line := truncate(fmt.Sprintf("#%-4d %s %-5s %s%s", f.N, arrow, left, classify.EscapeString(what, 120), behind), p.width)
		if i == p.sel {
			line = s.Selected.Render(padRight(line, p.width))
		}
		lines = append(lines, line)
	}
	if f, ok := p.selected(); ok {
		body := classify.EscapeString(string(f.Bytes()), 2000)
		if f.Redacted {
			body = "(secrets masked) " + body
		}
		lines = append(lines, s.Dim.Render(truncate(body, p.width)))
	}
	if p.notice != "" {
		lines = append(lines, truncate(p.notice, p.width))
	}
	return strings.Join(lines, "\n")
}

func orNone(expr string) string {
	if expr == "" {
		return "(none)"
	}
	return expr
}
