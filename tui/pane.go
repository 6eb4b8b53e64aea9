package tui

import (
	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/sessions"
)

// A pane is one part of a session view: it takes the messages that are
// its own, keys among them while it has focus, hands back as an intent
// what the root is to do, and draws itself at its size from what it
// holds (the program's clock is in common).
type pane interface {
	Update(msg tea.Msg) (intent, tea.Cmd)
	View() string
	SetSize(w, h int)
	help.KeyMap // ShortHelp, the footer; FullHelp, the ? screen
}

var (
	_ pane = (*trafficPane)(nil)
	_ pane = (*detailPane)(nil)
	_ pane = (*pendingPane)(nil)
	_ pane = (*statsPane)(nil)
	_ pane = (*capsPane)(nil)
	_ pane = (*toolsPane)(nil)
	_ pane = (*holdPane)(nil)
	_ pane = (*picker)(nil)
	_ pane = (*composer)(nil)
)

// A sessionMsg is an async result that belongs to one session view: the
// root hands it to the view with its id (Model.viewByID), which routes
// it to the pane that owns it (sessionView.Update).
type sessionMsg interface{ sessionID() int }

func (m searchDoneMsg) sessionID() int   { return m.session }
func (m scanDoneMsg) sessionID() int     { return m.session }
func (m detailLoadedMsg) sessionID() int { return m.session }
func (m previewMsg) sessionID() int      { return m.session }
func (m templatesMsg) sessionID() int    { return m.session }
func (m catalogMsg) sessionID() int      { return m.session }
func (m toolCallMsg) sessionID() int     { return m.session }
func (m holdOpenedMsg) sessionID() int   { return m.session }
func (m holdEventMsg) sessionID() int    { return m.session }
func (m editorDoneMsg) sessionID() int   { return m.session }

// An indexTickMsg is the view's tick, passed to a pane fed from the
// session's index (stats, pending): the pane takes in what the index
// holds now.
type indexTickMsg struct{ x *sessions.Index }
