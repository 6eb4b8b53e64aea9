package tui

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/alecthomas/chroma/v2"
	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/tap"
)

// previewInline is the largest text whose preview is computed in Update;
// a larger one is previewed in a command, so typing stays quick.
const previewInline = 64 << 10

// composer is the pane that writes a frame to inject into a live tap: a
// text area, the direction the frame goes, and a preview of how its
// receiver reads it. Every key goes to it while it is open.
type composer struct {
	c       *common
	session int // the view's id, on previews computed off Update
	ta      textarea.Model
	dir     classify.Direction
	opts    inject.Options // profile, ids; Dir and Framing are set from dir
	// framingOf is the framing of the stream toward a direction's
	// receiver (sessionView.injectFraming; nil: newline framing).
	framingOf func(classify.Direction) classify.Framing
	gen       int    // of the text, for previews computed off Update
	text      string // the text the preview is of
	frames    []inject.Frame
	parse     error
	preview   inject.Preview
	ready     bool   // the preview is of text
	warn      string // why a send needs a second ctrl+s (see warning), of the preview
	armed     bool   // the warning was shown: a second send sends
	// noteText is the composer's feedback, kept until the text changes.
	noteText string
	// picking: a list shows in place of the text (the catalog, or the
	// templates of the session), narrowed by filter to shown; sel is the
	// entry selected, in shown.
	picking   pickList
	filter    listFilter
	shown     []int
	sel       int
	catalog   []inject.Entry
	templates []inject.Template
	// forward sends the answer to the next request on to the other side
	// instead of capturing it (ctrl+o; reset by a send).
	forward bool
	// target, when set, is the held frame the text is for: a send edits
	// it or answers it (see holdTarget) instead of injecting.
	target *holdTarget
	// given is the view's set of ids its templates gave out (see
	// sessionView.given).
	given map[string]bool
	// The drawn text: its cells, coloured, for the text it is of, and
	// the first row shown.
	es      *editStyles
	cells   [][]cell
	cellsOf string
	top     int
	width   int
	height  int
}

// pickList is the list the composer shows in place of its text.
type pickList int

const (
	pickNone pickList = iota
	pickCatalog
	pickTemplates
)

func newComposer(c *common, session int, dir classify.Direction, opts inject.Options, framingOf func(classify.Direction) classify.Framing, given map[string]bool) *composer {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = ""
	ta.Placeholder = `{"jsonrpc":"2.0","id":"rpctap-1","method":"ping"}`
	ta.CharLimit = 0
	ta.MaxHeight = 0
	// The composer's own keys come first; the text area keeps the rest.
	ta.KeyMap.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	ta.KeyMap.DeleteAfterCursor = key.NewBinding(key.WithKeys())
	ta.Cursor.SetMode(cursor.CursorStatic)
	ta.Focus()
	p := &composer{c: c, session: session, ta: ta, dir: dir, opts: opts, framingOf: framingOf, catalog: inject.Catalog(), given: given, es: newEditStyles(c), filter: newListFilter(c)}
	return p
}

// fill replaces the text (a template, a catalog entry) and its direction.
func (p *composer) fill(text string, dir classify.Direction) tea.Cmd {
	p.ta.SetValue(text)
	if dir == classify.H2S || dir == classify.S2H {
		p.dir = dir
	}
	return p.changed()
}

// SetSize lays the composer out in w×h cells: the text area, then the
// direction and the preview lines.
func (p *composer) SetSize(w, h int) {
	p.width, p.height = w, h
	p.ta.SetWidth(max(w, 1))
	p.ta.SetHeight(max(h-composerLines, 1))
}

// composerLines are the lines under the text area: direction, preview,
// warning.
const composerLines = 3

// holdTarget is the held frame a composer's text is for: in its place
// (edit), or answering it in its receiver's place (reply).
type holdTarget struct {
	n     int64
	reply bool
}

// holdSend is a composer's frame for a held one.
type holdSend struct {
	target holdTarget
	body   []byte
}

// An injectRequest is the frames to send to a live tap, a plain value.
type injectRequest struct {
	dir    classify.Direction
	frames []injectFrame
}

// An injectFrame is one write to the tap.
type injectFrame struct {
	bytes   []byte
	raw     bool   // the bytes as they are (the text used raw escapes)
	force   bool   // a partial frame, confirmed
	capture bool   // a request whose answer the tap keeps (the view's default)
	id      string // the request's id, for the status line
}

