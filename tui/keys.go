package tui

import "github.com/charmbracelet/bubbles/key"

// KeyMap is every key the program answers to. Keys are data: panes match
// them with key.Matches, and help is generated from them.
type KeyMap struct {
	Up, Down, PageUp, PageDown, Top, Bottom               key.Binding
	NextPane, PrevPane                                    key.Binding
	Filter, SearchMode, ClearFilter, NextMatch, PrevMatch key.Binding
	Open, Back, Pair                                      key.Binding
	ToggleRaw, More, ToggleStderr, ToggleTime             key.Binding
	Stats, LeaveStats, Pending                            key.Binding
	Caps, LeaveCaps, GoToFrame                            key.Binding // the capabilities pane
	Tools, LeaveTools, ToolCall, ToolScroll               key.Binding // the tools pane
	Apply, Cancel                                         key.Binding // in the filter and command lines
	Copy, Command, Help, Quit                             key.Binding
	NextSession, PrevSession                              key.Binding
	// The composer: open it, reply to or resend the selected frame, and
	// its own keys while it is open.
	Compose, Reply, Resend                key.Binding
	ComposeSend, ComposeDir, ComposeClose key.Binding
	ComposeCatalog, ComposeEditor         key.Binding
	ComposeTemplates, ComposeForward      key.Binding
	Interrupt                             key.Binding // quits even where text is typed
	// The held pane (intercept): open it, and its keys.
	Held, HoldForward, HoldForwardAll key.Binding
	HoldEdit, HoldDrop, HoldReply     key.Binding
}

// DefaultKeyMap is the key map rpctap starts with.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:             key.NewBinding(key.WithKeys("k", "up"), key.WithHelp("↑/k", "up")),
		Down:           key.NewBinding(key.WithKeys("j", "down"), key.WithHelp("↓/j", "down")),
		PageUp:         key.NewBinding(key.WithKeys("pgup", "ctrl+b", "ctrl+u"), key.WithHelp("pgup", "page up")),
		PageDown:       key.NewBinding(key.WithKeys("pgdown", "ctrl+f", "ctrl+d", " "), key.WithHelp("pgdn", "page down")),
		Top:            key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "first")),
		Bottom:         key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "last, follow")),
		NextPane:       key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane")),
		PrevPane:       key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous pane")),
		Filter:         key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		ClearFilter:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear search/filter; back")),
		NextMatch:      key.NewBinding(key.WithKeys("n"), key.WithHelp("n/N", "next/previous match or flag")),
		PrevMatch:      key.NewBinding(key.WithKeys("N")),
		SearchMode:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "in the filter: search instead")),
		Open:           key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "open")),
		Back:           key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Pair:           key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "jump to pair")),
		ToggleRaw:      key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "raw/pretty")),
		More:           key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "more of a long frame")),
		ToggleStderr:   key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "show/hide stderr")),
		ToggleTime:     key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "relative/wall time")),
		Stats:          key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "stats")),
		LeaveStats:     key.NewBinding(key.WithKeys("s", "esc"), key.WithHelp("s/esc", "back to the traffic")),
		Apply:          key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
		Cancel:         key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
		Pending:        key.NewBinding(key.WithKeys("P"), key.WithHelp("P", "pending")),
		Caps:           key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "capabilities")),
		LeaveCaps:      key.NewBinding(key.WithKeys("c", "esc"), key.WithHelp("c/esc", "close")),
		GoToFrame:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "go to the frame")),
		Tools:          key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "tools")),
		LeaveTools:     key.NewBinding(key.WithKeys("T", "esc"), key.WithHelp("T/esc", "close")),
		ToolCall:       key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "call it")),
		ToolScroll:     key.NewBinding(key.WithKeys("pgup", "pgdown"), key.WithHelp("pgup/pgdn", "scroll")),
		Copy:           key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy frame")),
		Command:        key.NewBinding(key.WithKeys(":"), key.WithHelp(":", "command")),
		Help:           key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:           key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		NextSession:    key.NewBinding(key.WithKeys("]"), key.WithHelp("]/[", "next/previous session")),
		PrevSession:    key.NewBinding(key.WithKeys("[")),
		Compose:        key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "inject a frame")),
		Reply:          key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "reply to this")),
		Resend:         key.NewBinding(key.WithKeys("I"), key.WithHelp("I", "resend this")),
		Interrupt:      key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
		ComposeSend:    key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "send")),
		ComposeDir:     key.NewBinding(key.WithKeys("ctrl+d", "tab"), key.WithHelp("tab", "dir")),
		ComposeCatalog: key.NewBinding(key.WithKeys("ctrl+k"), key.WithHelp("ctrl+k", "catalog")),
		ComposeEditor:  key.NewBinding(key.WithKeys("ctrl+e"), key.WithHelp("ctrl+e", "editor")),
		ComposeClose:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")),
		// ctrl+t and ctrl+o: the text area's transpose and nothing; the
		// composer's own keys come first.
		ComposeTemplates: key.NewBinding(key.WithKeys("ctrl+t"), key.WithHelp("ctrl+t", "templates")),
		ComposeForward:   key.NewBinding(key.WithKeys("ctrl+o"), key.WithHelp("ctrl+o", "capture/forward the answer")),
		Held:             key.NewBinding(key.WithKeys("H"), key.WithHelp("H", "held frames (intercept)")),
		HoldForward:      key.NewBinding(key.WithKeys("f", "enter"), key.WithHelp("f", "forward")),
		HoldForwardAll:   key.NewBinding(key.WithKeys("F"), key.WithHelp("F", "forward all")),
		HoldEdit:         key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "edit")),
		HoldDrop:         key.NewBinding(key.WithKeys("x"), key.WithHelp("x", "drop")),
		HoldReply:        key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "answer in place")),
	}
}

// ShortHelp is the footer while the traffic table has focus.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.Open, k.Filter, k.ToggleRaw, k.NextPane, k.Pair, k.Stats, k.Bottom, k.Help, k.Quit}
}

// InputHelp is the footer while the filter or command line is typed in.
func (k KeyMap) InputHelp(filter bool) []key.Binding {
	if filter {
		return []key.Binding{k.Apply, k.SearchMode, k.Cancel}
	}
	return []key.Binding{k.Apply, k.Cancel}
}

// FullHelp is the ? screen.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.NextPane, k.PrevPane, k.Pending, k.Open, k.Pair, k.NextSession},
		{k.Filter, k.SearchMode, k.ClearFilter, k.NextMatch, k.ToggleStderr, k.ToggleTime, k.ToggleRaw},
		// ? itself is in every footer, and the screen says how to close it.
		{k.More, k.Stats, k.Caps, k.Tools, k.Copy, k.Command, k.Quit},
		// The held pane's own keys show in its footer.
		{k.Compose, k.Reply, k.Resend, k.Held},
	}
}
