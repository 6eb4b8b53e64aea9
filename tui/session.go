package tui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/filter"
	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tap"
)

// sessionView is one open session: its panes and what they show.
type sessionView struct {
	id         int
	c          *common
	src        *source.Source
	traffic    *trafficPane
	detail     *detailPane
	pending    *pendingPane
	stats      *statsPane
	caps       *capsPane
	tools      *toolsPane
	focus      paneID
	showStats  bool
	showCaps   bool // the capabilities pane shows in place of the others
	showTools  bool // the tools pane shows in place of the others
	filterText string
	search     *search   // frames marked, not hidden; nil: none
	composer   *composer // open in place of the detail and pending panes; nil: closed
	hold       *holdPane // the frames the tap holds; nil until first shown
	// holdAsked says the view asked a live tap for its intercept
	// connection at its first tick, so that the header counts the frames
	// the tap holds (H shows them); holdOpening that a connection is on
	// its way, and holdWant the filters to set once it is open.
	holdAsked, holdOpening bool
	holdWant               *tap.HoldFilters
	// alloc chooses the composer's ids; idsFresh feeds it the index's
	// entries from fed on.
	alloc   *inject.IDs
	auto    map[string]bool // see given
	fed     int
	idBuf   []sessions.Entry
	width   int
	height  int
	lastLen int
	lastSel int
}

func newSessionView(id int, c *common, src *source.Source) *sessionView {
	v := &sessionView{id: id, c: c, src: src, detail: newDetailPane(c), stats: newStatsPane(c), caps: newCapsPane(c), tools: newToolsPane(c), lastSel: -1}
	v.traffic = newTrafficPane(c, src, func() *search { return v.search })
	v.pending = newPendingPane(c, func() time.Duration { return src.Clock(c.now()) }, src.Timeout)
	return v
}

// Layout: the traffic table on top, the detail pane under it on the left
// and the pending requests on the right.
func (v *sessionView) setSize(w, h int) {
	v.width, v.height = w, h
	frame := v.c.styles.Pane.GetVerticalFrameSize()
	fw := v.c.styles.Pane.GetHorizontalFrameSize()
	top := max(h*45/100, 5)
	bottom := max(h-top, 4)
	if top+bottom > h {
		// A short terminal: a row of the table and a line of each pane
		// under it at least, the table first.
		bottom = max(h-(frame+2), frame+1)
		top = max(h-bottom, frame+2)
	}
	v.traffic.SetSize(w-fw, top-frame)
	// The pending pane takes a third, from 30 to 60 columns, but never
	// more than two fifths of what the two panes share: the detail pane
	// keeps the larger part of a narrow terminal.
	pendW := min(max(w/3, 30), 60, max((w-2*fw)*2/5, 1))
	v.detail.SetSize(w-pendW-2*fw, bottom-frame)
	v.pending.SetSize(pendW, bottom-frame)
	for _, o := range []pane{v.stats, v.caps, v.tools} {
		o.SetSize(w-fw, v.overlayHeight())
	}
	if v.composer != nil {
		v.composer.SetSize(w-fw, bottom-frame)
	}
	if v.hold != nil {
		v.hold.SetSize(w-fw, bottom-frame)
	}
}

// heldRequests is how many requests the tap holds, as far as the view
// knows: they wait for their answers, and the file shows them only once
// they leave the tap.
func (v *sessionView) heldRequests() int {
	if v.hold == nil {
		return 0
	}
	return v.hold.requests()
}

// held is the view's held pane, made when first needed.
func (v *sessionView) held() *holdPane {
	if v.hold == nil {
		v.hold = newHoldPane(v.c, v.id)
		v.setSize(v.width, v.height)
	}
	return v.hold
}

// openComposer opens the composer on text going in dir, or says why a
// view cannot inject.
func (v *sessionView) openComposer(text string, dir classify.Direction) (tea.Cmd, error) {
	if err := v.ensureComposer(dir); err != nil {
		return nil, err
	}
	return v.composer.fill(text, dir), nil
}