// Update takes a message of the composer's: its preview, the session's
// templates, the text back from the editor, and keys.
func (p *composer) Update(msg tea.Msg) (intent, tea.Cmd) {
	switch msg := msg.(type) {
	case previewMsg:
		p.applyPreview(msg)
	case templatesMsg:
		if msg.err != nil {
			p.note(msg.err.Error())
		} else {
			p.setTemplates(msg.templates)
		}
	case editorDoneMsg:
		if msg.err != nil {
			return intent{kind: intentStatus, text: msg.err.Error()}, nil
		}
		return intent{kind: intentStatus}, p.fill(strings.TrimSuffix(msg.text, "\n"), 0)
	case tea.KeyMsg:
		return p.key(msg)
	}
	return intent{}, nil
}

// key handles a key: the composer's own, else the text area's.
func (p *composer) key(msg tea.KeyMsg) (intent, tea.Cmd) {
	k := p.c.keys
	if p.picking != pickNone {
		return p.pickKey(msg)
	}
	switch {
	case key.Matches(msg, k.Interrupt):
		return intent{kind: intentQuit}, nil
	case key.Matches(msg, k.ComposeCatalog):
		p.openList(pickCatalog)
		return intent{}, nil
	case key.Matches(msg, k.ComposeTemplates):
		p.note("reading the session for templates…")
		return intent{kind: intentTemplates}, nil
	case key.Matches(msg, k.ComposeForward):
		p.forward = !p.forward
		return intent{}, nil
	case key.Matches(msg, k.ComposeEditor):
		return intent{kind: intentEdit}, nil
	case key.Matches(msg, k.ComposeClose):
		return intent{kind: intentCloseComposer}, nil
	case key.Matches(msg, k.ComposeDir):
		p.dir = p.dir.Opposite()
		return intent{}, p.changed()
	case key.Matches(msg, k.ComposeSend):
		return p.send(), nil
	}
	before := p.ta.Value()
	var cmd tea.Cmd
	p.ta, cmd = p.ta.Update(msg)
	if p.ta.Value() != before {
		return intent{}, tea.Batch(cmd, p.changed())
	}
	return intent{}, cmd
}

// openList shows a list in place of the text, unfiltered, its first
// entry selected.
func (p *composer) openList(l pickList) {
	p.picking, p.sel = l, 0
	p.filter.reset()
	p.refilter()
}

// refilter finds the entries of the list that pass the filter.
func (p *composer) refilter() {
	p.shown = p.shown[:0]
	n := len(p.catalog)
	if p.picking == pickTemplates {
		n = len(p.templates)
	}
	for i := range n {
		text := ""
		if p.picking == pickTemplates {
			text = p.templates[i].Name + " " + string(p.templates[i].Body)
		} else {
			text = p.catalog[i].Name + " " + p.catalog[i].Rule
		}
		if p.filter.matches(text) {
			p.shown = append(p.shown, i)
		}
	}
	p.sel = max(min(p.sel, len(p.shown)-1), 0)
}

// pickKey handles a key while a list shows: move, filter, pick, or go
// back to the text.
func (p *composer) pickKey(msg tea.KeyMsg) (intent, tea.Cmd) {
	k := p.c.keys
	if key.Matches(msg, k.Interrupt) {
		return intent{kind: intentQuit}, nil
	}
	if took, changed := p.filter.key(msg); took {
		if changed {
			p.refilter()
		}
		return intent{}, nil
	}
	n := p.listLen()
	switch {
	case key.Matches(msg, k.Help):
		return intent{kind: intentHelp}, nil
	case key.Matches(msg, k.ComposeClose), key.Matches(msg, k.ComposeCatalog) && p.picking == pickCatalog,
		key.Matches(msg, k.ComposeTemplates) && p.picking == pickTemplates:
		p.picking = pickNone
		p.filter.reset()
	case key.Matches(msg, k.Up):
		p.sel = max(p.sel-1, 0)
	case key.Matches(msg, k.Down):
		p.sel = max(min(p.sel+1, n-1), 0)
	case key.Matches(msg, k.Open) && n > 0:
		list, i := p.picking, p.shown[p.sel]
		p.picking = pickNone
		p.filter.reset()
		if list == pickCatalog {
			e := p.catalog[i]
			return intent{kind: intentPick, pick: &e}, nil
		}
		t := p.templates[i]
		m := classify.Classify(t.Body, t.Dir, classify.JSONRPC)
		if m.HasID() {
			p.given[string(m.ID().Raw)] = true
		}
		cmd := p.fill(inject.FormatRaw([][]byte{t.Body}), t.Dir)
		p.note("template " + classify.EscapeString(t.Name, 60) + ": edit the placeholders, then ctrl+s")
		return intent{}, cmd
	}
	return intent{}, nil
}

