package tui

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/filter"
	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/tap"
)

// frameTick is how often the program picks up new traffic: render work per
// second stays bounded however fast frames arrive. Ticks come only while
// something can change with no message of its own (see needsTicks): an
// idle view of an ended session costs no CPU.
const frameTick = 80 * time.Millisecond

type tickMsg time.Time

// catchUpTick is how often the program redraws while a view catches up
// with its tap: the table moves too fast to read then, and the CPU is
// better left to the tap and to catching up.
const catchUpTick = 250 * time.Millisecond

func tickAfter(d time.Duration) tea.Cmd {
	return tea.Tick(d, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func tick() tea.Cmd { return tickAfter(frameTick) }

// nextTick is the tick after this one.
func (m *Model) nextTick() tea.Cmd { return tickAfter(m.tickEvery()) }

// tickEvery is how often to pick up traffic: less often while a view
// catches up.
func (m *Model) tickEvery() time.Duration {
	for _, v := range m.views {
		if v.src.CatchingUp() {
			return catchUpTick
		}
	}
	return frameTick
}

type paneID int

const (
	paneTraffic paneID = iota
	paneDetail
	panePending
	paneStats
	paneHeld // the held pane, in place of the detail and pending panes
)

// mode says where keys go first.
type mode int

const (
	modeNormal mode = iota
	modeFilter
	modeCommand
	modePicker
	modeCompose // the composer of the active view has every key
)

// Model is the root of the program: global keys, window size, routing to
// the focused pane of the active session.
type Model struct {
	c      *common
	views  []*sessionView
	active int
	picker *picker
	mode   mode
	// searching: the filter input marks matches instead of hiding the rest.
	searching bool
	input     textinput.Model
	help      help.Model
	showHelp  bool
	width     int
	height    int
	status    string // one line of feedback (errors, copies)
	lastID    int    // of the last session view opened
	now       func() time.Time
	// demo, when set, is the scenario rpctap demo plays (see demo.go).
	demo       Demo
	demoStates <-chan DemoState
	demoState  DemoState
	// tty is the terminal the program draws on and reads keys from, for
	// the editor the composer runs; nil when unknown.
	tty *os.File
	// ticking: a tick is on its way (see needsTicks).
	ticking bool
}

// Option configures a Model.
type Option func(*Model)

// WithClock replaces the wall clock (tests).
func WithClock(now func() time.Time) Option { return func(m *Model) { m.now = now } }

// WithTerminal names the terminal the program runs on (the one its
// input reads and its output draws on): the editor ctrl+e opens gets it
// as its stdin, stdout and stderr.
func WithTerminal(tty *os.File) Option { return func(m *Model) { m.tty = tty } }

// WithStatus shows msg on the status line until the first key.
func WithStatus(msg string) Option { return func(m *Model) { m.status = msg } }

// New builds the program's model for the given sources; with none, it
// opens on the picker of live taps and recent sessions.
func New(r *lipgloss.Renderer, sources []*Source, opts ...Option) *Model {
	c := newCommon(r)
	m := &Model{c: c, help: help.New(), input: textinput.New(), now: time.Now}
	for _, o := range opts {
		o(m)
	}
	for _, src := range sources {
		m.views = append(m.views, m.newView(src))
	}
	if len(m.views) == 0 {
		m.picker = newPicker(c)
		m.mode = modePicker
	}
	m.setPrompt("/")
	return m
}

func (m *Model) Init() tea.Cmd {
	m.ticking = true
	cmds := []tea.Cmd{tick()}
	if m.picker != nil {
		cmds = append(cmds, m.picker.refresh())
	}
	if m.demoStates != nil {
		cmds = append(cmds, m.waitDemo())
	}
	return tea.Batch(cmds...)
}

// needsTicks says whether what the program shows can change with no
// message of its own: a view's source is still adding records (loading,
// following, live), held frames count down, or the picker lists live
// taps.
func (m *Model) needsTicks() bool {
	if m.picker != nil && m.mode == modePicker {
		return true
	}
	for _, v := range m.views {
		if !v.src.Ended() || v.hold != nil && len(v.hold.frames) > 0 {
			return true
		}
	}
	return false
}

// keepTicking starts the ticks again when they had stopped: a view or
// the picker opened (a new view's first tick syncs it, and goes on while
// needsTicks says).
func (m *Model) keepTicking() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	return m.nextTick()
}

func (m *Model) view() *sessionView {
	if m.active < len(m.views) {
		return m.views[m.active]
	}
	return nil
}

func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		return m, nil
	case tickMsg:
		// Asked before the sync: a source that had ended by then has
		// every record in its index, and this sync takes the last.
		more := m.needsTicks()
		var cmds []tea.Cmd
		for _, v := range m.views {
			if cmd := v.sync(m.now()); cmd != nil {
				cmds = append(cmds, cmd)
			}
		}
		if m.picker != nil && m.mode == modePicker {
			cmds = append(cmds, m.picker.maybeRefresh(m.now()))
		}
		m.ticking = more
		if more {
			cmds = append(cmds, m.nextTick())
		}
		return m, tea.Batch(cmds...)
	case searchDoneMsg:
		for _, v := range m.views {
			if v.id == msg.session {
				return m, v.searchDone(msg)
			}
		}
		return m, nil
	case scanDoneMsg:
		for _, v := range m.views {
			if v.id == msg.session {
				return m, tea.Batch(v.traffic.scanDone(v.src, msg), v.loadDetail())
			}
		}
		return m, nil
	case detailLoadedMsg:
		for _, v := range m.views {
			if v.id == msg.session {
				v.detail.apply(msg)
			}
		}
		return m, nil
	case previewMsg:
		for _, v := range m.views {
			if v.id == msg.session && v.composer != nil {
				v.composer.applyPreview(msg)
			}
		}
		return m, nil
	case templatesMsg:
		for _, v := range m.views {
			if v.id != msg.session || v.composer == nil {
				continue
			}
			if msg.err != nil {
				v.composer.note(msg.err.Error())
			} else {
				v.composer.setTemplates(msg.templates)
			}
		}
		return m, nil
	case holdOpenedMsg:
		for _, v := range m.views {
			if v.id == msg.session {
				v.holdOpening = false
				if msg.err != nil {
					if v.focus == paneHeld { // asked for (H), not the header's own look
						m.status = "cannot intercept: " + msg.err.Error()
					}
					return m, nil
				}
				v.held().conn = msg.conn
				cmds := []tea.Cmd{waitHoldCmd(v.id, msg.events)}
				if f := v.holdWant; f != nil {
					v.holdWant = nil
					cmds = append(cmds, holdActCmd(v.id, msg.conn, func(c *tap.HoldClient) error { return c.SetFilters(f.H2S, f.S2H) }))
				}
				return m, tea.Batch(cmds...)
			}
		}
		if msg.conn != nil {
			msg.conn.Close()
		}
		return m, nil
	case holdEventMsg:
		for _, v := range m.views {
			if v.id == msg.session {
				if !msg.ok {
					if v.hold != nil {
						v.hold.conn, v.hold.frames = nil, nil
						v.hold.notice = "the intercept connection ended (the tap is gone?)"
					}
					return m, nil
				}
				v.held().apply(msg.ev, m.now())
				if msg.events != nil {
					return m, tea.Batch(waitHoldCmd(v.id, msg.events), m.keepTicking())
				}
			}
		}
		return m, nil
	case injectDoneMsg:
		if v := m.view(); v != nil && v.id == msg.session {
			m.status = msg.text
		}
		return m, nil
	case copyDoneMsg:
		if v := m.view(); v != nil && v.id == msg.session {
			m.status = msg.text
		}
		return m, nil
	case editorReadyMsg:
		if msg.err != nil {
			m.status = msg.err.Error()
			return m, nil
		}
		return m, runEditor(msg.session, msg.path, m.tty)
	case editorExitedMsg:
		return m, readEditorFile(msg)
	case editorDoneMsg:
		for _, v := range m.views {
			if v.id != msg.session || v.composer == nil {
				continue
			}
			if msg.err != nil {
				m.status = msg.err.Error()
				return m, nil
			}
			m.status = ""
			return m, v.composer.fill(strings.TrimSuffix(msg.text, "\n"), 0)
		}
		return m, nil
	case demoStateMsg:
		if !msg.ok {
			return m, nil
		}
		m.demoState = msg.state
		return m, m.waitDemo()
	case pickerMsg:
		if m.picker != nil {
			m.picker.apply(msg)
		}
		return m, nil
	case tea.MouseMsg:
		if v := m.view(); v != nil && m.mode == modeNormal {
			switch msg.Button {
			case tea.MouseButtonWheelUp:
				v.traffic.wheel(-3)
			case tea.MouseButtonWheelDown:
				v.traffic.wheel(3)
			}
			return m, v.loadDetail()
		}
		return m, nil
	case tea.KeyMsg:
		return m.keyMsg(msg)
	}
	return m, nil
}

