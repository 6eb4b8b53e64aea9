package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
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

// fillCatalog replaces the text with a catalog entry's, and notes what
// to edit, or says why the entry cannot be built.
func (p *composer) fillCatalog(msg catalogMsg) tea.Cmd {
	if msg.err != nil {
		p.note(msg.err.Error())
		return nil
	}
	cmd := p.fill(msg.text, msg.dir)
	p.note(msg.note)
	return cmd
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
		return intent{}, p.useTemplate(p.templates[i])
	}
	return intent{}, nil
}

// useTemplate fills the composer with template t, its id taken as the
// composer's own (not one the session sent).
func (p *composer) useTemplate(t inject.Template) tea.Cmd {
	m := classify.Classify(t.Body, t.Dir, classify.JSONRPC)
	if m.HasID() {
		p.given[string(m.ID().Raw)] = true
	}
	cmd := p.fill(inject.FormatRaw([][]byte{t.Body}), t.Dir)
	p.note("template " + classify.EscapeString(t.Name, 60) + ": edit the placeholders, then ctrl+s")
	return cmd
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

// note sets the composer's line of feedback.
func (p *composer) note(s string) { p.noteText = s }
