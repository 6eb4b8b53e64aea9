package tui

import (
	"fmt"
	"io"
	"os"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/tap"
)

// This file holds what the panes ask of the program (their intents): opening
// the held frames and the composer, the composer's keys, and copying the
// selected frame.

// do carries out a pane's intent.
func (m *Model) do(v *sessionView, in intent) tea.Cmd {
	switch in.kind {
	case intentStatus:
		m.status = in.text
		return nil
	case intentKeepTicking:
		return m.keepTicking()
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
		if !v.jumpSeq(in.seq) {
			m.status = fmt.Sprintf("frame #%d is hidden by the filter", in.seq)
			break
		}
		v.focus = paneTraffic
		v.overlay(nil)
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
	case intentCallTool:
		if err := v.canInject(); err != nil {
			m.status = err.Error()
			return nil
		}
		m.status = "building the tools/call of " + classify.EscapeString(in.tool.Name, 60) + "…"
		return toolCallCmd(v.id, v.src, v.idsFresh(), *in.tool)
	case intentTemplate:
		cmd := m.openComposer(v, "", in.template.Dir)
		if v.composer == nil {
			return cmd
		}
		v.overlay(nil)
		v.focus = paneTraffic
		m.status = ""
		return tea.Batch(cmd, v.composer.useTemplate(*in.template))
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
	switch in.kind {
	case intentQuit:
		return m, tea.Quit
	case intentHelp:
		m.showHelp = true
		return m, nil
	case intentCloseComposer:
		v.composer = nil
		m.mode = modeNormal
		v.setSize(v.width, v.height)
		return m, v.loadDetail()
	case intentEdit:
		m.status = "opening the editor…"
		return m, writeEditorFile(v.id, v.composer.ta.Value())
	case intentPick:
		pick, err := v.pickCatalog(*in.pick, v.composer.dir)
		if err != nil {
			v.composer.note(err.Error())
			return m, nil
		}
		if pick.e.FromSession() {
			v.composer.note("reading the session for " + pick.e.Name + "…")
			return m, catalogCmd(v.id, v.src, pick)
		}
		return m, v.composer.fillCatalog(pick.build(v.id))
	case intentTemplates:
		return m, templatesCmd(v.id, v.src, v.idsFresh())
	case intentHoldSend:
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
	case intentSend:
		m.status = "sending…"
		return m, injectCmd(v.id, v.src.Socket(), *in.send)
	}
	return m, cmd
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