// keyMsg handles a key message. Keys typed in one burst (fast typing, key
// repeat over ssh) come as one message of several runes: each acts as if
// typed alone, the mode it leaves the program in deciding where the next
// goes ("/abc" opens the filter and types abc in it). A paste is text, not
// keys: it goes whole to a text input, and is no command anywhere else.
// The composer's text takes a burst whole too; its lists (the catalog,
// the templates) take keys, one by one.
func (m *Model) keyMsg(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	if msg.Type != tea.KeyRunes || len(msg.Runes) < 2 || msg.Paste || m.composerTyping() {
		return m.key(msg)
	}
	cmds := make([]tea.Cmd, 0, len(msg.Runes))
	for _, r := range msg.Runes {
		_, cmd := m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
		cmds = append(cmds, cmd)
	}
	return m, tea.Batch(cmds...)
}

// composerTyping says whether the composer's text has the keys (not one
// of its lists).
func (m *Model) composerTyping() bool {
	if m.mode != modeCompose {
		return false
	}
	v := m.view()
	return v == nil || v.composer == nil || v.composer.picking == pickNone
}

// key routes a key: a text input with focus gets every key first.
func (m *Model) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.c.keys
	m.status = "" // feedback lasts until the next key
	if m.showHelp {
		m.showHelp = false // any key closes help
		return m, nil
	}
	switch m.mode {
	case modeFilter:
		return m.filterKey(msg)
	case modeCommand:
		return m.commandKey(msg)
	case modeCompose:
		return m.composeKey(msg)
	case modePicker:
		// Typed into the filter, q and ? are text; ctrl+c still quits.
		typing := m.picker.typing()
		switch {
		case key.Matches(msg, k.Interrupt), key.Matches(msg, k.Quit) && !typing:
			return m, tea.Quit
		case key.Matches(msg, k.Help) && !typing:
			m.showHelp = true
			return m, nil
		case key.Matches(msg, k.Back) && len(m.views) > 0 && !m.picker.filter.active():
			m.mode = modeNormal
			return m, nil
		}
		in := m.picker.Update(msg)
		if in.kind == intentOpen {
			src, err := OpenTarget(in.target)
			if err != nil {
				m.status = err.Error()
				return m, nil
			}
			v := m.newView(src)
			m.views = append(m.views, v)
			m.active = len(m.views) - 1
			m.mode = modeNormal
			m.layout()
			return m, m.keepTicking()
		}
		return m, nil
	}
	if m.demoKey(msg) {
		return m, nil
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m, tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = true
		return m, nil
	case key.Matches(msg, k.Filter):
		m.mode = modeFilter
		m.setSearching(false)
		if v := m.view(); v != nil {
			m.input.SetValue(v.filterText)
		}
		m.input.CursorEnd()
		m.input.Focus()
		return m, textinput.Blink
	case key.Matches(msg, k.Command):
		m.mode = modeCommand
		m.setPrompt(":")
		m.input.SetValue("")
		m.input.Focus()
		return m, textinput.Blink
	case key.Matches(msg, k.NextSession):
		if len(m.views) > 0 {
			m.active = (m.active + 1) % len(m.views)
		}
		return m, nil
	case key.Matches(msg, k.PrevSession):
		if len(m.views) > 0 {
			m.active = (m.active + len(m.views) - 1) % len(m.views)
		}
		return m, nil
	}
	v := m.view()
	if v == nil {
		return m, nil
	}
	switch {
	case v.showStats && key.Matches(msg, k.LeaveStats):
		v.showStats = false
		return m, nil
	case key.Matches(msg, k.NextPane):
		v.focus = (v.focus + 1) % 3
		return m, nil
	case key.Matches(msg, k.PrevPane):
		v.focus = (v.focus + 2) % 3
		return m, nil
	case key.Matches(msg, k.Stats):
		v.showStats = !v.showStats
		return m, nil
	case key.Matches(msg, k.Compose) && !v.showStats:
		return m, m.openComposer(v, "", classify.H2S)
	case key.Matches(msg, k.Held) && !v.showStats:
		return m, m.openHeld(v, nil)
	case key.Matches(msg, k.Pending):
		v.focus = panePending
		return m, nil
	case key.Matches(msg, k.ClearFilter) && v.focus == paneTraffic && v.search != nil:
		v.search = nil
		return m, nil
	case key.Matches(msg, k.ClearFilter) && v.focus == paneTraffic && v.filterText != "":
		v.setFilter("")
		return m, v.loadDetail()
	case key.Matches(msg, k.Back) && v.focus != paneTraffic:
		v.focus = paneTraffic
		return m, nil
	case key.Matches(msg, k.ToggleRaw) && !v.showStats:
		// The detail pane shows the selected frame whichever pane has
		// focus: r switches it from the list too.
		v.detail.raw = !v.detail.raw
		return m, v.loadDetail()
	case key.Matches(msg, k.More) && !v.showStats:
		v.detail.more()
		return m, v.loadDetail()
	}
	var in intent
	switch {
	case v.showStats:
		in = v.stats.Update(msg)
	case v.focus == paneDetail:
		in = v.detail.Update(msg)
	case v.focus == panePending:
		in = v.pending.Update(msg)
	case v.focus == paneHeld:
		in = v.held().Update(msg)
	default:
		in = v.traffic.Update(msg)
	}
	return m, m.do(v, in)
}