// ensureComposer opens the composer (empty, going in dir) unless it is
// open, or says why a view cannot inject.
func (v *sessionView) ensureComposer(dir classify.Direction) error {
	if err := v.canInject(); err != nil {
		return err
	}
	if v.composer == nil {
		v.composer = newComposer(v.c, v.id, dir, v.injectOptions(), v.injectFraming, v.given())
		v.setSize(v.width, v.height)
	}
	return nil
}

// A catalogPick is a catalog entry picked in the composer, with what its
// frames are built from: the direction they go and the request in
// flight they name, found in Update; the session's revision and tools
// are read off Update (catalogCmd) for an entry built from them.
type catalogPick struct {
	e    inject.Entry
	dir  classify.Direction
	p    inject.Params
	note string // on what to edit ("" for the entry's rule)
}

// pickCatalog starts the composer's text for a catalog entry: the
// direction it goes (the entry's, or dir for one that makes sense
// either way), and for an entry about a request in flight, the oldest
// one from the side the frame impersonates.
func (v *sessionView) pickCatalog(e inject.Entry, dir classify.Direction) (catalogPick, error) {
	if e.Dir != inject.Either {
		dir = e.Dir
	}
	if e.Sized {
		return catalogPick{}, fmt.Errorf("the %s entry is too large to edit here; send it with: rpctap inject --catalog %s --size N", e.Name, e.Name)
	}
	pick := catalogPick{e: e, dir: dir}
	if e.NeedsID {
		pick.p.ID = `"rpctap-0"`
		pick.note = fmt.Sprintf("no request from the %s is in flight: the id \"rpctap-0\" stands in; write the id of one", inject.Sender(dir))
		for _, r := range v.src.Index.Pending() {
			if r.Dir == dir {
				pick.p.ID, pick.note = r.ID, fmt.Sprintf("names the request #%d in flight, %s", r.Seq, classify.EscapeString(r.Method, 40))
				break
			}
		}
	}
	return pick, nil
}

// catalogMsg is the composer's text for a catalog entry, built off
// Update when it is built from the session.
type catalogMsg struct {
	session int
	text    string
	dir     classify.Direction
	note    string
	err     error
}

// build makes the composer's text of the pick: its frames in the raw
// syntax, and a note on what to edit.
func (c catalogPick) build(session int) catalogMsg {
	frames, err := c.e.Frames(c.p)
	if err != nil {
		return catalogMsg{session: session, err: err}
	}
	note := c.note
	if note == "" {
		note = c.e.Name + ": " + c.e.Rule
	}
	return catalogMsg{session: session, text: inject.FormatRaw(frames), dir: c.dir, note: note}
}

// catalogCmd builds the text of a pick whose entry is built from the
// session (its revision's _meta, its tools), read as the templates are.
func catalogCmd(session int, src *source.Source, pick catalogPick) tea.Cmd {
	return func() tea.Msg {
		seen, err := sessionSeen(src)
		if err != nil {
			return catalogMsg{session: session, err: fmt.Errorf("cannot read the session's frames for the catalog entry: %w", err)}
		}
		sp := seen.CatalogParams()
		pick.p.Meta, pick.p.Tools = sp.Meta, sp.Tools
		return pick.build(session)
	}
}

// canInject says why the view cannot inject: it has no live tap.
func (v *sessionView) canInject() error {
	if v.src.Socket() == "" {
		return errors.New("this session is a recording; inject needs a live tap (open one with rpctap ui, or run rpctap watch -- SERVER)")
	}
	return nil
}

// template builds the composer's text from the selected frame: a reply
// to it (its id, going back the other way), or a copy of it with a fresh
// id (going the same way).
func (v *sessionView) template(reply bool) (string, classify.Direction, error) {
	pos := v.traffic.selected()
	if pos < 0 {
		return "", 0, errors.New("select a frame first")
	}
	ev, err := v.src.Record(pos)
	if err != nil {
		return "", 0, fmt.Errorf("cannot read the frame: %w", err)
	}
	dir := ev.Dir
	if dir != classify.H2S && dir != classify.S2H {
		return "", 0, errors.New("only a frame of the conversation can be replied to or resent, not the server's stderr")
	}
	m := classify.Classify(ev.Frame, dir, v.src.Index.Profile())
	// In the raw syntax: a control byte of the peer's stays in the text
	// as \xHH (the text area would drop it raw), and is sent as it was.
	if reply {
		b, err := inject.ReplyTo(&m)
		return inject.FormatRaw([][]byte{b}), dir.Opposite(), err
	}
	id := v.idsFresh().Next(dir)
	b, err := inject.Resend(&m, id)
	if err == nil {
		v.given()[id] = true
	}
	return inject.FormatRaw([][]byte{b}), dir, err
}

