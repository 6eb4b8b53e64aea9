package httptap

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// Holding what the server sends toward the host, as the tap holds a
// frame on a pipe: a JSON answer is read whole before its headers go to
// the host (so that an edit sets its Content-Length), and an SSE stream,
// while the user holds frames toward the host, goes to the host event by
// event: each event's bytes wait until the event has ended and the
// intercept has let it go, and the events behind a held one wait behind
// it. The hold time is the tap's own rule, as on a pipe.

// holdAnswer offers a JSON answer to the host's request to the
// intercept before its headers are written. It leaves resp's body to
// read what goes on to the host: the answer as it came, or the user's
// edit, with its length. A dropped answer never comes, as on a pipe:
// holdAnswer returns once the host gave up, with the error that says so,
// and nothing is written to the host. recorded says the answer was held
// and recorded as it left the hold; relayed is then to be called once it
// has been handed on.
func (p *Proxy) holdAnswer(x *exchange, resp *http.Response) (recorded bool, relayed func(), err error) {
	if x.w == nil || resp.ContentLength > maxBody || encoding(resp.Header) != "" || mediaType(resp.Header.Get("Content-Type")) != "application/json" {
		return false, nil, nil
	}
	buf, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil || len(buf) > maxBody || len(bytes.TrimSpace(buf)) == 0 {
		resp.Body = readCloser{io.MultiReader(bytes.NewReader(buf), resp.Body), resp.Body}
		return false, nil, nil
	}
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(buf))
	out, ok := p.feed.Hold(classify.S2H, buf, x.info(resp.StatusCode, resp.Header))
	if !ok {
		return false, nil, nil
	}
	switch out.How {
	case sessions.HeldDropped, sessions.HeldAnswered: // an answer gets no answer: only a drop
		out.Relayed()
		ctx := resp.Request.Context()
		<-ctx.Done()
		return true, out.Relayed, ctx.Err()
	case sessions.HeldEdited:
		resp.Body = io.NopCloser(bytes.NewReader(out.Body))
		resp.ContentLength = int64(len(out.Body))
		resp.TransferEncoding = nil
		resp.Header.Set("Content-Length", strconv.Itoa(len(out.Body)))
	}
	return true, out.Relayed, nil
}

// holdsEvents reports whether Read goes event by event: the body is a
// stream of the host's that may be held, and the user holds frames
// toward the host, or it is in the middle of doing so.
func (b *responseBody) holdsEvents() bool {
	if !b.holdable {
		return false
	}
	return len(b.out) > 0 || len(b.raw) > 0 || b.inErr != nil ||
		b.events.atBoundary() && b.x.p.feed.Holding(classify.S2H)
}

// wentOn tells the intercept that the held frames handed on have been
// written to the host: the frame held after them may go.
func (b *responseBody) wentOn() {
	for _, f := range b.pending {
		f()
	}
	b.pending = b.pending[:0]
}

// readHeld is Read while the stream goes event by event: it returns
// only whole events that the intercept let go (the bytes written end
// between two events, where a frame may be injected), and what remained
// of an event not ended once the stream ends.
func (b *responseBody) readHeld(p []byte) (int, error) {
	if b.scratch == nil {
		b.scratch = make([]byte, len(p))
	}
	for len(b.out) == 0 && b.inErr == nil {
		b.wentOn()
		n, err := b.in.Read(b.scratch)
		b.read += int64(n)
		b.split(b.scratch[:n])
		if err != nil {
			b.inErr = err
			b.out = append(b.out, b.raw...) // an event not ended goes on as it came
			b.raw = nil
		}
	}
	b.host.relaying()
	n := copy(p, b.out)
	b.out = b.out[n:]
	if len(b.out) > 0 || b.inErr == nil {
		b.host.returned(len(b.out) == 0, false)
		return n, nil
	}
	b.ending(b.inErr)
	b.host.returned(b.between(), true)
	return n, b.inErr
}