// do carries out a pane's intent.
func (m *Model) do(v *sessionView, in intent) tea.Cmd {
	switch in.kind {
	case intentFocusDetail:
		v.focus = paneDetail
	case intentJumpPair:
		pos := v.traffic.selected()
		if pos >= 0 {
			if e := v.src.Index.At(pos); e.Pair != 0 {
				if !v.jumpSeq(e.Pair) {
					m.status = fmt.Sprintf("frame #%d is hidden by the filter", e.Pair)
				}
			} else {
				m.status = "this frame has no pair"
			}
		}
	case intentJumpSeq:
		if v.jumpSeq(in.seq) {
			v.focus = paneTraffic
		}
	case intentNextMatch:
		m.status = v.nextMatch(in.step)
	case intentRefilter:
		return tea.Batch(v.refilter(), v.loadDetail())
	case intentCopy:
		return m.copySelected(v)
	case intentHoldForward, intentHoldDrop, intentHoldForwardAll:
		c := v.held().conn
		if c == nil {
			m.status = "not connected to the tap's intercept yet"
			return nil
		}
		n := in.seq
		act := map[intentKind]func(*tap.HoldClient) error{
			intentHoldForward:    func(c *tap.HoldClient) error { return c.Forward(n) },
			intentHoldDrop:       func(c *tap.HoldClient) error { return c.Drop(n) },
			intentHoldForwardAll: func(c *tap.HoldClient) error { return c.ForwardAll() },
		}[in.kind]
		return holdActCmd(v.id, c, act)
	case intentHoldEdit, intentHoldReply:
		f, ok := v.held().frame(in.seq)
		if !ok {
			return nil
		}
		dir, _ := classify.ParseDirection(f.Dir)
		text, reply := string(f.Bytes()), in.kind == intentHoldReply
		if reply {
			text, dir = replySkeleton(f), dir.Opposite()
		}
		cmd := m.openComposer(v, text, dir)
		if v.composer != nil {
			v.composer.target = &holdTarget{n: f.N, reply: reply}
			if reply {
				v.composer.note(fmt.Sprintf("answering held #%d in its receiver's place: ctrl+s sends this to the %s", f.N, inject.Sender(dir.Opposite())))
			} else {
				v.composer.note(fmt.Sprintf("editing held #%d: ctrl+s sends this in its place", f.N))
			}
		}
		return cmd
	case intentReply, intentResend:
		if err := v.canInject(); err != nil {
			m.status = err.Error()
			return nil
		}
		text, dir, err := v.template(in.kind == intentReply)
		if err != nil {
			m.status = err.Error()
			return nil
		}
		return m.openComposer(v, text, dir)
	}
	return v.loadDetail()
}

