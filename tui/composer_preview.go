package tui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/inject"
)

// This file holds the composer's preview: how the text's receiver reads
// it, recomputed as it changes, and the warning a send must confirm.

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

// warning is why a send asks to be confirmed by a second ctrl+s, or "",
// found when the preview comes in.
func (p *composer) warning() string { return p.warn }

// findWarning is why frames with their preview need a second ctrl+s: a
// frame a strict receiver must refuse, or a partial one (the preview's
// warning); a frame with an error finding (its receiver reads it as
// broken, as a null id under MCP); a tools/call whose arguments break
// the tool's inputSchema as the session listed it; a frame that still
// holds a template's placeholder.
func (p *composer) findWarning() string {
	pv := &p.preview
	switch {
	case pv.Warning != "":
		return pv.Warning
	case pv.FirstError != nil:
		f := pv.FirstError.Finding
		return fmt.Sprintf("%s has an error (%s): %s", inject.FrameName(pv.FirstError.Frame, len(pv.Frames)), f.Code, f.Message)
	case pv.BadArguments != nil:
		return inject.FrameName(pv.BadArguments.Frame, len(pv.Frames)) + ": " + pv.BadArguments.Problem.Text
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