// injectOptions are how the composer previews frames: the session's
// profile, and the ids of requests in flight (the framing is
// injectFraming's, for the direction the frames go).
func (v *sessionView) injectOptions() inject.Options {
	return inject.Options{Profile: v.src.Index.Profile(), IDs: v.idsFresh(), Tools: v.src.Index.CheckToolCall}
}

// injectFraming is the framing the tap gives a frame injected in dir:
// that of the direction's own frames, as the index knows it (the
// header's, and what the tap noted of each direction since: under auto
// a host may frame with Content-Length and its server with lines), or
// while the direction has had none, the other direction's, as the tap
// does.
func (v *sessionView) injectFraming(dir classify.Direction) classify.Framing {
	x := v.src.Index
	if !x.Framed(dir) {
		dir = dir.Opposite()
	}
	return x.Framings().Of(dir)
}

// given is the set of ids the view's templates gave out (JSON text): the
// composer gives one a fresh id when it sends it a second time.
func (v *sessionView) given() map[string]bool {
	if v.auto == nil {
		v.auto = map[string]bool{}
	}
	return v.auto
}

// idsFresh brings the view's id allocator up to date with the index:
// every request and response indexed since the last call, so that the
// composer's ids are judged and chosen against the session as it is now,
// not as it was when the composer opened. It reads entries only (no
// payload), and each once.
func (v *sessionView) idsFresh() *inject.IDs {
	if v.alloc == nil {
		v.alloc = inject.NewIDs()
	}
	x := v.src.Index
	for n := x.Len(); v.fed < n; {
		v.idBuf = x.Entries(v.idBuf[:0], v.fed, min(v.fed+4096, n))
		for _, e := range v.idBuf {
			switch {
			case e.ID == "" || e.Captured && e.Kind != classify.KindResponse:
			case e.Kind == classify.KindRequest, e.Kind == classify.KindResponse:
				v.alloc.SeeID(e.Dir, e.Kind, e.ID)
			}
		}
		v.fed += len(v.idBuf)
	}
	return v.alloc
}

// sync picks up what the source added since the last tick.
func (v *sessionView) sync(now time.Time) tea.Cmd {
	x := v.src.Index
	n := x.Len()
	if n != v.lastLen {
		v.lastLen = n
		v.stats.Update(indexTickMsg{x})
	}
	if v.composer != nil {
		v.idsFresh()
	}
	scan := v.traffic.sync(v.id, v.src)
	search := v.extendSearch()
	v.pending.Update(indexTickMsg{x})
	if v.showCaps {
		v.caps.Update(indexTickMsg{x})
	}
	if v.showTools {
		v.tools.Update(indexTickMsg{x})
	}
	var hold tea.Cmd
	if !v.holdAsked && v.src.Socket() != "" && !v.src.Ended() {
		// Without setting a filter: only to hear of the frames held.
		v.holdAsked, v.holdOpening = true, true
		hold = openHoldCmd(v.id, v.src.Socket(), nil)
	}
	return tea.Batch(scan, search, v.loadDetail(), hold)
}

// heldNow is how many frames the live tap holds for the user now (those
// waiting behind a held frame too), as its intercept connection tells.
func (v *sessionView) heldNow() int {
	if v.hold == nil || v.hold.conn == nil {
		return 0
	}
	return len(v.hold.frames)
}

// loadDetail (re)loads the detail pane when the selection changed.
func (v *sessionView) loadDetail() tea.Cmd {
	pos := v.traffic.selected()
	return v.detail.load(v.id, v.src, pos)
}

