package tap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/inject"
	"github.com/rpctap/rpctap/sessions"
)

func (t *Tap) serveInject(c net.Conn, br *bufio.Reader, req request) {
	dir, err := classify.ParseDirection(req.Dir)
	if err != nil || dir == classify.Err {
		refuse(c, "dir must be h2s (to the server) or s2h (to the host)")
		return
	}
	body := []byte(req.Frame)
	if req.Size != nil {
		if body, err = t.receiveFrame(c, br, *req.Size); err != nil {
			refuse(c, err.Error())
			return
		}
	}
	c.SetReadDeadline(time.Time{})
	res, err := t.Inject(dir, body, InjectOptions{Raw: req.Raw, Force: req.Force, Capture: req.Capture, Keep: req.Capture && req.Keep})
	if req.Size != nil {
		body = nil
		<-t.injecting
	}
	if err != nil {
		reply(c, map[string]any{"ok": false, "error": err.Error()})
		return
	}
	reply(c, map[string]any{"ok": true, "id": res.ID})
	if res.Reply == nil || req.Keep {
		return
	}
	wait := time.Duration(req.WaitMs) * time.Millisecond
	if wait <= 0 {
		wait = 30 * time.Second
	}
	select {
	case ans, ok := <-res.Reply:
		if !ok {
			side := "host"
			if dir == classify.S2H {
				side = "server"
			}
			reply(c, map[string]any{"reply": nil, "error": fmt.Sprintf("no answer was kept for it: the %s sent a request of its own with this id before an answer came, so an answer with this id goes on to the %s; give the injected request an id the %s does not use (rpctap inject --method gives it one of rpctap's)", side, side, side)})
			return
		}
		if ans.Body == nil {
			// Only the session file keeps an answer too large to hold.
			reply(c, map[string]any{"reply": nil, "too_large": true, "size": ans.Size, "latency_us": int64(res.Latency(ans) / time.Microsecond),
				"error": fmt.Sprintf("the answer came, %d bytes, more than the %d MiB the tap hands to an injector: it is recorded in the session file (captured), and only there", ans.Size, holdLimit>>20)})
			return
		}
		body, _ := t.rec.redact.Mask(ans.Body)
		c.Write([]byte(`{"reply":`))
		if json.Valid(body) && bytes.IndexByte(body, '\n') >= 0 {
			// The reply is one line: an LSP body may hold line feeds.
			var b bytes.Buffer
			json.Compact(&b, body)
			body = b.Bytes()
		}
		if json.Valid(body) {
			c.Write(body)
		} else {
			b, _ := json.Marshal(string(body))
			c.Write(b)
		}
		c.Write([]byte(`,"latency_us":` + strconv.FormatInt(int64(res.Latency(ans)/time.Microsecond), 10) + "}\n"))
	case <-time.After(wait):
		// The capture stays: a late answer is recorded as captured, and
		// never reaches the side that did not send the request.
		reply(c, map[string]any{"reply": nil, "error": fmt.Sprintf("no answer within %s", wait)})
	}
}

// receiveFrame reads an injected frame's size bytes, which follow the
// request line, once no other frame is being received: the caller
// releases t.injecting when done with the frame (unless an error is
// returned). The whole frame must come within requestTimeout.
func (t *Tap) receiveFrame(c net.Conn, br *bufio.Reader, size int64) ([]byte, error) {
	if size < 0 || size > maxInjectFrame {
		return nil, fmt.Errorf("the frame is %d bytes; a tap injects frames of up to %d MiB", size, maxInjectFrame>>20)
	}
	select {
	case t.injecting <- struct{}{}:
	case <-time.After(requestTimeout):
		return nil, fmt.Errorf("another injection has been in progress for over %s (its frame is still coming, or the receiver is not reading); try again later", requestTimeout)
	}
	// The whole frame must come within requestTimeout: a client that
	// sends it a byte at a time does not hold the others back for long.
	c.SetReadDeadline(time.Now().Add(requestTimeout))
	body := make([]byte, size)
	for n := 0; n < len(body); {
		m, err := br.Read(body[n:])
		n += m
		if err != nil && n < len(body) {
			<-t.injecting
			if errors.Is(err, os.ErrDeadlineExceeded) {
				err = fmt.Errorf("the frame did not come whole within %s (%d of %d bytes came)", requestTimeout, n, size)
			} else {
				err = fmt.Errorf("the frame ended after %d of %d bytes", n, size)
			}
			return nil, err
		}
	}
	return body, nil
}