// listLen is how many entries of the list show.
func (p *composer) listLen() int { return len(p.shown) }

// setTemplates shows the session's templates to pick from.
func (p *composer) setTemplates(ts []inject.Template) {
	p.templates = ts
	p.noteText = ""
	if len(ts) == 0 {
		p.note("no templates yet: the session has shown no method (a tools/list result gives one per tool)")
		return
	}
	p.openList(pickTemplates)
}

// listView lists the catalog's entries (with the direction each makes
// sense in and its rule) or the templates (with where each goes and its
// frame) around the selected one.
func (p *composer) listView() string {
	s := p.c.styles
	limit := max(p.height-composerLines, 1) // lines
	h := limit                              // of them, entries
	var lines []string
	total := len(p.catalog)
	if p.picking == pickTemplates {
		total = len(p.templates)
	}
	if f := p.filter.View(p.listLen(), total, p.width); f != "" {
		lines = append(lines, f)
		h = max(h-1, 1)
	}
	n := p.listLen()
	first := min(max(p.sel-h/2, 0), max(n-h, 0))
	nameW := 0
	for _, t := range p.templates {
		nameW = max(nameW, min(len(classify.EscapeString(t.Name, 80)), 36))
	}
	if n == 0 && p.filter.active() {
		lines = append(lines, s.Dim.Render("  none matches the filter"))
	}
	for j := first; j < n && len(lines) < limit; j++ {
		i := p.shown[j]
		var line string
		if p.picking == pickTemplates {
			t := p.templates[i]
			line = fmt.Sprintf("%-*s %-4s %s", nameW, truncate(classify.EscapeString(t.Name, 80), nameW), t.Dir, classify.Escape(t.Body, 400))
		} else {
			e := p.catalog[i]
			dir := "either"
			if e.Dir != inject.Either {
				dir = e.Dir.String()
			}
			line = fmt.Sprintf("%-24s %-6s %s", e.Name, dir, e.Rule)
		}
		line = truncate(line, p.width)
		if j == p.sel {
			line = s.Selected.Render(line)
		}
		lines = append(lines, line)
	}
	for len(lines) < limit {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// send turns the text into frames to send, or says why not: a frame the
// tap cannot take, a preview not ready, a warning (or a partial frame)
// not yet confirmed. A request whose id the view gave out and that was
// sent already gets a fresh id now, and the text shows it.
func (p *composer) send() intent {
	switch {
	case strings.TrimSpace(p.ta.Value()) == "":
		p.note("write a frame first, as in " + p.ta.Placeholder)
		return intent{}
	case !p.ready:
		p.note("the preview is not ready yet; press ctrl+s again in a moment")
		return intent{}
	case p.parse != nil:
		p.note("not sent: " + p.parse.Error())
		return intent{}
	case len(p.frames) == 0:
		p.note("write a frame first, as in " + p.ta.Placeholder)
		return intent{}
	}
	if w := p.warning(); w != "" && !p.armed {
		p.armed = true
		if p.preview.Partial != "" {
			p.note("ctrl+s again forces this partial frame: " + p.preview.Partial)
		} else {
			p.note("ctrl+s again sends it anyway: " + w)
		}
		return intent{}
	}
	if p.target != nil {
		// In place of a held frame, or its answer: one frame, with the
		// id as written (the reply carries the request's).
		if len(p.frames) != 1 {
			p.note(fmt.Sprintf("held #%d takes one frame in its place; this text holds %d", p.target.n, len(p.frames)))
			return intent{}
		}
		p.armed, p.noteText = false, ""
		return intent{kind: intentHoldSend, hold: &holdSend{target: *p.target, body: p.frames[0].Body}}
	}
	frames := p.freshIDs()
	req := &injectRequest{dir: p.dir}
	if p.needsRaw(frames) {
		wire := inject.Wire(frames, p.framing())
		f := injectFrame{bytes: wire, raw: true, force: p.preview.Partial != ""}
		if pieces, _ := inject.SplitWire(wire, p.framing()); len(pieces) == 1 && !pieces[0].Open {
			f.id, f.capture = inject.RequestID(pieces[0].Body(), p.dir)
		}
		req.frames = []injectFrame{f}
	} else {
		for _, fr := range frames {
			f := injectFrame{bytes: fr.Body}
			f.id, f.capture = inject.RequestID(fr.Body, p.dir)
			req.frames = append(req.frames, f)
		}
	}
	if p.forward {
		for i := range req.frames {
			req.frames[i].capture = false
		}
	}
	for _, fr := range frames { // sent: a second send gets fresh ids
		m := classify.Classify(fr.Body, p.dir, classify.JSONRPC)
		p.opts.IDs.See(&m)
	}
	p.armed, p.noteText, p.forward = false, "", false
	return intent{kind: intentSend, send: req}
}

// framing is the framing of the stream the frames go on, in their
// direction.
func (p *composer) framing() classify.Framing {
	if p.framingOf != nil && p.framingOf(p.dir) == classify.FramingLSP {
		return classify.FramingLSP
	}
	return classify.FramingNDJSON
}

// needsRaw says the frames cannot be sent one by one with the framing
// the tap adds: one ends in \c, or holds a line feed on ndjson.
func (p *composer) needsRaw(frames []inject.Frame) bool {
	for _, f := range frames {
		if f.Raw || p.framing() == classify.FramingNDJSON && bytes.IndexByte(f.Body, '\n') >= 0 {
			return true
		}
	}
	return false
}

// freshIDs gives each request whose id the view gave out, and which was
// sent already, a fresh id, in the frames and in the text.
func (p *composer) freshIDs() []inject.Frame {
	frames, renamed := p.opts.IDs.Refresh(p.frames, p.dir, p.given)
	if len(renamed) > 0 {
		text := p.ta.Value()
		for _, r := range renamed {
			text = strings.Replace(text, r[0], r[1], 1)
		}
		p.ta.SetValue(text)
		p.changed()
	}
	return frames
}

// reused names the first request whose id the view gave out and which
// was sent already: ctrl+s gives it a fresh one.
func (p *composer) reused() string {
	if id := p.opts.IDs.Reused(p.frames, p.dir, p.given); id != "" {
		return classify.Escape([]byte(id), 40)
	}
	return ""
}

// note sets the composer's line of feedback.
func (p *composer) note(s string) { p.noteText = s }

// changed recomputes the preview of the text: here for a small text, in
// a command for a large one.
func (p *composer) changed() tea.Cmd {
	p.gen++
	p.armed = false
	p.noteText = ""
	text, gen, o, session := p.ta.Value(), p.gen, p.opts, p.session
	o.Dir, o.Framing = p.dir, p.framing()
	if len(text) <= previewInline {
		p.applyPreview(computePreview(gen, text, o))
		return nil
	}
	p.ready = false
	return func() tea.Msg {
		msg := computePreview(gen, text, o)
		msg.session = session
		return msg
	}
}

// previewMsg is a preview computed off Update.
type previewMsg struct {
	session int
	gen     int
	text    string
	frames  []inject.Frame
	parse   error
	preview inject.Preview
}

func computePreview(gen int, text string, o inject.Options) previewMsg {
	frames, err := inject.ParseRaw(text)
	msg := previewMsg{gen: gen, text: text, frames: frames, parse: err}
	if err == nil && len(frames) > 0 {
		msg.preview = inject.PreviewFrames(frames, o)
	}
	return msg
}

// applyPreview takes a preview in, unless the text changed since.
func (p *composer) applyPreview(msg previewMsg) {
	if msg.gen != p.gen {
		return
	}
	p.text, p.frames, p.parse, p.preview, p.ready = msg.text, msg.frames, msg.parse, msg.preview, true
	p.warn = p.findWarning()
}

// View draws the text area, the direction, the preview and the warning.
func (p *composer) View() string {
	s := p.c.styles
	dir := "→ to the server, as if from the host"
	if p.dir == classify.S2H {
		dir = "← to the host, as if from the server"
	}
	answer := s.Dim.Render(" · answer captured (ctrl+o)")
	if p.forward {
		answer = s.SevWarn.Render(" · answer FORWARDED to the " + inject.Sender(p.dir) + " (ctrl+o)")
	}
	top := p.editorView()
	if p.picking != pickNone {
		top = p.listView()
	}
	lines := []string{
		top,
		truncate(s.Title.Render("inject ")+dir+answer, p.width),
		truncate(p.previewLine(), p.width),
		truncate(p.warningLine(), p.width),
	}
	return lipgloss.JoinVertical(lipgloss.Left, lines...)
}

// previewLine says how the receiver reads the frames: kind, findings, the
// strict answer, the framing.
func (p *composer) previewLine() string {
	s := p.c.styles
	switch {
	case strings.TrimSpace(p.ta.Value()) == "":
		return s.Dim.Render("preview: write a frame (one per line; \\xHH is a byte)")
	case !p.ready:
		return s.Dim.Render("preview: reading the frame…")
	case p.parse != nil:
		return s.SevError.Render("✗ " + p.parse.Error())
	case len(p.preview.Frames) == 0:
		return s.Dim.Render("preview: no frame")
	}
	var parts []string
	parts = append(parts, p.preview.Kinds())
	var codes []string
	for _, r := range p.preview.Frames {
		for _, f := range r.Message.Findings {
			codes = append(codes, f.Code.String())
		}
	}
	if len(codes) > 0 {
		parts = append(parts, "findings "+strings.Join(codes, ","))
	}
	// No error is owed: a request still gets its answer, and saying it
	// "owes no answer" read as if it needed none.
	answer := "a strict " + inject.Receiver(p.dir) + " sends no error back"
	for _, r := range p.preview.Frames {
		if r.Answer != nil {
			answer = "a strict " + inject.Receiver(p.dir) + " answers " + classify.EscapeString(string(r.Answer), 80)
			break
		}
	}
	parts = append(parts, answer, p.preview.Frames[len(p.preview.Frames)-1].Framed())
	return s.Dim.Render("preview: ") + strings.Join(parts, " · ")
}

// warning is why a send asks to be confirmed by a second ctrl+s, or "",
// found when the preview comes in.
func (p *composer) warning() string { return p.warn }

// findWarning is why frames with their preview need a second ctrl+s: a
// frame a strict receiver must refuse, or a partial one (the preview's
// warning); a frame with an error finding (its receiver reads it as
// broken, as a null id under MCP); a frame that still holds a template's
// placeholder.
func (p *composer) findWarning() string {
	pv := &p.preview
	switch {
	case pv.Warning != "":
		return pv.Warning
	case pv.FirstError != nil:
		f := pv.FirstError.Finding
		return fmt.Sprintf("%s has an error (%s): %s", inject.FrameName(pv.FirstError.Frame, len(pv.Frames)), f.Code, f.Message)
	case pv.Placeholder != nil:
		// Short: with the note's "ctrl+s again sends it anyway: "
		// it fits 80 columns.
		where := ""
		if len(p.frames) > 1 {
			where = fmt.Sprintf("frame %d: ", pv.Placeholder.Frame+1)
		}
		return fmt.Sprintf("%s%s still at %s", where, inject.StringPlaceholder, pv.Placeholder.Path)
	}
	return ""
}

// warningLine is the feedback, the warning or a collision.
func (p *composer) warningLine() string {
	s := p.c.styles
	switch {
	case p.noteText != "":
		return s.SevWarn.Render(p.noteText)
	case p.ready && p.warning() != "":
		return s.SevWarn.Render("⚠ " + p.warning())
	case p.ready && p.reused() != "":
		return s.Dim.Render("the id " + p.reused() + " was sent already: ctrl+s sends this with a fresh one")
	case p.ready && len(p.preview.Collisions) > 0:
		return s.SevWarn.Render("⚠ " + p.preview.Collisions[0])
	}
	return ""
}

// editorView draws the text, coloured as JSON, with peer text escaped;
// the placeholder when there is none. A large text is drawn from a
// window around the cursor only, so that a key typed into a frame of
// megabytes costs no more than one into a small one.
func (p *composer) editorView() string {
	text := p.ta.Value()
	if text == "" {
		return p.ta.View()
	}
	h := max(p.height-composerLines, 1)
	li := p.ta.LineInfo()
	row, col := p.ta.Line(), li.StartColumn+li.ColumnOffset
	if len(text) > previewInline {
		win, wrow, wcol := editWindow(text, row, col, p.width, h)
		out, _ := drawEditor(highlightLines(win, p.es, nil), wrow, wcol, p.width, h, 0, p.es, p.c.styles.Selected)
		return out
	}
	if p.cells == nil || p.cellsOf != text {
		p.cells, p.cellsOf = highlightLines(text, p.es, p.lexer()), text
	}
	out, top := drawEditor(p.cells, row, col, p.width, h, p.top, p.es, p.c.styles.Selected)
	p.top = top
	return out
}

// editWindow cuts from text the lines around line row that a w×h window
// can show, and of each long line the runes around the cursor (col on
// row) or its start; it returns them with the cursor's place in them.
func editWindow(text string, row, col, w, h int) (string, int, int) {
	lines := strings.Split(text, "\n")
	first := max(row-h, 0)
	last := min(row+h, len(lines)-1)
	span := max(w, 1) * h // runes a window shows at most
	var out []string
	wrow, wcol := row-first, col
	for i := first; i <= last; i++ {
		line := lines[i]
		if len(line) <= span {
			out = append(out, line)
			continue
		}
		r := []rune(line)
		from := 0
		if i == row {
			// Whole rows before the cursor, so that wrapping keeps the
			// columns it has in the full line.
			from = max(col-span+max(w, 1), 0) / max(w, 1) * max(w, 1)
			wcol = col - from
		}
		out = append(out, string(r[from:min(from+span, len(r))]))
	}
	return strings.Join(out, "\n"), wrow, wcol
}

func (p *composer) lexer() chroma.Lexer {
	if p.c.hl == nil {
		return nil
	}
	return p.c.hl.lexer
}

// ShortHelp is the footer while the composer is open.
func (p *composer) ShortHelp() []key.Binding {
	k := p.c.keys
	switch {
	case p.picking != pickNone && p.filter.typing:
		return p.filter.ShortHelp()
	case p.picking != pickNone && p.filter.active():
		return []key.Binding{k.Up, k.Down, k.Open, k.Filter, k.ClearFilter, k.Help}
	case p.picking != pickNone:
		return []key.Binding{k.Up, k.Down, k.Open, k.ComposeClose, k.Filter, k.Help}
	}
	// ctrl+o shows on the direction line; at 80 columns the rest fit
	// but for the editor.
	return []key.Binding{k.ComposeSend, k.ComposeClose, k.ComposeDir, k.ComposeTemplates, k.ComposeCatalog, k.ComposeEditor}
}

// FullHelp is the ? screen over a list: its keys.
func (p *composer) FullHelp() [][]key.Binding {
	k := p.c.keys
	return [][]key.Binding{{k.Up, k.Down, k.Open}, {k.Filter, k.ClearFilter, k.ComposeClose, k.Interrupt}}
}

// injectDoneMsg is what a live tap answered to an injection.
type injectDoneMsg struct {
	session int
	text    string
}

// injectCmd sends the frames to the tap at socket, one after another, and
// says what happened. It copies what it needs: no model is read. A
// request's answer is captured with a kept capture: the tap holds it
// from the other side however late it comes, and records it, and the
// view shows it paired with the request; no one waits for it here.
func injectCmd(session int, socket string, req injectRequest) tea.Cmd {
	return func() tea.Msg {
		captured, forwarded := 0, 0
		var last string
		for i, f := range req.frames {
			rep, err := tap.SendInjectWith(socket, tap.InjectRequest{Dir: req.dir.String(), Frame: f.bytes, Raw: f.raw, Force: f.force, Capture: f.capture, Keep: true})
			which := "the frame"
			if len(req.frames) > 1 {
				which = fmt.Sprintf("frame %d of %d", i+1, len(req.frames))
			}
			switch {
			case err != nil:
				return injectDoneMsg{session, fmt.Sprintf("%s was not sent: %v", which, err)}
			case !rep.OK:
				return injectDoneMsg{session, fmt.Sprintf("the tap refused %s: %s", which, classify.EscapeString(rep.Error, 0))}
			}
			switch {
			case f.capture:
				captured++
				last = f.id
			case f.id != "":
				forwarded++
				last = f.id
			}
		}
		what := "sent the frame"
		if len(req.frames) > 1 {
			what = fmt.Sprintf("sent %d frames", len(req.frames))
		} else if last != "" {
			what = "sent " + classify.EscapeString(last, 40)
		}
		what += " to the " + inject.Receiver(req.dir)
		switch {
		case captured > 0 && forwarded == 0:
			what += "; its answer is captured (shown paired, not forwarded)"
		case forwarded > 0:
			what += "; its answer goes on to the " + inject.Sender(req.dir)
		}
		return injectDoneMsg{session, what}
	}
}