// openHeld shows the held pane, connecting it to the live tap when it is
// not yet; set, when not nil, sets the intercept filters.
func (m *Model) openHeld(v *sessionView, set *tap.HoldFilters) tea.Cmd {
	if err := v.canInject(); err != nil {
		m.status = strings.Replace(err.Error(), "inject", "intercept", 1)
		return nil
	}
	v.focus = paneHeld
	v.setSize(v.width, v.height)
	p := v.held()
	switch {
	case p.conn == nil && v.holdOpening:
		if set != nil {
			v.holdWant = set // set once the connection on its way is open
		}
	case p.conn == nil:
		v.holdAsked, v.holdOpening = true, true
		return openHoldCmd(v.id, v.src.Socket(), set)
	case set != nil:
		f := *set
		return holdActCmd(v.id, p.conn, func(c *tap.HoldClient) error { return c.SetFilters(f.H2S, f.S2H) })
	}
	return nil
}

// openComposer opens the view's composer on text going in dir; a view
// with no live tap says why it cannot.
func (m *Model) openComposer(v *sessionView, text string, dir classify.Direction) tea.Cmd {
	cmd, err := v.openComposer(text, dir)
	if err != nil {
		m.status = err.Error()
		return nil
	}
	m.mode = modeCompose
	return cmd
}

