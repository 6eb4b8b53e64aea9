package tui

import (
	"fmt"
	"strings"

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
	opts    inject.Options // framing, profile, ids; Dir is set from dir
	gen     int            // of the text, for previews computed off Update
	text    string         // the text the preview is of
	frames  []inject.Frame
	parse   error
	preview inject.Preview
	ready   bool // the preview is of text
	armed   bool // the warning was shown: a second send sends
	// noteText is the composer's feedback, kept until the text changes.
	noteText string
	// picking: the catalog's entries show in place of the text; sel is
	// the one selected.
	picking bool
	sel     int
	catalog []inject.Entry
	width   int
	height  int
}

func newComposer(c *common, session int, dir classify.Direction, opts inject.Options) *composer {
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
	p := &composer{c: c, session: session, ta: ta, dir: dir, opts: opts, catalog: inject.Catalog()}
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

// A composerIntent is what the composer asks the root to do.
type composerIntent struct {
	quit  bool // ctrl+c: no text holds it
	close bool
	pick  *inject.Entry // fill the composer with this catalog entry
	edit  bool          // open the text in $EDITOR
	send  *injectRequest
}

// An injectRequest is the frames to send to a live tap, a plain value.
type injectRequest struct {
	dir    classify.Direction
	frames [][]byte
}

// Update handles a key: the composer's own, else the text area's.
func (p *composer) Update(msg tea.KeyMsg) (composerIntent, tea.Cmd) {
	k := p.c.keys
	if p.picking {
		return p.pickKey(msg), nil
	}
	switch {
	case key.Matches(msg, k.Interrupt):
		return composerIntent{quit: true}, nil
	case key.Matches(msg, k.ComposeCatalog):
		p.picking = true
		return composerIntent{}, nil
	case key.Matches(msg, k.ComposeEditor):
		return composerIntent{edit: true}, nil
	case key.Matches(msg, k.ComposeClose):
		return composerIntent{close: true}, nil
	case key.Matches(msg, k.ComposeDir):
		p.dir = p.dir.Opposite()
		return composerIntent{}, p.changed()
	case key.Matches(msg, k.ComposeSend):
		return p.send(), nil
	}
	before := p.ta.Value()
	var cmd tea.Cmd
	p.ta, cmd = p.ta.Update(msg)
	if p.ta.Value() != before {
		return composerIntent{}, tea.Batch(cmd, p.changed())
	}
	return composerIntent{}, cmd
}

// pickKey handles a key while the catalog shows: move, pick, or go back
// to the text.
func (p *composer) pickKey(msg tea.KeyMsg) composerIntent {
	k := p.c.keys
	switch {
	case key.Matches(msg, k.Interrupt):
		return composerIntent{quit: true}
	case key.Matches(msg, k.ComposeClose), key.Matches(msg, k.ComposeCatalog):
		p.picking = false
	case key.Matches(msg, k.Up):
		p.sel = max(p.sel-1, 0)
	case key.Matches(msg, k.Down):
		p.sel = min(p.sel+1, len(p.catalog)-1)
	case key.Matches(msg, k.Open):
		p.picking = false
		e := p.catalog[p.sel]
		return composerIntent{pick: &e}
	}
	return composerIntent{}
}

// catalogView lists the catalog's entries around the selected one, with
// the direction each makes sense in and its rule.
func (p *composer) catalogView() string {
	s := p.c.styles
	h := max(p.height-composerLines, 1)
	first := min(max(p.sel-h/2, 0), max(len(p.catalog)-h, 0))
	var lines []string
	for i := first; i < len(p.catalog) && len(lines) < h; i++ {
		e := p.catalog[i]
		dir := "either"
		if e.Dir != inject.Either {
			dir = e.Dir.String()
		}
		line := truncate(fmt.Sprintf("%-24s %-6s %s", e.Name, dir, e.Rule), p.width)
		if i == p.sel {
			line = s.Selected.Render(line)
		}
		lines = append(lines, line)
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// send turns the text into frames to send, or says why not: a frame the
// tap cannot take, a preview not ready, a warning not yet confirmed.
func (p *composer) send() composerIntent {
	switch {
	case strings.TrimSpace(p.ta.Value()) == "":
		p.note("write a frame first, as in " + p.ta.Placeholder)
		return composerIntent{}
	case !p.ready:
		p.note("the preview is not ready yet; press ctrl+s again in a moment")
		return composerIntent{}
	case p.parse != nil:
		p.note("not sent: " + p.parse.Error())
		return composerIntent{}
	case len(p.frames) == 0:
		p.note("write a frame first, as in " + p.ta.Placeholder)
		return composerIntent{}
	}
	for _, f := range p.frames {
		if f.Raw {
			p.note(`not sent: the tap adds the framing to every frame it injects, so a frame ending in \c cannot be sent yet; drop the \c`)
			return composerIntent{}
		}
	}
	if p.preview.Warning != "" && !p.armed {
		p.armed = true
		p.note("ctrl+s again sends it anyway: " + p.preview.Warning)
		return composerIntent{}
	}
	p.armed, p.noteText = false, ""
	req := &injectRequest{dir: p.dir}
	for _, f := range p.frames {
		req.frames = append(req.frames, f.Body)
	}
	return composerIntent{send: req}
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
	o.Dir = p.dir
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
}

// View draws the text area, the direction, the preview and the warning.
func (p *composer) View() string {
	s := p.c.styles
	dir := "→ to the server, as if from the host (h2s)"
	if p.dir == classify.S2H {
		dir = "← to the host, as if from the server (s2h)"
	}
	top := p.ta.View()
	if p.picking {
		top = p.catalogView()
	}
	lines := []string{
		top,
		truncate(s.Title.Render("inject ")+dir+s.Dim.Render("  ctrl+d/tab switches"), p.width),
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
	answer := "owes no answer"
	for _, r := range p.preview.Frames {
		if r.Answer != nil {
			answer = "a strict " + inject.Receiver(p.dir) + " answers " + classify.EscapeString(string(r.Answer), 80)
			break
		}
	}
	parts = append(parts, answer, p.preview.Frames[len(p.preview.Frames)-1].Framed())
	return s.Dim.Render("preview: ") + strings.Join(parts, " · ")
}

// warningLine is the feedback, the warning or a collision.
func (p *composer) warningLine() string {
	s := p.c.styles
	switch {
	case p.noteText != "":
		return s.SevWarn.Render(p.noteText)
	case p.ready && p.preview.Warning != "":
		return s.SevWarn.Render("⚠ " + p.preview.Warning)
	case p.ready && len(p.preview.Collisions) > 0:
		return s.SevWarn.Render("⚠ " + p.preview.Collisions[0])
	}
	return ""
}

// ShortHelp is the footer while the composer is open.
func (p *composer) ShortHelp() []key.Binding {
	k := p.c.keys
	if p.picking {
		return []key.Binding{k.Up, k.Down, k.Open, k.ComposeClose}
	}
	return []key.Binding{k.ComposeSend, k.ComposeDir, k.ComposeCatalog, k.ComposeEditor, k.ComposeClose}
}

// injectDoneMsg is what a live tap answered to an injection.
type injectDoneMsg struct {
	session int
	text    string
}

// injectCmd sends the frames to the tap at socket, one after another, and
// says what happened. It copies what it needs: no model is read.
func injectCmd(session int, socket string, req injectRequest) tea.Cmd {
	return func() tea.Msg {
		for i, f := range req.frames {
			rep, err := tap.SendInject(socket, req.dir.String(), f, false, 0)
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
		}
		what := "sent the frame"
		if len(req.frames) > 1 {
			what = fmt.Sprintf("sent %d frames", len(req.frames))
		}
		return injectDoneMsg{session, fmt.Sprintf("%s to the %s", what, inject.Receiver(req.dir))}
	}
}
