package tui

import (
	"bytes"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/tap"
)

// This file holds what the composer sends: the frames a send makes, with
// their framing and fresh ids, and the command that gives them to the
// tap.

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