// composeKey gives a key to the composer, and carries out its intent:
// close it, or send its frames through the live tap (in a command).
func (m *Model) composeKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	v := m.view()
	if v == nil || v.composer == nil {
		m.mode = modeNormal
		return m, nil
	}
	in, cmd := v.composer.Update(msg)
	switch {
	case in.quit:
		return m, tea.Quit
	case in.help:
		m.showHelp = true
		return m, nil
	case in.close:
		v.composer = nil
		m.mode = modeNormal
		v.setSize(v.width, v.height)
		return m, v.loadDetail()
	case in.edit:
		m.status = "opening the editor…"
		return m, writeEditorFile(v.id, v.composer.ta.Value())
	case in.pick != nil:
		text, dir, note, err := v.catalogText(*in.pick, v.composer.dir)
		if err != nil {
			v.composer.note(err.Error())
			return m, nil
		}
		cmd := v.composer.fill(text, dir)
		v.composer.note(note)
		return m, cmd
	case in.templates:
		return m, templatesCmd(v.id, v.src, v.idsFresh())
	case in.hold != nil:
		c := v.held().conn
		h := *in.hold
		v.composer = nil
		m.mode = modeNormal
		v.focus = paneHeld
		v.setSize(v.width, v.height)
		if c == nil {
			m.status = "not connected to the tap's intercept any more"
			return m, nil
		}
		return m, holdActCmd(v.id, c, func(c *tap.HoldClient) error {
			if h.target.reply {
				return c.Reply(h.target.n, h.body)
			}
			return c.Edit(h.target.n, h.body)
		})
	case in.send != nil:
		m.status = "sending…"
		return m, injectCmd(v.id, v.src.Socket(), *in.send)
	}
	return m, cmd
}

// setSearching switches the filter input between filtering (frames that do
// not match are hidden) and searching (they stay; matches are marked).
func (m *Model) setSearching(on bool) {
	m.searching = on
	m.setPrompt("filter /")
	if on {
		m.setPrompt("search /")
	}
}

