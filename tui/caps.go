package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// capsPane shows what the session's peers said of themselves: who each
// is, the revisions in force, the capabilities each declared (for MCP
// 2026-07-28, what the requests carried) and for LSP the server's
// dynamic registrations. Each line names the frame it came from; enter
// goes there. It takes the index's snapshot when the index grew, and
// lays it out again only then or when its width changed.
type capsPane struct {
	c      *common
	snap   classify.Capabilities
	synced int // the index's length at the snapshot; -1: none yet
	lines  []capsLine
	laidW  int
	sel    int
	width  int
	height int
}

// capsLine is one line of the pane: its text (escaped already), how it
// is drawn, and the frame it came from (0: none).
type capsLine struct {
	text string
	kind capsKind
	seq  int64
}

type capsKind uint8

const (
	capsText    capsKind = iota
	capsHeading          // a part's title
	capsNote             // said of the part, dimmed
	capsWarn             // what the user should notice (mixed eras, requests that differ)
	capsJSON             // a line of declared capabilities
)

// styled is the line drawn as its kind is, in styles s.
func (l capsLine) styled(s *Styles) string {
	switch l.kind {
	case capsHeading:
		return s.Title.Render(l.text)
	case capsNote:
		return s.Dim.Render(l.text)
	case capsWarn:
		return s.SevWarn.Render(l.text)
	}
	return l.text
}

// capsJSONLines bounds the lines of each set of capabilities laid out;
// the rest is read in the frame itself (enter).
const capsJSONLines = 400

func newCapsPane(c *common) *capsPane { return &capsPane{c: c, synced: -1} }

func (p *capsPane) SetSize(w, h int) {
	p.width, p.height = w, h
	if w != p.laidW && p.synced >= 0 {
		p.layOut()
	}
}

// sync takes the index's snapshot when the index grew since the last.
func (p *capsPane) sync(x *sessions.Index) {
	if n := x.Len(); n != p.synced {
		p.synced = n
		p.snap = x.Capabilities()
		p.layOut()
	}
}

// Update takes the pane's messages: its keys while it shows, and the
// view's tick.
func (p *capsPane) Update(msg tea.Msg) (intent, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return p.key(msg), nil
	case indexTickMsg:
		p.sync(msg.x)
	}
	return intent{}, nil
}

func (p *capsPane) key(msg tea.KeyMsg) intent {
	k := p.c.keys
	last := max(len(p.lines)-1, 0)
	page := max(p.rows()-1, 1)
	switch {
	case key.Matches(msg, k.Up):
		p.sel = max(p.sel-1, 0)
	case key.Matches(msg, k.Down):
		p.sel = min(p.sel+1, last)
	case key.Matches(msg, k.PageUp):
		p.sel = max(p.sel-page, 0)
	case key.Matches(msg, k.PageDown):
		p.sel = min(p.sel+page, last)
	case key.Matches(msg, k.Top):
		p.sel = 0
	case key.Matches(msg, k.Bottom):
		p.sel = last
	case key.Matches(msg, k.Open):
		if p.sel < len(p.lines) && p.lines[p.sel].seq != 0 {
			return intent{kind: intentJumpSeq, seq: p.lines[p.sel].seq}
		}
		return intent{kind: intentStatus, text: "this line names no frame"}
	}
	return intent{}
}

// ShortHelp is the footer while the pane shows.
func (p *capsPane) ShortHelp() []key.Binding {
	k := p.c.keys
	return []key.Binding{k.Up, k.Down, k.LeaveCaps, k.GoToFrame, k.Help, k.Quit}
}

// FullHelp is the ? screen while the pane shows: the view's keys.
func (p *capsPane) FullHelp() [][]key.Binding { return p.c.keys.FullHelp() }

// rows is how many lines of the list show under the title.
func (p *capsPane) rows() int { return max(p.height-1, 1) }

func (p *capsPane) View() string {
	s := p.c.styles
	title := s.Title.Render("Capabilities") + s.Dim.Render(" of the session, as the peers said them; enter goes to the frame")
	if p.height < 2 {
		return truncate(title, p.width)
	}
	var b strings.Builder
	b.WriteString(truncate(title, p.width))
	rows := p.rows()
	more := len(p.lines) > rows
	if more {
		rows = max(rows-1, 1) // a line says where the list is
	}
	top := min(max(p.sel-rows+1, 0), max(len(p.lines)-rows, 0))
	for i := top; i < len(p.lines) && i < top+rows; i++ {
		text := truncate(p.lines[i].styled(&s), p.width)
		if i == p.sel {
			text = s.Selected.Render(padRight(text, p.width))
		}
		b.WriteString("\n" + text)
	}
	if more {
		b.WriteString("\n" + s.Dim.Render(truncate(fmt.Sprintf("lines %d–%d of %d; ↑/↓ pgup/pgdn scroll", top+1, min(top+rows, len(p.lines)), len(p.lines)), p.width)))
	}
	return b.String()
}