// applyFilter filters the table; a filter that reads payloads scans in
// the background (the command it returns), so the view stays interactive
// over a million frames.
func (v *sessionView) applyFilter(text string, f *filter.Filter) tea.Cmd {
	v.filterText = text
	if f.NeedsPayload() {
		v.traffic.rows = v.traffic.rows[:0]
		return v.traffic.scanFrom(v.id, v.src, f, 0)
	}
	v.traffic.scanning = nil
	v.traffic.refilter(v.src, f)
	return nil
}

func (v *sessionView) setFilter(text string) {
	f, err := filter.Parse(text)
	if err != nil {
		return
	}
	v.applyFilter(text, f)
}

// refilter filters the table again (stderr shown or hidden).
func (v *sessionView) refilter() tea.Cmd { return v.applyFilter(v.filterText, v.traffic.flt) }

// jumpSeq selects the frame with seq, when it shows.
func (v *sessionView) jumpSeq(seq int64) bool {
	pos, ok := v.src.Index.BySeq(seq)
	if !ok {
		return false
	}
	return v.traffic.selectPos(pos)
}

// nextMatch steps to the next (or previous) frame the search marks, or
// with no search, to the next frame with a finding. It says what happened
// when that is not plain.
func (v *sessionView) nextMatch(step int) string {
	if v.search != nil {
		return v.stepSearch(step)
	}
	x := v.src.Index
	for i := v.traffic.sel + step; i >= 0 && i < len(v.traffic.rows); i += step {
		if x.At(int(v.traffic.rows[i])).Worst > 0 {
			v.traffic.sel = i
			v.traffic.follow = false
			v.traffic.clamp()
			return ""
		}
	}
	return "no further frame has a finding"
}

// counts are the frames by direction: to the server, to the host, and
// the server's stderr lines when the table shows them.
func (v *sessionView) counts(c sessions.Counts) string {
	out := fmt.Sprintf("→%d ←%d", c.H2S, c.S2H)
	if v.traffic.showErr && c.Err > 0 {
		out += fmt.Sprintf(" !%d", c.Err)
	}
	return out
}

// frames is how many frames the header counts: what the table shows with
// no filter.
func (v *sessionView) frames() int {
	c := v.src.Index.Counts()
	n := c.H2S + c.S2H
	if v.traffic.showErr {
		n += c.Err
	}
	return n
}

// header is the session's title line with counts and the frame rate.
func (v *sessionView) header(now time.Time, i, n int) string {
	s := v.c.styles
	x := v.src.Index
	cnt := x.Counts()
	name := classify.EscapeString(v.src.Title(), 40)
	state := v.src.State()
	if failed := cnt.ExitCode != 0 || cnt.ExitSignal != ""; cnt.Exit && failed && (state == "ended" || state == "recorded") {
		state += ", " + exitStatus(cnt) // a server that failed; "ended" alone is a clean exit
	}
	parts := []string{
		s.Header.Render(name),
		s.HeaderDim.Render(state),
		v.counts(cnt),
		s.SevError.Render(fmt.Sprintf("%d err", cnt.Errors)),
		s.SevWarn.Render(fmt.Sprintf("%d warn", cnt.Warnings)),
		fmt.Sprintf("%d pending", cnt.Pending+v.heldRequests()),
	}
	if yours := cnt.UserErrors + cnt.UserWarnings; yours > 0 {
		// The user's own findings (injected or edited frames) are no
		// peer's errors: apart, after the peers'.
		parts = slices.Insert(parts, 5, s.Dim.Render(fmt.Sprintf("%d yours", yours)))
	}
	if cnt.Missing > 0 {
		// Frames the file could not hold (its gap records), next to
		// the frames it holds: what they held is not judged, and the
		// requests they may have answered are not pending (GAP).
		parts = slices.Insert(parts, 3, s.SevWarn.Render(fmt.Sprintf("%d missing", cnt.Missing)))
	}
	if held := v.heldNow(); held > 0 {
		// Right after the state: traffic waits on the user, which a
		// narrow header must not cut off.
		parts = slices.Insert(parts, 2, s.Badge["HELD"].Render(fmt.Sprintf("%d held", held))+s.Dim.Render(" H"))
	}
	if n > 1 {
		parts = append(parts, s.Dim.Render(fmt.Sprintf("[%d/%d]", i+1, n)))
	}
	line := strings.Join(parts, "  ")
	spark := sparkline(v.stats.rate, max(v.width-lipgloss.Width(line)-4, 0))
	if spark != "" {
		line += "  " + s.Bar.Render(spark)
	}
	return truncate(line, v.width)
}