func (m *Model) filterKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	v := m.view()
	if key.Matches(msg, m.c.keys.SearchMode) {
		m.setSearching(!m.searching)
		return m, nil
	}
	switch {
	case key.Matches(msg, m.c.keys.Apply):
		m.leaveInput()
		cmd := m.applyExpr(v, m.searching, m.input.Value())
		if m.searching && cmd == nil && v != nil && v.search != nil {
			// A search ready at once: go to its first match.
			m.status = v.nextMatch(1)
			return m, v.loadDetail()
		}
		return m, cmd
	case key.Matches(msg, m.c.keys.Cancel):
		m.leaveInput()
		return m, nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

// leaveInput ends typing in the filter or command line.
func (m *Model) leaveInput() {
	m.mode = modeNormal
	m.input.Blur()
}

// applyExpr applies a filter expression to v: as a filter, or as a search.
func (m *Model) applyExpr(v *sessionView, search bool, text string) tea.Cmd {
	if v == nil {
		return nil
	}
	what := "filter"
	if search {
		what = "search"
	}
	f, err := filter.Parse(text)
	if err != nil {
		m.status = fmt.Sprintf("the %s did not parse (%v); it was not applied", what, err)
		return nil
	}
	if search {
		return v.setSearch(text, f)
	}
	if cmd := v.applyFilter(text, f); cmd != nil {
		return cmd
	}
	return v.loadDetail()
}

func (m *Model) commandKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch {
	case key.Matches(msg, m.c.keys.Apply):
		m.leaveInput()
		return m, m.runCommand(strings.TrimSpace(m.input.Value()))
	case key.Matches(msg, m.c.keys.Cancel):
		m.leaveInput()
		return m, nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

// runCommand carries out a : command.
func (m *Model) runCommand(line string) tea.Cmd {
	name, arg, _ := strings.Cut(line, " ")
	v := m.view()
	switch name {
	case "q", "quit":
		return tea.Quit
	case "open":
		if arg == "" {
			m.picker = newPicker(m.c)
			m.mode = modePicker
			m.layout()
			return tea.Batch(m.picker.refresh(), m.keepTicking())
		}
		src, err := OpenTarget(arg)
		if err != nil {
			m.status = err.Error()
			return nil
		}
		m.views = append(m.views, m.newView(src))
		m.active = len(m.views) - 1
		m.layout()
		return m.keepTicking()
	case "goto", "g":
		var seq int64
		if _, err := fmt.Sscan(arg, &seq); err != nil || v == nil {
			m.status = "usage: :goto SEQ"
			return nil
		}
		if !v.jumpSeq(seq) {
			m.status = fmt.Sprintf("no frame #%d shows", seq)
		}
		return v.loadDetail()
	case "filter", "search":
		return m.applyExpr(v, name == "search", arg)
	case "intercept":
		if v == nil {
			return nil
		}
		expr := strings.TrimSpace(arg)
		if expr == "off" {
			expr = ""
		}
		if err := tap.ParseIntercept(expr); err != nil {
			m.status = err.Error()
			return nil
		}
		return m.openHeld(v, &tap.HoldFilters{H2S: expr, S2H: expr})
	case "stderr":
		if v != nil {
			v.traffic.showErr = !v.traffic.showErr
			return v.refilter()
		}
	case "":
	default:
		m.status = fmt.Sprintf("unknown command %q: try open, goto, filter, search, intercept, stderr, quit", name)
	}
	return nil
}

// copySelected puts the selected frame on the clipboard, in a command
// (see copyFrame).
func (m *Model) copySelected(v *sessionView) tea.Cmd {
	pos := v.traffic.selected()
	if pos < 0 {
		return nil
	}
	var out io.Writer = os.Stdout
	if m.tty != nil {
		out = m.tty // the terminal the view draws on, whatever stdout is
	}
	id, src, seq := v.id, v.src, v.src.Index.At(pos).Seq
	return func() tea.Msg { return copyFrame(id, src, pos, seq, out) }
}

func (m *Model) layout() {
	for _, v := range m.views {
		v.setSize(m.width, m.height-3-m.demoHeight()) // header, filter line, footer
	}
	if m.picker != nil {
		m.picker.SetSize(m.width, m.height-2)
	}
	m.help.Width = m.width
	m.setPrompt(m.input.Prompt)
}

// setPrompt sets the input's prompt. The text scrolls within what the
// line leaves to the prompt, the cursor and the filter's ✓ or ✗ with why.
func (m *Model) setPrompt(p string) {
	m.input.Prompt = p
	m.input.Width = max(m.width-lipgloss.Width(p)-1-min(m.width/3, 40), 1)
}

func (m *Model) View() string {
	if m.width == 0 {
		return ""
	}
	if m.showHelp {
		return m.helpView()
	}
	if m.mode == modePicker || m.view() == nil {
		body := ""
		if m.picker != nil {
			body = m.picker.View()
		}
		return lipgloss.JoinVertical(lipgloss.Left, body, truncate(m.status, m.width), m.footer())
	}
	v := m.view()
	header := v.header(m.now(), m.active, len(m.views))
	body := v.View(m.now())
	if m.demo != nil {
		return lipgloss.JoinVertical(lipgloss.Left, header, body, m.demoBar(), m.filterLine(v), m.footer())
	}
	return lipgloss.JoinVertical(lipgloss.Left, header, body, m.filterLine(v), m.footer())
}

// demoHeight is the lines the demo's bar takes, if a demo plays.
func (m *Model) demoHeight() int {
	switch {
	case m.demo == nil:
		return 0
	case m.height < demoShortBelow:
		return 2
	}
	return demoBarHeight
}

// helpKeys are the ? screen's columns of keys: the picker's or the
// composer's list's while they show, else the view's; legend says the
// badges' short words go with them.
func (m *Model) helpKeys() (groups [][]key.Binding, legend bool) {
	v := m.view()
	switch {
	case m.mode == modePicker && m.picker != nil:
		return m.picker.FullHelp(), false
	case m.mode == modeCompose && v != nil && v.composer != nil:
		return v.composer.FullHelp(), false
	}
	return m.c.keys.FullHelp(), true
}

// helpView is the ? screen: the key map's columns, as many side by side as
// the width takes, the short badge words, and how to close it; cut to the
// height.
func (m *Model) helpView() string {
	s := m.c.styles
	const gap = "   "
	var rows, row []string
	rowW := 0
	groups, withLegend := m.helpKeys()
	for _, group := range groups {
		block := m.help.FullHelpView([][]key.Binding{group})
		w := lipgloss.Width(block)
		if len(row) > 0 && rowW+len(gap)+w > m.width {
			rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
			row, rowW = nil, 0
		}
		if len(row) > 0 {
			row = append(row, gap)
			rowW += len(gap)
		}
		row = append(row, block)
		rowW += w
	}
	rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, row...))
	closing := s.Dim.Render("any key closes help")
	if !withLegend {
		return cutToScreen(strings.Join(rows, "\n\n")+"\n\n"+closing, m.width, m.height)
	}
	var words []string
	for _, long := range []string{"UNMATCHED", "INVALID", "REDACTED", "OPAQUE", "LEAKY", "TIMEOUT", "CAPTURED", "PARTIAL"} {
		words = append(words, compactBadges[long]+" "+strings.ToLower(long))
	}
	legend := func(words []string) string {
		return ansi.Wrap(s.Dim.Render("narrow tables shorten badges: "+strings.Join(words, " · ")), m.width, " ")
	}
	var held []string
	for _, long := range []string{"HELD", "EDITED", "DROPPED", "ANSWERED", "EXPIRED", "DETACHED", "OVERFLOW", "WAITED", "ENDED"} {
		held = append(held, compactBadges[long]+" "+strings.ToLower(long))
	}
	text := strings.Join(rows, "\n\n") + "\n\n" + legend(append(words, held...)) + "\n\n" + closing
	if strings.Count(text, "\n") >= m.height {
		// The held frames' badges only when they fit (not at 80×24; the
		// README lists them).
		text = strings.Join(rows, "\n\n") + "\n\n" + legend(words) + "\n\n" + closing
	}
	return cutToScreen(text, m.width, m.height)
}

