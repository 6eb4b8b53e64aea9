package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// play walks the recording and sends the host's part.
func (p *player) play(ctx context.Context) error {
	profile := p.profile
	for {
		ev, err := p.rd.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the recording: %w", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.line = ev.Line
		if p.framings.Note(ev) {
			if profile == classify.Auto {
				profile = classify.LSP
			}
		}
		if ev.Kind == sessions.EventExit {
			return nil
		}
		frame, header, ok := sessions.ServerSide(ev)
		if !ok {
			continue
		}
		m := p.hdr.Classify(frame, ev.Dir, profile)
		p.evHTTP = ev.HTTP
		if m.Kind == classify.KindHTTP {
			// What HTTP did, no message: the host's GET or DELETE is made
			// again over HTTP; nothing is played on stdio.
			if p.hx != nil && ev.Dir == classify.H2S {
				p.hx.bodyless(ev.HTTP)
			}
			continue
		}
		if ev.Dir == classify.S2H {
			if err := p.recordedServer(ctx, ev, &m); err != nil {
				return err
			}
			continue
		}
		// The host's frame.
		switch m.Kind {
		case classify.KindResponse:
			// The host answered a server request: answer the live one.
			if err := p.recordedAnswer(ctx, ev, &m); err != nil {
				return err
			}
			continue
		case classify.KindRequest:
			if rt := p.roundOf(&m); rt != nil && m.HasID() {
				if err := p.sendRetry(ev, &m, rt, header); err != nil {
					return err
				}
				continue
			}
			p.sending(ev, &m)
		case classify.KindBatch:
			for i := range m.Members {
				if m.Members[i].Kind == classify.KindRequest {
					p.sending(ev, &m.Members[i])
				}
			}
		}
		if err := p.send(frame, header); err != nil {
			return err
		}
	}
}

// sending notes a host request about to be sent.
func (p *player) sending(ev *sessions.Event, m *classify.Message) {
	if !m.HasID() {
		return
	}
	key := m.ID().Key()
	c := CallResult{Line: int64(ev.Line), Method: p.intern(m.Method()), Name: sessions.CallName(m.Method(), m.Frame), ID: string(m.ID().Raw), Outcome: OutcomeMissing}
	if old, ok := p.requests[key]; ok {
		p.addCall(old.call) // an id used again before its answer: the first is never answered
	}
	p.requests[key] = sent{call: c, key: key, t: ev.T}
	p.unstamped = append(p.unstamped, key)
}

