package classify

import "time"

// This file splits an HTTP session into its conversations. One HTTP tap
// may carry several hosts at once (each with its own ids, handshake and
// revision), and a conversation is what one of them says with the
// server: the frames of one Mcp-Session-Id; the stateless 2026-07-28
// requests of one client (by the revision and client name of their
// _meta); or, for a server that gives no session, the rest. Each
// conversation has a Tracker of its own; the Tracker the caller holds
// routes each frame to it and gathers their findings.

// maxConversations bounds the conversations followed at once; past it the
// one used longest ago is forgotten (what it had in flight is not
// judged).
const maxConversations = 64

type conversations struct {
	opts  TrackerOptions
	byKey map[string]*Tracker
	// exch maps an exchange to its conversation (its response goes
	// where its request went); exchOrder bounds it, oldest first.
	exch      map[int64]*Tracker
	exchOrder []int64
	// fresh holds the exchanges of an initialize sent with no session:
	// its answer names the session, or the conversation becomes the
	// sessionless one.
	fresh map[int64]bool
	// streams holds the exchanges of a GET sent with no session (the
	// legacy HTTP+SSE transport's stream, which carries the answers to
	// the POSTs): what comes on one goes with the host's latest request.
	streams map[int64]bool
	// all lists the conversations, oldest first; recent is the one of
	// the latest frame (what the session's getters show); sessionless
	// the one the latest request with no session went to.
	all         []*Tracker
	recent      *Tracker
	sessionless *Tracker
	use         int64
	lastUse     map[*Tracker]int64
}

func (t *Tracker) conversations() *conversations {
	if t.convs == nil {
		opts := t.opts
		if t.profile != Auto {
			opts.Profile = t.profile
		}
		t.convs = &conversations{opts: opts, byKey: map[string]*Tracker{}, exch: map[int64]*Tracker{}, fresh: map[int64]bool{}, streams: map[int64]bool{}, lastUse: map[*Tracker]int64{}}
	}
	return t.convs
}

// newConversation starts a conversation's tracker.
func (cs *conversations) newConversation() *Tracker {
	if len(cs.all) >= maxConversations {
		cs.forgetOldest()
	}
	c := NewTracker(cs.opts)
	c.inConv = true
	cs.all = append(cs.all, c)
	return c
}

func (cs *conversations) forgetOldest() {
	old := cs.all[0]
	for _, c := range cs.all {
		if cs.lastUse[c] < cs.lastUse[old] {
			old = c
		}
	}
	cs.forget(old)
}

// forget drops conversation c and every name of it.
func (cs *conversations) forget(c *Tracker) {
	for i, o := range cs.all {
		if o == c {
			cs.all = append(cs.all[:i], cs.all[i+1:]...)
			break
		}
	}
	for k, o := range cs.byKey {
		if o == c {
			delete(cs.byKey, k)
		}
	}
	for n, o := range cs.exch {
		if o == c {
			delete(cs.exch, n)
		}
	}
	delete(cs.lastUse, c)
	if cs.sessionless == c {
		cs.sessionless = nil
	}
}

// named is the conversation of key, started when there is none.
func (cs *conversations) named(key string) *Tracker {
	if c, ok := cs.byKey[key]; ok {
		return c
	}
	c := cs.newConversation()
	cs.byKey[key] = c
	return c
}

func (cs *conversations) remember(n int64, c *Tracker) {
	if _, ok := cs.exch[n]; !ok {
		if len(cs.exchOrder) >= maxExchanges {
			delete(cs.exch, cs.exchOrder[0])
			delete(cs.fresh, cs.exchOrder[0])
			delete(cs.streams, cs.exchOrder[0])
			cs.exchOrder = cs.exchOrder[1:]
		}
		cs.exchOrder = append(cs.exchOrder, n)
	}
	cs.exch[n] = c
}