// cutToScreen cuts text to h lines of at most w cells.
func cutToScreen(text string, w, h int) string {
	lines := strings.Split(text, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		lines[i] = truncate(l, w)
	}
	return strings.Join(lines, "\n")
}

func (m *Model) filterLine(v *sessionView) string {
	s := m.c.styles
	switch m.mode {
	case modeFilter:
		_, err := filter.Parse(m.input.Value())
		mark := s.FilterOK.Render("✓")
		if err != nil {
			mark = s.FilterBad.Render("✗ " + err.Error())
		}
		return truncate(m.input.View()+"  "+mark, m.width)
	case modeCommand:
		return truncate(m.input.View(), m.width)
	}
	if m.status != "" {
		return truncate(m.status, m.width)
	}
	var parts []string
	if v.filterText != "" {
		// Of the frames the header counts: the same numbers.
		count := fmt.Sprintf("  (%d of %d frames)", len(v.traffic.rows), v.frames())
		if v.traffic.scanning != nil {
			count = "  (reading frame payloads…)"
		}
		parts = append(parts, s.Dim.Render("filter: ")+classify.EscapeString(v.filterText, 200)+s.Dim.Render(count))
	}
	if v.search != nil {
		parts = append(parts, s.Dim.Render("search: ")+classify.EscapeString(v.search.text, 200)+s.Dim.Render("  "+v.search.status()))
	}
	if n := v.heldNow(); n > 0 && v.focus != paneHeld {
		what := "1 frame for you: H shows it"
		if n > 1 {
			what = fmt.Sprintf("%d frames for you: H shows them", n)
		}
		parts = append(parts, "the tap holds "+what+", to forward, edit, drop or answer")
	}
	return truncate(strings.Join(parts, "    "), m.width)
}