// layOut builds the lines from the snapshot at the pane's width.
func (p *capsPane) layOut() {
	p.laidW = p.width
	c := &p.snap
	seqW := len("#" + strconv.FormatInt(p.lastSeq(), 10))
	var lines []capsLine
	// A line longer than the pane goes on under itself.
	add := func(seq int64, kind capsKind, text string) {
		col := ""
		if seq != 0 {
			col = "#" + strconv.FormatInt(seq, 10)
		}
		for i, l := range strings.Split(ansi.Wrap(text, max(p.width-seqW-1, 8), " "), "\n") {
			if i > 0 {
				col, l = "", "  "+l
			}
			lines = append(lines, capsLine{text: fmt.Sprintf("%-*s %s", seqW, col, l), kind: kind, seq: seq})
		}
	}
	// Under a line, what belongs to its frame: enter goes there too.
	under := func(seq int64, kind capsKind, text string) {
		lines = append(lines, capsLine{text: strings.Repeat(" ", seqW+1) + text, kind: kind, seq: seq})
	}
	who := func(label string, im classify.Implementation) {
		if im.Seq == 0 {
			add(0, capsNote, label+" not named yet")
			return
		}
		text := label + " " + esc(im.Name)
		if im.Version != "" {
			text += " " + esc(im.Version)
		}
		if im.Title != "" {
			text += " “" + esc(im.Title) + "”"
		}
		add(im.Seq, capsText, text+" ("+im.From+")")
	}
	profile := c.Profile.String()
	add(0, capsNote, "profile "+profile)
	who(capsLabel("Host"), c.Client)
	who(capsLabel("Server"), c.Server)
	if c.Profile != classify.LSP {
		p.revisions(c, add)
	}
	declared := func(title string, d classify.Declared) {
		if d.Seq == 0 {
			return
		}
		add(d.Seq, capsHeading, title+" ("+d.From+")")
		lay := prettyPrefix(d.JSON, max(p.width-seqW-3, 8), capsJSONLines)
		for _, l := range lay.lines {
			under(d.Seq, capsJSON, "  "+l)
		}
		if lay.used < len(d.JSON) {
			under(d.Seq, capsNote, "  … the rest is in the frame (enter)")
		}
	}
	declared("Server capabilities", c.ServerCaps)
	if c.Profile == classify.LSP {
		p.registrations(c, add)
	}
	declared("Host capabilities", c.ClientCaps)
	if c.RequestCaps.Seq != 0 {
		declared("Host capabilities, the latest request's", c.RequestCaps)
		if c.CapsChanged != 0 {
			add(c.CapsChanged, capsWarn, "the requests differ: this one carried other capabilities than the one before it")
		} else {
			under(c.RequestCaps.Seq, capsNote, "no request carried other capabilities")
		}
	}
	if c.ServerCaps.Seq == 0 && c.ClientCaps.Seq == 0 && c.RequestCaps.Seq == 0 {
		add(0, capsNote, "no capabilities declared yet (they come with initialize, server/discover or a request's _meta)")
	}
	p.lines = lines
	p.sel = min(p.sel, max(len(lines)-1, 0))
}

// revisions lays out the MCP revisions in force: the handshake's, those
// server/discover offered, and those the requests carried.
func (p *capsPane) revisions(c *classify.Capabilities, add func(int64, capsKind, string)) {
	seen := false
	if c.AskedSeq != 0 {
		add(c.AskedSeq, capsText, capsLabel("Revision")+" "+esc(c.Asked)+" asked by the host (initialize request)")
		seen = true
	}
	if c.AnsweredSeq != 0 {
		add(c.AnsweredSeq, capsText, capsLabel("Revision")+" "+esc(c.Answered)+" answered by the server: the handshake's (initialize result)")
		seen = true
	}
	if c.OfferedSeq != 0 {
		var vs []string
		for _, v := range c.Offered {
			vs = append(vs, esc(v))
		}
		add(c.OfferedSeq, capsText, capsLabel("Offered")+" "+strings.Join(vs, ", ")+" (server/discover result)")
		seen = true
	}
	for _, r := range c.Carried {
		n := "1 request"
		if r.Requests != 1 {
			n = strconv.FormatInt(r.Requests, 10) + " requests"
		}
		add(r.First, capsText, capsLabel("Revision")+" "+esc(r.Version)+" carried by "+n+" (request _meta), the first")
		if r.Last != r.First {
			add(r.Last, capsNote, capsLabel("")+" the latest request that carried "+esc(r.Version))
		}
		seen = true
	}
	if c.CarriedOther > 0 {
		add(0, capsNote, fmt.Sprintf("%s and %d requests of other revisions", capsLabel(""), c.CarriedOther))
	}
	switch {
	case c.Mixed():
		add(0, capsWarn, "mixed: the session speaks more than one revision (a client that fell back); each exchange is judged by its own")
	case !seen:
		add(0, capsNote, capsLabel("Revision")+" none seen yet: no rule judges by revision")
	}
}

// registrations lays out the LSP server's dynamic registrations.
func (p *capsPane) registrations(c *classify.Capabilities, add func(int64, capsKind, string)) {
	if len(c.Registrations) == 0 {
		add(0, capsNote, "Dynamic registrations: none (client/registerCapability)")
		return
	}
	add(0, capsHeading, fmt.Sprintf("Dynamic registrations (%d, client/registerCapability)", len(c.Registrations)))
	for _, r := range c.Registrations {
		add(r.Seq, capsText, "  "+esc(r.Method)+"  id "+esc(r.ID))
	}
}

// lastSeq is the largest frame the snapshot names, for the width of the
// frame column.
func (p *capsPane) lastSeq() int64 {
	c := &p.snap
	n := max(c.Client.Seq, c.Server.Seq, c.AskedSeq, c.AnsweredSeq, c.OfferedSeq, c.ServerCaps.Seq, c.ClientCaps.Seq, c.RequestCaps.Seq, c.CapsChanged)
	for _, r := range c.Carried {
		n = max(n, r.Last)
	}
	for _, r := range c.Registrations {
		n = max(n, r.Seq)
	}
	return n
}

// capsLabel is a line's label, padded so that what follows lines up.
func capsLabel(s string) string { return fmt.Sprintf("%-8s", s) }

// esc is a peer's text as the pane shows it: escaped, and cut.
func esc(s string) string { return classify.EscapeString(s, 120) }