// InjectResult says what happened to an injected frame.
type InjectResult struct {
	ID    string        // the id of an injected request, as on the wire
	Reply chan Captured // the answer, when capture was asked
	// Sent is when the tap wrote the frame, on the clock of
	// Captured.At.
	Sent time.Duration
	key  string
	set  *captureSet
}

// Latency is how long the answer took: from the tap's write of the
// injected frame to its read of the answer's last byte.
func (r InjectResult) Latency(ans Captured) time.Duration { return max(ans.At-r.Sent, 0) }

// cancel forgets the captures of an injection that was not sent: its
// own, and more (the other requests among its frames).
func (r InjectResult) cancel(more ...string) {
	if r.set == nil {
		return
	}
	if r.key != "" {
		r.set.drop(r.key)
	}
	for _, k := range more {
		r.set.drop(k)
	}
}

// InjectOptions say how a frame is injected.
type InjectOptions struct {
	// Raw says the bytes go on the wire exactly as given, with no framing
	// added: several frames, a hand-made lsp header, a line with no
	// newline. They are still written at a frame boundary, never inside a
	// relayed frame, and recorded as the frames the receiver reads.
	Raw bool
	// Force sends raw bytes that leave the stream inside a frame (a
	// partial frame: the next frame relayed would be read as part of
	// it); without it such bytes are refused, with the reason.
	Force bool
	// Capture keeps the receiver's answer to the injected request from
	// the other side, and hands it over on InjectResult.Reply: the
	// answer is recorded (captured) and never reaches the side that did
	// not send the request, however late it comes, whether or not anyone
	// still waits for it.
	Capture bool
	// Keep, with Capture, says no one waits for the answer: the frames
	// may be any, and the answer to each whole request among them is
	// captured. The live view and rpctap inject send so by default.
	Keep bool
}

// maxKept bounds the captures that wait for their answers, per direction:
// a peer that never answers does not grow the tap's memory past it.
const maxKept = 4096

// Inject inserts a frame into the stream towards dir's receiver at the
// next frame boundary: its body, to which the stream's framing is added,
// or with o.Raw its bytes as they are. It records it with src inject,
// and with o.Capture keeps the receiver's answer from the other side.
func (t *Tap) Inject(dir classify.Direction, body []byte, o InjectOptions) (InjectResult, error) {
	if dir != classify.H2S && dir != classify.S2H {
		return InjectResult{}, errors.New("a frame can be injected towards the server (h2s) or the host (s2h) only")
	}
	if t.opts.Transport == sessions.TransportHTTP {
		return t.injectHTTP(dir, body, o)
	}
	// Run sets these up; Inject may be called from any goroutine.
	t.mu.Lock()
	d, rel, other, set := t.dests[dir], t.relays[dir], t.relays[dir.Opposite()], t.capture[dir.Opposite()]
	t.mu.Unlock()
	if d == nil {
		return InjectResult{}, errors.New("the session has not started")
	}
	t.rec.begin() // the user's frame is recorded, and what follows it
	framing := framingOf(rel, other, t.opts.Framing)
	inj := &injection{src: sessions.SrcInject, capture: o.Capture, done: make(chan error, 1)}
	var req []byte // the frame whose answer is captured
	if o.Raw {
		if err := inj.splitRaw(body, framing, o); err != nil {
			return InjectResult{}, err
		}
		if o.Capture && !o.Keep && (len(inj.parts) != 1 || inj.parts[0].partial) {
			return InjectResult{}, errors.New("--capture waits for the answer to one request, and these raw bytes are not one whole frame; send them without --capture (the answers are still kept from the other side), or one request at a time")
		}
		req = inj.parts[0].body
	} else {
		if err := inj.frameBody(body, framing); err != nil {
			return InjectResult{}, err
		}
		req = inj.parts[0].body
	}
	var res InjectResult
	m := classify.Classify(req, dir, classify.JSONRPC)
	if m.HasID() && len(inj.parts) == 1 {
		res.ID = string(m.ID().Raw)
	}
	var kept []string     // the ids captured besides res.key
	var told []toldAnswer // the requests whose answers go to Options.Answers
	switch {
	case o.Capture && !o.Keep:
		if m.Kind != classify.KindRequest {
			return InjectResult{}, errCaptureNone(m.Kind)
		}
		res.key = m.ID().Key()
		res.set = set
		var err error
		if res.Reply, err = set.add(res.key); err != nil {
			return InjectResult{}, err
		}
	case o.Capture:
		// No one waits: each whole request's answer is captured.
		res.set = set
		for i, p := range inj.parts {
			q := m
			if i > 0 {
				q = classify.Classify(p.body, dir, classify.JSONRPC)
			}
			if p.partial || q.Kind != classify.KindRequest {
				continue
			}
			ch, err := set.add(q.ID().Key())
			if err != nil {
				res.cancel(kept...)
				return InjectResult{}, err
			}
			if t.opts.Answers != nil && dir == classify.H2S {
				told = append(told, toldAnswer{request: append([]byte(nil), p.body...), answer: ch})
			}
			if res.Reply == nil {
				res.key, res.Reply = q.ID().Key(), ch
			} else {
				kept = append(kept, q.ID().Key())
			}
		}
	}
	d.inject(inj)
	if err := <-inj.done; err != nil {
		res.cancel(kept...)
		return InjectResult{}, err
	}
	res.Sent = inj.sent
	for _, a := range told {
		go a.tell(t.opts.Answers)
	}
	return res, nil
}