// recordedServer handles a server frame of the recording: an answer is
// waited for and compared, the rest noted. A batch is taken member by
// member, as the tracker pairs them.
func (p *player) recordedServer(ctx context.Context, ev *sessions.Event, m *classify.Message) error {
	switch m.Kind {
	case classify.KindNotification:
		if p.opts.Notifications {
			p.recNotes = append(p.recNotes, p.intern(m.Method()))
		}
	case classify.KindRequest:
		if m.HasID() {
			p.serverReqs[m.ID().Key()] = serverReq{line: int64(ev.Line), method: m.Method()}
		}
	case classify.KindResponse:
		if !m.HasID() {
			return nil
		}
		key := m.ID().Key()
		if _, ok := p.requests[key]; ok {
			// Written (and timed) before its answer is waited for.
			if err := p.flush(); err != nil {
				return err
			}
			s := p.requests[key]
			delete(p.requests, key)
			return p.await(ctx, s, ev.T, m.Frame, ev.Redacted)
		}
	case classify.KindBatch:
		for i := range m.Members {
			if err := p.recordedServer(ctx, ev, &m.Members[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// recordedAnswer handles the host's answer to a server request.
func (p *player) recordedAnswer(ctx context.Context, ev *sessions.Event, m *classify.Message) error {
	if !m.HasID() {
		return nil
	}
	key := m.ID().Key()
	r, ok := p.serverReqs[key]
	if !ok {
		return nil
	}
	delete(p.serverReqs, key)
	return p.answerServer(ctx, r.method, r.line, ev)
}

// send queues a host frame for the next write.
func (p *player) send(body, header []byte) error {
	if p.hx != nil {
		p.hx.post(p.evHTTP, body)
		p.stamp(time.Now())
		return nil
	}
	p.out = classify.AppendFrame(p.out, p.framings.Of(classify.H2S), body, header)
	if len(p.out) >= 64<<10 {
		return p.flush()
	}
	return nil
}

// flush writes the queued frames in one write, and times the requests
// among them from now.
func (p *player) flush() error {
	if len(p.out) == 0 {
		return nil
	}
	var err error
	if !p.gone {
		_, err = p.to.Write(p.out)
	}
	p.out = p.out[:0]
	p.stamp(time.Now())
	if err != nil {
		p.gone = true
		p.log("the server no longer reads its input (%v): what the recording has after line %d is not sent", err, p.line)
	}
	return nil
}

// stamp times the requests written, from now.
func (p *player) stamp(now time.Time) {
	for _, key := range p.unstamped {
		if s, ok := p.requests[key]; ok {
			s.at = now
			p.requests[key] = s
		}
	}
	p.unstamped = p.unstamped[:0]
}

// waitFor waits until cond (called with p.mu held) holds, the live
// server's output has ended, or the deadline passes. What was queued is
// written first, and queued answers are compared while the server works.
func (p *player) waitFor(ctx context.Context, deadline time.Time, cond func() bool) (bool, error) {
	if err := p.flush(); err != nil {
		return false, err
	}
	armed := false
	defer func() {
		if armed {
			p.timer.Stop()
		}
	}()
	for {
		p.mu.Lock()
		ok, ended := cond(), p.ended
		p.mu.Unlock()
		if ok || ended {
			return ok, nil
		}
		if len(p.queued) > 0 {
			p.compareQueued()
			continue
		}
		if !armed {
			p.timer.Reset(time.Until(deadline))
			armed = true
		}
		select {
		case <-p.wake:
		case <-p.timer.C:
			armed = false
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// await waits for the live answer to a replayed request and compares it
// with the recorded one, frame, recorded at t (masked says the recording
// masked a secret in it).
func (p *player) await(ctx context.Context, s sent, t int64, frame []byte, masked bool) error {
	c := &s.call
	defer func() {
		if c != nil {
			p.addCall(*c)
		}
	}()
	c.Recorded = time.Duration(t-s.t) * time.Microsecond
	var got liveAnswer
	ok := s.trip != nil && s.trip.done // the live server gave the call's final answer already
	if !ok {
		var err error
		ok, err = p.waitFor(ctx, s.at.Add(p.opts.Timeout), func() bool {
			var ok bool
			if got, ok = p.answers[s.key]; ok {
				delete(p.answers, s.key)
			}
			return ok
		})
		if err != nil {
			return err
		}
	}
	if !ok {
		if p.tripLost(s, frame) {
			c = nil // in the report as the call's
			return nil
		}
		p.mu.Lock()
		ended := p.ended
		p.mu.Unlock()
		if ended {
			p.log("line %d %s: no answer: the server's output has ended", c.Line, esc(c.Method))
		} else {
			p.log("line %d %s: no answer within %v", c.Line, esc(c.Method), p.opts.Timeout)
		}
		return nil
	}
	c.Now = got.at.Sub(s.at)
	c.Outcome = OutcomeSame
	if p.tripAnswer(s, t, frame, got, masked) {
		c = nil // in the report once the call's final answer is compared
		return nil
	}
	if bytes.Equal(frame, got.frame) {
		p.release(got.frame)
		return nil
	}
	p.queued = append(p.queued, queuedAnswer{call: *c, recorded: bytes.Clone(frame), now: got.frame, masked: masked})
	c = nil // in the report once compared
	return nil
}