// of is the conversation of frame m.
func (cs *conversations) of(m *Message) *Tracker {
	h := m.HTTP
	if m.Dir == S2H {
		if cs.streams[h.Exchange] && cs.sessionless != nil {
			// Answers to POSTs on a stream of their own: the legacy
			// HTTP+SSE transport, whose rules are not Streamable HTTP's.
			cs.sessionless.legacySSE = true
			return cs.sessionless
		}
		if c, ok := cs.exch[h.Exchange]; ok {
			if cs.fresh[h.Exchange] && h.Status != 0 {
				// The answer to an initialize sent with no session:
				// it names the session, or the server keeps none.
				delete(cs.fresh, h.Exchange)
				key := ""
				if h.SessionID != "" {
					key = "s:" + h.SessionID
				}
				if _, taken := cs.byKey[key]; !taken || key == "" {
					cs.byKey[key] = c
				}
			}
			return c
		}
	}
	if h.SessionID != "" {
		c := cs.named("s:" + h.SessionID)
		if m.Dir == H2S {
			cs.remember(h.Exchange, c)
		}
		return c
	}
	if m.Dir != H2S {
		return cs.named("")
	}
	c := cs.sessionlessOf(m)
	cs.remember(h.Exchange, c)
	if h.Method == "GET" {
		cs.streams[h.Exchange] = true
	}
	return c
}

// sessionlessOf is the conversation of a host's frame sent with no
// session.
func (cs *conversations) sessionlessOf(m *Message) *Tracker {
	first := m
	if m.Kind == KindBatch && len(m.Members) > 0 {
		first = &m.Members[0]
	}
	switch {
	case first.Kind == KindRequest && first.MethodIs("initialize"):
		// A host starts: its own conversation, until the answer says
		// which.
		c := cs.newConversation()
		cs.fresh[m.HTTP.Exchange] = true
		cs.sessionless = c
		return c
	case first.Kind == KindRequest:
		md := requestMeta(first.Meta())
		if md.version != nil {
			name, _ := StringValue(Member(md.info, "name"))
			v, _ := StringValue(md.version)
			c := cs.named("m:" + v + "\x00" + name)
			c.stateless = true
			cs.sessionless = c
			return c
		}
		c := cs.named("")
		cs.sessionless = c
		return c
	case cs.sessionless != nil:
		// A notification or a response goes with the host's latest
		// request.
		return cs.sessionless
	}
	return cs.named("")
}

// route observes an HTTP frame in its conversation: every conversation's
// clock moves to at first, so their timeouts come with it.
func (t *Tracker) route(seq int64, at time.Duration, m *Message, d Delivery) Observation {
	cs := t.conversations()
	t.advanceConversations(at)
	c := cs.of(m)
	cs.use++
	cs.lastUse[c], cs.recent = cs.use, c
	c.keyExchange = 0
	if c.stateless {
		// A stateless request is answered in its own POST's response:
		// two clients alike may use the same ids at once.
		c.keyExchange = m.HTTP.Exchange
	}
	obs := c.ObserveDelivery(seq, at, m, d)
	if t.profile == Auto && c.profile != Auto {
		t.profile = c.profile // the session's profile, once a conversation shows it
	}
	t.findings = append(t.findings, obs.Findings...)
	t.pairs = append(t.pairs, obs.Pairs...)
	if h := m.HTTP; m.Dir == S2H && h.Method == "DELETE" && h.Status >= 200 && h.Status < 300 {
		// The host ended the session: what it left owed stays so.
		t.findings = append(t.findings, c.End(at)...)
		cs.forget(c)
	}
	return Observation{Findings: t.findings, Pairs: t.pairs}
}

func (t *Tracker) advanceConversations(at time.Duration) {
	for _, c := range t.convs.all {
		t.findings = append(t.findings, c.Advance(at)...)
	}
}

// each calls fn for every conversation's tracker; appended to t's
// findings are those fn returns.
func (t *Tracker) eachConversation(fn func(c *Tracker) []SessionFinding) {
	if t.convs == nil {
		return
	}
	for _, c := range t.convs.all {
		t.findings = append(t.findings, fn(c)...)
	}
}

// shown is the tracker whose state the session's getters give: on HTTP,
// the conversation of the latest frame (even one the host ended since).
func (t *Tracker) shown() *Tracker {
	if t.convs != nil && t.convs.recent != nil {
		return t.convs.recent
	}
	return t
}