// split takes the server's bytes: each event that ends is offered to the
// intercept, and what goes on is added to out.
func (b *responseBody) split(chunk []byte) {
	for len(chunk) > 0 {
		if b.lfOwed {
			// The CRLF that ended the last event came apart: its LF is
			// that event's, and goes as it went.
			b.lfOwed = false
			if chunk[0] == '\n' {
				b.events.lineCR = false
				if b.lfPass {
					b.out = append(b.out, '\n')
				}
				chunk = chunk[1:]
				continue
			}
		}
		k, ev, ended := b.events.next(chunk)
		b.raw = append(b.raw, chunk[:k]...)
		chunk = chunk[k:]
		if len(b.raw) > maxBody { // too large to hold: it goes on as it comes
			b.out, b.raw, b.rawSent = append(b.out, b.raw...), b.raw[:0], true
		}
		if !ended {
			continue
		}
		raw, sent := b.raw, b.rawSent
		b.raw, b.rawSent = nil, false
		b.lfOwed, b.lfPass = b.events.lineCR, true
		switch {
		case ev == nil: // no data: nothing to record
			b.out = append(b.out, raw...)
		case sent || ev.over || ev.typ == "endpoint":
			b.event(*ev)
			b.out = append(b.out, raw...)
		default:
			b.lfPass = b.offer(*ev, raw)
		}
	}
}

// offer offers an event that ended to the intercept, and adds what goes
// on to out: the event as it came, the event with its data lines the
// user's edit (its other lines, its id among them, kept), or nothing.
// It reports whether the event went on as it came.
func (b *responseBody) offer(e event, raw []byte) bool {
	info := b.eventInfo(e)
	out, ok := b.x.p.feed.Hold(classify.S2H, e.data, info)
	if !ok {
		b.recordEvent(e, info)
		b.out = append(b.out, raw...)
		return true
	}
	b.frames++
	b.pending = append(b.pending, out.Relayed)
	switch out.How {
	case sessions.HeldDropped:
	case sessions.HeldAnswered:
		// The server's request, answered in the host's place: the
		// answer goes to the server as a POST of the proxy's own.
		go b.x.p.inject(out.Reply)
	case sessions.HeldEdited:
		b.x.answered(out.Body)
		b.out = append(b.out, editedEvent(raw, out.Body)...)
	default:
		b.x.answered(out.Body)
		b.out = append(b.out, raw...)
		return true
	}
	return false
}

// editedEvent is the event raw with its data lines those of data, where
// its first data line was; its other lines are kept, in order.
func editedEvent(raw, data []byte) []byte {
	var ev []byte
	put := false
	for line := range bytes.Lines(raw) {
		l := bytes.TrimRight(line, "\r\n")
		if len(l) == 0 {
			continue // the blank line that ends it, or a CRLF's LF
		}
		if name, _, _ := bytes.Cut(l, []byte(":")); string(name) != "data" {
			ev = append(append(ev, l...), '\n')
			continue
		}
		if put {
			continue
		}
		put = true
		for d := range bytes.Lines(data) {
			ev = append(append(ev, "data: "...), bytes.TrimRight(d, "\r\n")...)
			ev = append(ev, '\n')
		}
	}
	return append(ev, '\n')
}

// next feeds p up to the blank line that ends an event: it returns the
// bytes it took, whether a blank line ended there, and the event when it
// carried data.
func (s *sse) next(p []byte) (n int, ev *event, ended bool) {
	for n < len(p) {
		if s.lineCR && p[n] == '\n' {
			n++
			s.lineCR = false
			continue
		}
		s.lineCR = false
		i := bytes.IndexAny(p[n:], "\r\n")
		if i < 0 {
			s.addLine(p[n:])
			return len(p), nil, false
		}
		s.addLine(p[n : n+i])
		s.lineCR = p[n+i] == '\r'
		n += i + 1
		blank := len(s.line) == 0 && !s.longer
		s.endLine(func(e event) { ev = &e })
		if blank {
			return n, ev, true
		}
	}
	return n, nil, false
}
