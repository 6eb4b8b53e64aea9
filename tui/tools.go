package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/sessions"
)

// toolsPane shows the session's MCP tools: each tool of the latest
// tools/list, and those called that it does not list, with its calls,
// protocol errors, isError results, p50/p99 and drift; under the list,
// the selected tool's description, schemas and annotations. enter goes
// to the tools/list result that listed it, i opens the composer on a
// tools/call of it. It takes the index's snapshot when the index grew,
// and lays out the selected tool's definition again only when it, or
// the width, changed.
type toolsPane struct {
	c      *common
	snap   classify.ToolUse
	synced int // the index's length at the snapshot; -1: none yet
	sel    int
	name   string // the selected tool's name, kept across snapshots
	top    int    // the first line of the definition shown
	width  int
	height int
	// def is the selected tool's definition laid out, for defFor.
	def    []capsLine
	defFor toolsLaid
}

// toolsLaid says what a layout of a definition was made from: the tool,
// its definition's bytes (the tracker never changes them) and the width.
type toolsLaid struct {
	name  string
	def   *byte
	n     int
	width int
}

// The bounds of a definition laid out: the description's cells, and the
// lines of each schema (the rest is read in the frame, enter).
const (
	toolsDescription = 4000
	toolsJSONLines   = 400
)

func newToolsPane(c *common) *toolsPane { return &toolsPane{c: c, synced: -1} }

func (p *toolsPane) SetSize(w, h int) { p.width, p.height = w, h }

// sync takes the index's snapshot when the index grew since the last,
// keeping the selected tool selected.
func (p *toolsPane) sync(x *sessions.Index) {
	n := x.Len()
	if n == p.synced {
		return
	}
	p.synced = n
	p.take(x.ToolUse())
}

// take shows the snapshot u, the tool selected before still selected
// wherever it now is (the first when it is gone).
func (p *toolsPane) take(u classify.ToolUse) {
	p.snap, p.sel = u, 0
	for i, t := range p.snap.Tools {
		if t.Name == p.name {
			p.sel = i
			break
		}
	}
	p.pick(p.sel)
}

// pick selects tool i.
func (p *toolsPane) pick(i int) {
	p.sel = min(max(i, 0), max(len(p.snap.Tools)-1, 0))
	name := ""
	if p.sel < len(p.snap.Tools) {
		name = p.snap.Tools[p.sel].Name
	}
	if name != p.name {
		p.name, p.top = name, 0
	}
}

// Update takes the pane's messages: its keys while it shows, and the
// view's tick.
func (p *toolsPane) Update(msg tea.Msg) (intent, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return p.key(msg), nil
	case indexTickMsg:
		p.sync(msg.x)
	}
	return intent{}, nil
}

func (p *toolsPane) key(msg tea.KeyMsg) intent {
	k := p.c.keys
	page := max(p.defRows()-1, 1)
	switch {
	case key.Matches(msg, k.Up):
		p.pick(p.sel - 1)
	case key.Matches(msg, k.Down):
		p.pick(p.sel + 1)
	case key.Matches(msg, k.Top):
		p.pick(0)
	case key.Matches(msg, k.Bottom):
		p.pick(len(p.snap.Tools) - 1)
	case key.Matches(msg, k.PageUp):
		p.top = max(p.top-page, 0)
	case key.Matches(msg, k.PageDown):
		p.top = min(p.top+page, max(len(p.selectedLines())-p.defRows(), 0))
	case key.Matches(msg, k.ToolCall):
		t, ok := p.selected()
		if !ok {
			return intent{kind: intentStatus, text: "no tool to call: the session has listed none"}
		}
		return intent{kind: intentCallTool, tool: &inject.Tool{Name: t.Name, Schema: classify.Member(t.Def, "inputSchema")}}
	case key.Matches(msg, k.Open):
		t, ok := p.selected()
		switch {
		case ok && t.Seq != 0:
			return intent{kind: intentJumpSeq, seq: t.Seq}
		case ok && t.LastCall != 0:
			return intent{kind: intentJumpSeq, seq: t.LastCall}
		}
		return intent{kind: intentStatus, text: "this tool names no frame"}
	}
	return intent{}
}

// selected is the selected tool.
func (p *toolsPane) selected() (classify.ToolStat, bool) {
	if p.sel < len(p.snap.Tools) {
		return p.snap.Tools[p.sel], true
	}
	return classify.ToolStat{}, false
}

// ShortHelp is the footer while the pane shows.
func (p *toolsPane) ShortHelp() []key.Binding {
	k := p.c.keys
	return []key.Binding{k.Up, k.Down, k.LeaveTools, k.ToolCall, k.GoToFrame, k.ToolScroll, k.Help, k.Quit}
}