// exitStatus is how the session's exit record says the server ended:
// "exit 7", or the signal that ended it.
func exitStatus(c sessions.Counts) string {
	if c.ExitSignal != "" {
		return classify.EscapeString(c.ExitSignal, 12)
	}
	return fmt.Sprintf("exit %d", c.ExitCode)
}

func (v *sessionView) View() string {
	s := v.c.styles
	if v.overlaid() {
		return s.PaneFocused.Width(v.width - s.PaneFocused.GetHorizontalFrameSize()).Height(v.overlayHeight()).Render(v.focused().View())
	}
	pane := func(focused bool) lipgloss.Style {
		if focused {
			return s.PaneFocused
		}
		return s.Pane
	}
	top := pane(v.focus == paneTraffic).Width(v.traffic.width).Height(v.traffic.height).
		Render(v.traffic.View())
	if v.composer != nil {
		comp := s.PaneFocused.Width(v.composer.width).Height(v.composer.height).Render(v.composer.View())
		return lipgloss.JoinVertical(lipgloss.Left, top, comp)
	}
	if v.focus == paneHeld {
		p := v.held()
		held := s.PaneFocused.Width(p.width).Height(p.height).Render(p.View())
		return lipgloss.JoinVertical(lipgloss.Left, top, held)
	}
	det := pane(v.focus == paneDetail).Width(v.detail.width).Height(v.detail.height).Render(v.detail.View())
	pend := pane(v.focus == panePending).Width(v.pending.width).Height(v.pending.height).
		Render(v.pending.View())
	return lipgloss.JoinVertical(lipgloss.Left, top, lipgloss.JoinHorizontal(lipgloss.Top, det, pend))
}

// templatesMsg is the session's templates, built off Update.
type templatesMsg struct {
	session   int
	templates []inject.Template
	err       error
}

// templatesCmd builds the templates of the session src shows (see
// sessionSeen); ids come from ids (safe for concurrent use).
func templatesCmd(session int, src *source.Source, ids *inject.IDs) tea.Cmd {
	return func() tea.Msg {
		seen, err := sessionSeen(src)
		if err != nil {
			return templatesMsg{session: session, err: fmt.Errorf("cannot read the session's frames for templates: %w", err)}
		}
		return templatesMsg{session: session, templates: seen.Templates(ids)}
	}
}

// toolCallMsg is the template of a tools/call the tools pane asked for,
// built off Update.
type toolCallMsg struct {
	session  int
	template inject.Template
	err      error
}

// toolCallCmd builds the template of a tools/call of tool in the session
// src shows: its arguments a skeleton of the tool's inputSchema, with
// the _meta the session's requests carry (see sessionSeen).
func toolCallCmd(session int, src *source.Source, ids *inject.IDs, tool inject.Tool) tea.Cmd {
	return func() tea.Msg {
		seen, err := sessionSeen(src)
		if err != nil {
			return toolCallMsg{session: session, err: fmt.Errorf("cannot read the session's frames for the tools/call: %w", err)}
		}
		return toolCallMsg{session: session, template: seen.ToolCall(tool, ids)}
	}
}

