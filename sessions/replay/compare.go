package replay

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// compareQueued compares the answers that differ in their bytes.
func (p *player) compareQueued() {
	for i := range p.queued {
		q := &p.queued[i]
		p.compare(&q.call, q.recorded, q.now, q.masked)
		p.release(q.now)
		p.addCall(q.call)
	}
	clear(p.queued)
	p.queued = p.queued[:0]
}

// compare compares a live answer with the recorded one, whose bytes
// differ. Both are masked as replay masks (the recording may have been
// made with secrets it did not mask); a secret the recording masked
// (masked) stands for any value.
func (p *player) compare(c *CallResult, recorded, now []byte, masked bool) {
	p.compareAs(c, recorded, now, masked, false)
}

// compareAs is compare, leaving out the result's requestState when state
// is set (a round of a multi round-trip call that asks for input: the
// state is the server's own).
func (p *player) compareAs(c *CallResult, recorded, now []byte, masked, state bool) {
	recorded, _ = p.opts.Redactor.Mask(recorded)
	now, _ = p.opts.Redactor.Mask(now)
	if bytes.Equal(recorded, now) {
		return
	}
	ig := p.opts.Ignore
	if masked {
		ig = p.masked
	}
	if state {
		ig = ig.Also("result", "requestState")
	}
	ha, okA := ig.Hash(recorded)
	hb, okB := ig.Hash(now)
	if okA && okB && ha == hb {
		return
	}
	if p.detailed < sessions.MaxDetailed || masked {
		changes := ig.Diff(recorded, now, sessions.MaxChanges)
		if len(changes) == 0 {
			return // equal once decoded (a number written otherwise, a list in another order, a masked secret)
		}
		if p.detailed < sessions.MaxDetailed {
			c.Changes = changes
			p.detailed++
		}
	}
	c.Outcome = OutcomeChanged
	recErr := classify.Member(recorded, "error") != nil
	nowErr := classify.Member(now, "error") != nil
	if nowErr && !recErr {
		c.Outcome = OutcomeNewError
	}
	p.log("line %d %s: %s", c.Line, esc(c.Method), c.Outcome)
}

// release gives a live frame's buffer back for reuse.
func (p *player) release(b []byte) {
	p.mu.Lock()
	if len(p.free) < 256 {
		p.free = append(p.free, b[:0])
	}
	p.mu.Unlock()
}

// answerServer sends the recorded host's answer to the live server's
// request of the same method (the first not answered yet).
func (p *player) answerServer(ctx context.Context, method string, line int64, ev *sessions.Event) error {
	var id []byte
	ok, err := p.waitFor(ctx, time.Now().Add(p.opts.Timeout), func() bool {
		q := p.asked[method]
		if len(q) == 0 {
			return false
		}
		id, p.asked[method] = q[0], q[1:]
		return true
	})
	if err != nil {
		return err
	}
	if !ok {
		p.addCall(CallResult{Line: line, Method: p.intern(method), Server: true, Outcome: OutcomeMissing})
		p.log("line %d: the server never asked %s", line, esc(method))
		return nil
	}
	return p.send(withID(ev.Frame, id), nil)
}

// readLive reads the live server's frames until they end.
func (p *player) readLive(in FrameSource) {
	defer p.end()
	for {
		body, err := in.Next()
		if err != nil {
			return
		}
		p.deliver(body, time.Now())
		p.poke()
	}
}

// end marks the live server's output as ended.
func (p *player) end() {
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
	p.poke()
}

// deliver takes one frame of the live server, received at now (copied:
// body may be reused once it returns). The caller pokes the player.
func (p *player) deliver(body []byte, now time.Time) {
	m := classify.Classify(body, classify.S2H, p.profile)
	p.mu.Lock()
	p.take(&m, now)
	p.mu.Unlock()
}

// take files a live message, a batch member by member. p.mu is held.
func (p *player) take(m *classify.Message, now time.Time) {
	switch m.Kind {
	case classify.KindResponse:
		if m.HasID() {
			var buf []byte
			if n := len(p.free); n > 0 {
				buf, p.free = p.free[n-1], p.free[:n-1]
			}
			p.answers[m.ID().Key()] = liveAnswer{frame: append(buf, m.Frame...), at: now}
		}
	case classify.KindRequest:
		method := m.Method()
		p.asked[method] = append(p.asked[method], bytes.Clone(m.ID().Raw))
	case classify.KindNotification:
		if p.opts.Notifications {
			p.liveNotes = append(p.liveNotes, sessions.InternIn(p.live, m.Method()))
		}
	case classify.KindBatch:
		for i := range m.Members {
			p.take(&m.Members[i], now)
		}
	}
}

// finish counts the outcomes and compares the notifications.
func (p *player) finish() {
	r := p.rep
	slices.SortStableFunc(r.Calls, func(a, b CallResult) int { return cmp.Compare(a.Line, b.Line) })
	r.Same = r.SameNotListed
	for _, c := range r.Calls {
		switch c.Outcome {
		case OutcomeSame:
			r.Same++
		case OutcomeChanged:
			r.Changed++
		case OutcomeMissing:
			r.Missing++
		case OutcomeNewError:
			r.NewErrors++
		}
	}
	if !p.opts.Notifications {
		return
	}
	p.mu.Lock()
	live := p.liveNotes
	p.mu.Unlock()
	n := &NotificationOrder{Same: slices.Equal(p.recNotes, live), Recorded: len(p.recNotes), Now: len(live), At: -1}
	if !n.Same {
		for i := 0; ; i++ {
			if i >= len(p.recNotes) || i >= len(live) || p.recNotes[i] != live[i] {
				n.At = i
				if i < len(p.recNotes) {
					n.Was = p.recNotes[i]
				}
				if i < len(live) {
					n.Is = p.opts.Redactor.MaskString(live[i])
				}
				break
			}
		}
	}
	r.Notifications = n
}