// FullHelp is the ? screen while the pane shows: the view's keys.
func (p *toolsPane) FullHelp() [][]key.Binding { return p.c.keys.FullHelp() }

// listRows is how many tools the list shows: about two fifths of the
// pane, at least three, the definition getting the rest (a pane too low
// for its title, column heads and three tools shows what fits).
func (p *toolsPane) listRows() int {
	n := len(p.snap.Tools)
	return min(max(min(n, (p.height-3)*2/5), min(n, 3)), max(p.height-2, 0))
}

// defRows is how many lines of the selected tool show under the title,
// the column heads, the list and the tool's own heading.
func (p *toolsPane) defRows() int { return max(p.height-3-p.listRows(), 0) }

func (p *toolsPane) View() string {
	s := p.c.styles
	u := &p.snap
	var b strings.Builder
	title := s.Title.Render("Tools")
	switch {
	case !u.Listed && len(u.Tools) == 0:
		return truncate(title+s.Dim.Render(" of the session"), p.width) + "\n" +
			s.Dim.Render(truncate("no tools/list answered yet: the tools show once the host lists them (an MCP session)", p.width))
	case u.Listed && len(u.Tools) == 0:
		return truncate(title+s.Dim.Render(" of the session"), p.width) + "\n" +
			truncate(fmt.Sprintf("#%d the server lists 0 tools (tools/list result); enter goes there", u.ListSeq), p.width)
	}
	b.WriteString(truncate(title+s.Dim.Render(" "+p.summary()), p.width))
	if p.height < 2 {
		return b.String()
	}
	nameW, noteW := p.columns()
	b.WriteString("\n" + s.Dim.Render(truncate(fmt.Sprintf("%-*s %6s %6s %7s %8s %8s %s", nameW, "tool", "calls", "errors", "isError", "p50", "p99", "drift"), p.width)))
	rows := p.listRows()
	first := min(max(p.sel-rows+1, 0), max(len(u.Tools)-rows, 0))
	for i := first; i < first+rows && i < len(u.Tools); i++ {
		t := &u.Tools[i]
		note := toolNote(t)
		line := fmt.Sprintf("%-*s %6d %6d %7d %8s %8s %s", nameW, truncate(esc(t.Name), nameW), t.Calls, t.Errors, t.Failed,
			fmtLatency(t.P50), fmtLatency(t.P99), truncate(note, noteW))
		line = truncate(line, p.width)
		if i == p.sel {
			line = s.Selected.Render(padRight(line, p.width))
		} else if note != "" {
			line = s.SevWarn.Render(line)
		}
		b.WriteString("\n" + line)
	}
	if dr := p.defRows(); dr > 0 {
		lines := p.selectedLines()
		top := min(p.top, max(len(lines)-dr, 0))
		head := "── " + esc(p.name) + " "
		if len(lines) > dr {
			head += fmt.Sprintf("(lines %d–%d of %d; pgup/pgdn) ", top+1, min(top+dr, len(lines)), len(lines))
		}
		b.WriteString("\n" + s.Title.Render(truncate(head+strings.Repeat("─", max(p.width-ansi.StringWidth(head), 0)), p.width)))
		for i := top; i < len(lines) && i < top+dr; i++ {
			b.WriteString("\n" + truncate(lines[i].styled(&s), p.width))
		}
	}
	return b.String()
}

// summary says how many tools the list has, its frame, and where the
// selection is.
func (p *toolsPane) summary() string {
	u := &p.snap
	listed := 0
	for _, t := range u.Tools {
		if t.Def != nil {
			listed++
		}
	}
	text := fmt.Sprintf("%d listed", listed)
	if u.Listed {
		text += fmt.Sprintf(" (tools/list result #%d)", u.ListSeq)
	} else {
		text += " (no tools/list answered yet)"
	}
	if n := len(u.Tools) - listed; n > 0 {
		text += fmt.Sprintf(", %d called but not listed", n)
	}
	if u.Stale {
		text += ", the server said the list changed since"
	}
	if u.Untracked > 0 {
		text += fmt.Sprintf(", %d calls of tools past those followed", u.Untracked)
	}
	return text + fmt.Sprintf("; tool %d of %d", p.sel+1, len(u.Tools))
}

// columns are the widths of the tool's name and of the drift note.
func (p *toolsPane) columns() (nameW, noteW int) {
	const fixed = 1 + 6 + 1 + 6 + 1 + 7 + 1 + 8 + 1 + 8 + 1
	nameW = min(max(p.width-fixed-12, 10), 40)
	return nameW, max(p.width-fixed-nameW, 1)
}