// A toldAnswer is an injected request whose answer, kept from the host
// with no one waiting for it, goes to Options.Answers. As many wait at
// once as captures do (maxKept at most).
type toldAnswer struct {
	request []byte
	answer  chan Captured
}

// tell hands the request and its answer to fn once the answer comes
// (never, for one given back to the host or too large to hold).
func (a toldAnswer) tell(fn func(request, answer []byte)) {
	if ans, ok := <-a.answer; ok && ans.Body != nil {
		fn(a.request, ans.Body)
	}
}

// framingOf is the framing of the stream a relay feeds: what its own
// traffic showed, else the other direction's, else the tap's.
func framingOf(rel, other *relay, given classify.Framing) classify.Framing {
	framing := classify.Framing(rel.seen.Load())
	if framing == 0 || framing == classify.FramingAuto {
		framing = classify.Framing(other.seen.Load())
	}
	if framing == 0 {
		framing = given
	}
	return framing
}

// frameBody sets the injection to body with the stream's framing added:
// frame is the body with its framing, and the recorded body a slice of
// it, so the tap holds one copy of the frame.
func (inj *injection) frameBody(body []byte, framing classify.Framing) error {
	if framing != classify.FramingLSP && bytes.IndexByte(body, '\n') >= 0 {
		return errors.New("the frame holds a line feed, which would split it into two frames on a newline-framed stream; remove it (JSON needs none), or send the bytes as they are with --raw")
	}
	inj.frame = classify.AppendFrame(make([]byte, 0, len(body)+32), framing, body, nil)
	start := 0 // where the body starts in the frame
	if framing == classify.FramingLSP {
		start = len(inj.frame) - len(body)
	}
	inj.parts = []injectPart{{body: inj.frame[start : start+len(body)]}}
	return nil
}

// frameToward makes body, with its stream's framing, into a frame to
// write toward dir's receiver, recorded with src.
func (t *Tap) frameToward(dir classify.Direction, body []byte, src string) (*injection, error) {
	if t.opts.Transport == sessions.TransportHTTP {
		// A body of its own: HTTP frames it.
		inj := &injection{src: src, frame: body, done: make(chan error, 1)}
		inj.parts = []injectPart{{body: body}}
		return inj, nil
	}
	t.mu.Lock()
	rel, other := t.relays[dir], t.relays[dir.Opposite()]
	t.mu.Unlock()
	if rel == nil {
		return nil, errors.New("the session has not started")
	}
	inj := &injection{src: src, done: make(chan error, 1)}
	if err := inj.frameBody(body, framingOf(rel, other, t.opts.Framing)); err != nil {
		return nil, err
	}
	return inj, nil
}

// splitRaw takes raw bytes as the frames their receiver reads, each
// recorded on its own; an open last frame is refused unless forced.
func (inj *injection) splitRaw(b []byte, framing classify.Framing, o InjectOptions) error {
	if len(b) == 0 {
		return errors.New("the raw frame is empty: give the bytes to write")
	}
	pieces, partial := inject.SplitWire(b, framing)
	if partial != "" && !o.Force {
		return fmt.Errorf("refused a partial frame: %s (rpctap inject --raw --force sends it; in the composer, a second ctrl+s)", strings.TrimSuffix(partial, "."))
	}
	inj.frame = b
	for _, p := range pieces {
		part := injectPart{body: p.Body()}
		switch {
		case p.Open:
			part = injectPart{body: p.Bytes, partial: true}
		case p.Info.HeaderLen > 0 && !p.Info.PlainHeader:
			part.header = p.Header()
		}
		inj.parts = append(inj.parts, part)
	}
	return nil
}

// kindPhrase names a kind of frame with its article, for sentences.
func kindPhrase(k classify.Kind) string {
	if k == classify.KindBatch {
		return "a batch (capture one request at a time)"
	}
	return k.Phrase()
}
