package tui

import (
	"os"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/source"
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
func New(r *lipgloss.Renderer, sources []*source.Source, opts ...Option) *Model {
	c := newCommon(r)
	m := &Model{c: c, help: help.New(), input: textinput.New(), now: time.Now}
	for _, o := range opts {
		o(m)
	}
	c.now = func() time.Time { return m.now() }
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

// viewByID is the open view with id, or nil when it has closed.
func (m *Model) viewByID(id int) *sessionView {
	for _, v := range m.views {
		if v.id == id {
			return v
		}
	}
	return nil
}

// orphan lets go of what a view's message holds when the view has closed
// before it came: an intercept connection.
func orphan(msg sessionMsg) {
	if msg, ok := msg.(holdOpenedMsg); ok && msg.conn != nil {
		msg.conn.Close()
	}
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
		if v := m.view(); v != nil {
			if w := v.src.TakeWarnings(); len(w) > 0 {
				m.status = classify.EscapeString(w[0], 300)
			}
		}
		m.ticking = more
		if more {
			cmds = append(cmds, m.nextTick())
		}
		return m, tea.Batch(cmds...)
	case sessionMsg:
		v := m.viewByID(msg.sessionID())
		if v == nil {
			orphan(msg)
			return m, nil
		}
		in, cmd := v.Update(msg)
		if in.kind == intentNone {
			return m, cmd
		}
		return m, tea.Batch(cmd, m.do(v, in))
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

// newView opens a view on a source, with an id that routes its async
// results.
func (m *Model) newView(src *source.Source) *sessionView {
	m.lastID++
	return newSessionView(m.lastID, m.c, src)
}