// sessionSeen reads what templates and catalog entries are built from
// (inject.Seen): the last frame of each method seen and the results of
// the last lists, in order. It reads only those frames back; it is for
// a command, off Update.
func sessionSeen(src *source.Source) (*inject.Seen, error) {
	x := src.Index
	type key struct {
		dir    classify.Direction
		kind   classify.Kind
		method string
	}
	last := map[key]int{}
	var buf []sessions.Entry
	for from, n := 0, x.Len(); from < n; from += 4096 {
		buf = x.Entries(buf[:0], from, min(from+4096, n))
		for i, e := range buf {
			if (e.Kind == classify.KindRequest || e.Kind == classify.KindNotification) && e.Method != "" {
				last[key{e.Dir, e.Kind, e.Method}] = from + i
			}
		}
	}
	var pos []int
	for k, p := range last {
		pos = append(pos, p)
		if k.kind != classify.KindRequest || !strings.HasSuffix(k.method, "/list") {
			continue
		}
		if pair := x.At(p).Pair; pair != 0 { // the list's result
			if r, ok := x.BySeq(pair); ok {
				pos = append(pos, r)
			}
		}
	}
	slices.Sort(pos)
	seen := inject.NewSeen()
	h, _ := x.Header()
	for _, p := range pos {
		ev, err := src.Record(p)
		if err != nil {
			return nil, err
		}
		m := h.Classify(ev.Frame, ev.Dir, x.Profile())
		seen.See(&m)
	}
	return seen, nil
}

// overlaid says a pane shows in place of the others (the stats, the
// capabilities, the tools).
func (v *sessionView) overlaid() bool { return v.showStats || v.showCaps || v.showTools }

// overlay shows the pane that o is the flag of in place of the others,
// or none (nil).
func (v *sessionView) overlay(o *bool) {
	v.showStats, v.showCaps, v.showTools = false, false, false
	if o != nil {
		*o = true
	}
}

// overlayHeight is the height inside its frame of a pane that shows in
// place of the others: the whole view's.
func (v *sessionView) overlayHeight() int { return v.height - v.c.styles.Pane.GetVerticalFrameSize() }

// focused is the pane that takes the keys: the stats while they show,
// else the pane with focus.
func (v *sessionView) focused() pane {
	switch {
	case v.showStats:
		return v.stats
	case v.showCaps:
		return v.caps
	case v.showTools:
		return v.tools
	case v.focus == paneDetail:
		return v.detail
	case v.focus == panePending:
		return v.pending
	case v.focus == paneHeld:
		return v.held()
	}
	return v.traffic
}

// Update takes a message of this view (see sessionMsg) to the pane that
// owns it; what it changes outside the view comes back as an intent.
func (v *sessionView) Update(msg sessionMsg) (intent, tea.Cmd) {
	switch msg := msg.(type) {
	case searchDoneMsg:
		return intent{}, v.searchDone(msg)
	case scanDoneMsg:
		in, cmd := v.traffic.Update(msg)
		return in, tea.Batch(cmd, v.loadDetail())
	case detailLoadedMsg:
		return v.detail.Update(msg)
	case previewMsg, templatesMsg, editorDoneMsg:
		if v.composer != nil {
			return v.composer.Update(msg)
		}
	case catalogMsg:
		if v.composer != nil {
			return intent{}, v.composer.fillCatalog(msg)
		}
	case toolCallMsg:
		if msg.err != nil {
			return intent{kind: intentStatus, text: msg.err.Error()}, nil
		}
		return intent{kind: intentTemplate, template: &msg.template}, nil
	case holdOpenedMsg:
		return v.holdOpened(msg)
	case holdEventMsg:
		if !msg.ok && v.hold == nil {
			return intent{}, nil // the end of a connection no pane shows
		}
		return v.held().Update(msg)
	}
	return intent{}, nil
}

// holdOpened takes the intercept connection the held pane asked for to
// the pane, and sets the filters asked for meanwhile.
func (v *sessionView) holdOpened(msg holdOpenedMsg) (intent, tea.Cmd) {
	v.holdOpening = false
	if msg.err != nil {
		if v.focus == paneHeld { // asked for (H), not the header's own look
			return intent{kind: intentStatus, text: "cannot intercept: " + msg.err.Error()}, nil
		}
		return intent{}, nil
	}
	in, cmd := v.held().Update(msg)
	if f := v.holdWant; f != nil {
		v.holdWant = nil
		cmd = tea.Batch(cmd, holdActCmd(v.id, msg.conn, func(c *tap.HoldClient) error { return c.SetFilters(f.H2S, f.S2H) }))
	}
	return in, cmd
}