// toolNote is what the drift column says of a tool: unlisted, changed
// in the session, or off the baseline.
func toolNote(t *classify.ToolStat) string {
	var notes []string
	if t.Def == nil && !t.Baseline.Removed {
		notes = append(notes, "unlisted")
	}
	if t.Drift > 0 {
		notes = append(notes, "changed ×"+strconv.Itoa(t.Drift))
	}
	switch b := t.Baseline; {
	case b.Added:
		notes = append(notes, "not in baseline")
	case b.Removed:
		notes = append(notes, "removed since baseline")
	case b.Fields != nil:
		notes = append(notes, "≠ baseline")
	}
	return strings.Join(notes, ", ")
}

// selectedLines are the lines under the list: what the selected tool
// did, its drift, then its definition (laid out once for each tool,
// definition and width).
func (p *toolsPane) selectedLines() []capsLine {
	t, ok := p.selected()
	if !ok {
		return nil
	}
	var lines []capsLine
	add := func(kind capsKind, text string) {
		for i, l := range strings.Split(ansi.Wrap(text, max(p.width, 8), " "), "\n") {
			if i > 0 {
				l = "  " + l
			}
			lines = append(lines, capsLine{text: l, kind: kind})
		}
	}
	switch {
	case t.Def != nil:
		add(capsNote, fmt.Sprintf("#%d listed it (tools/list result): enter goes there; i calls it", t.Seq))
	case t.Baseline.Removed:
		add(capsWarn, fmt.Sprintf("#%d: in the baseline accepted for this server, and no longer listed", t.BaselineSeq))
	default:
		add(capsWarn, fmt.Sprintf("#%d its latest call (enter goes there); the latest tools/list does not list it (unknown-tool)", t.LastCall))
	}
	use := fmt.Sprintf("calls %d · answered %d · errors %d (JSON-RPC error) · isError %d (the tool failed)", t.Calls, t.Answered, t.Errors, t.Failed)
	if t.P50 > 0 {
		use += " · p50 " + fmtLatency(t.P50) + " · p99 " + fmtLatency(t.P99) + " (first request to final answer)"
	}
	add(capsText, use)
	if t.Drift > 0 {
		text := fmt.Sprintf("#%d changed its %s since an earlier tools/list of this session", t.DriftSeq, strings.Join(t.DriftFields, ", "))
		if t.Drift > 1 {
			text += fmt.Sprintf(" (%d times in all)", t.Drift)
		}
		add(capsWarn, text)
	}
	switch b := t.Baseline; {
	case b.Added:
		add(capsWarn, fmt.Sprintf("#%d listed, and not in the baseline accepted for this server: a host that trusts it never approved it", t.BaselineSeq))
	case b.Fields != nil:
		add(capsWarn, fmt.Sprintf("#%d changed its %s since the baseline accepted for this server", t.BaselineSeq, strings.Join(b.Fields, ", ")))
	}
	p.layDef()
	return append(lines, p.def...)
}

// layDef lays out the selected tool's definition, unless it is laid out
// already for this tool, definition and width.
func (p *toolsPane) layDef() {
	t, _ := p.selected()
	at := toolsLaid{name: t.Name, n: len(t.Def), width: p.width}
	if len(t.Def) > 0 {
		at.def = &t.Def[0]
	}
	if at == p.defFor && p.def != nil {
		return
	}
	p.defFor = at
	p.def = p.def[:0:0]
	if t.Def == nil {
		return
	}
	w := max(p.width-2, 8)
	text := func(kind capsKind, s string) {
		for _, l := range strings.Split(ansi.Wrap(s, w, " "), "\n") {
			p.def = append(p.def, capsLine{text: "  " + l, kind: kind})
		}
	}
	heading := func(s string) { p.def = append(p.def, capsLine{text: s, kind: capsHeading}) }
	if title, ok := classify.StringValue(classify.Member(t.Def, "title")); ok {
		text(capsText, "title “"+esc(title)+"”")
	}
	if d, ok := classify.StringValue(classify.Member(t.Def, "description")); ok && d != "" {
		heading("Description")
		text(capsText, classify.EscapeString(d, toolsDescription))
	}
	for _, part := range []string{"inputSchema", "outputSchema", "annotations"} {
		raw := classify.Member(t.Def, part)
		if raw == nil {
			continue
		}
		heading(part)
		lay := prettyPrefix(raw, w, toolsJSONLines)
		for _, l := range lay.lines {
			p.def = append(p.def, capsLine{text: "  " + l, kind: capsJSON})
		}
		if lay.used < len(raw) {
			p.def = append(p.def, capsLine{text: "  … the rest is in the frame (enter)", kind: capsNote})
		}
	}
}