// footer is the keys of where keys go now: the picker, the text input,
// the stats, or the pane with focus.
func (m *Model) footer() string {
	var keys []key.Binding
	v := m.view()
	switch {
	case m.mode == modeFilter || m.mode == modeCommand:
		keys = m.c.keys.InputHelp(m.mode == modeFilter)
	case m.mode == modeCompose && v != nil && v.composer != nil:
		keys = v.composer.ShortHelp()
	case m.mode == modePicker || v == nil:
		if m.picker != nil {
			keys = m.picker.ShortHelp(len(m.views) > 0)
		}
	case v.showStats:
		keys = v.stats.ShortHelp()
	case v.focus == paneDetail:
		keys = v.detail.ShortHelp()
	case v.focus == panePending:
		keys = v.pending.ShortHelp()
	case v.focus == paneHeld:
		keys = v.held().ShortHelp()
	default:
		keys = m.c.keys.ShortHelp()
	}
	return m.c.styles.Footer.Render(m.footerKeys(keys))
}

// footerKeys lays keys out on one line: ? help and q quit, when among
// them, always show, at the end; the others before them as far as they
// fit, an ellipsis saying some did not.
func (m *Model) footerKeys(keys []key.Binding) string {
	k := m.c.keys
	h := m.help
	item := func(b key.Binding) string {
		return h.Styles.ShortKey.Inline(true).Render(b.Help().Key) + " " + h.Styles.ShortDesc.Inline(true).Render(b.Help().Desc)
	}
	sep := h.Styles.ShortSeparator.Inline(true).Render(h.ShortSeparator)
	var rest, always []string
	for _, b := range keys {
		switch {
		case !b.Enabled():
		case sameBinding(b, k.Help) || sameBinding(b, k.Quit):
			always = append(always, item(b))
		default:
			rest = append(rest, item(b))
		}
	}
	tail := strings.Join(always, sep)
	room := m.width
	if tail != "" {
		room -= lipgloss.Width(sep + tail)
	}
	more := " " + h.Styles.Ellipsis.Inline(true).Render(h.Ellipsis)
	head := ""
	for i, it := range rest {
		next := it
		if head != "" {
			next = head + sep + it
		}
		w := lipgloss.Width(next)
		if i < len(rest)-1 {
			w += lipgloss.Width(more) // room for the ellipsis, should the next not fit
		}
		if w > room {
			if head != "" {
				head += more
			}
			break
		}
		head = next
	}
	switch {
	case head == "":
		return truncate(tail, m.width)
	case tail == "":
		return truncate(head, m.width)
	}
	return truncate(head+sep+tail, m.width)
}

// sameBinding reports whether a and b are the same key of the key map.
func sameBinding(a, b key.Binding) bool {
	return a.Help() == b.Help() && slices.Equal(a.Keys(), b.Keys())
}

// newView opens a view on a source, with an id that routes its async
// results.
func (m *Model) newView(src *Source) *sessionView {
	m.lastID++
	return newSessionView(m.lastID, m.c, src)
}
