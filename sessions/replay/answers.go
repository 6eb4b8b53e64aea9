package replay

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// answer matches a host request and queues the recorded answer. s.mu is
// held.
func (s *server) answer(m *classify.Message, body []byte, now time.Time) {
	if it, ok := s.reply(m, body, now, s.fwd != nil); ok {
		s.pushAnswer(it)
	}
}

// pushAnswer queues an answer to a host request, or keeps it until the
// host has answered the server request asked within the request, when
// the recorded server waited for that (recFrame.gate). s.mu is held.
func (s *server) pushAnswer(it outItem) {
	if it.raw != nil || s.rec.frames[it.frame].gate < 0 {
		s.push(it)
		return
	}
	if s.gated == nil {
		s.gated = map[int32][]outItem{}
	}
	g := s.rec.frames[it.frame].gate
	s.gated[g] = append(s.gated[g], it)
}

// reply matches a host request: it returns the answer to queue (none
// when forwarded, or when the recording never answered), and schedules
// what came after the recorded request. s.mu is held.
func (s *server) reply(m *classify.Message, body []byte, now time.Time, forward bool) (outItem, bool) {
	method := m.Method()
	var i int32
	var why string
	round := false // a retry of a call replay asked for input
	if state, retry := retryParts(method, body); retry {
		i, why, round = s.matchRetry(method, body, state)
		if !round {
			why = fmt.Sprintf("the request retries a multi round-trip call (it carries inputResponses or requestState), but replay answered no %s request%s with input_required", esc(method), s.forCall(method, body))
		}
	} else {
		i, why = s.match(method, body)
	}
	if i < 0 && forward && !round {
		s.forwardRequest(m, body)
		return outItem{}, false
	}
	if i < 0 {
		s.stats.Unmatched++
		code := classify.InvalidParams
		if len(s.rec.byMethod[method]) == 0 {
			code = classify.MethodNotFound
		}
		s.log("%s id %s: no recorded answer: %s", esc(method), esc(m.ID().String()), why)
		return outItem{due: now, raw: errorFrame(m.ID().Raw, code, "rpctap replay: no recorded answer: "+why), answer: true}, true
	}
	s.stats.Answered++
	if s.fwd != nil && method == "initialize" {
		s.forwardHandshake(body)
	}
	q := &s.rec.frames[i]
	q.used = true
	if round {
		s.stats.Retries++
		s.log("%s id %s: the retry of a call replay asked for input, answered as line %d of the recording (its recorded retry)", esc(method), esc(m.ID().String()), q.line)
	} else {
		s.log("%s id %s: answered as line %d of the recording", esc(method), esc(m.ID().String()), q.line)
	}
	s.scheduleAfter(i, now)
	if q.pair < 0 {
		s.log("the recording never answered line %d, so neither does replay", q.line)
		return outItem{}, false
	}
	if s.rec.frames[q.pair].inputRequired {
		s.askedInput(method, body, q.pair)
	}
	return outItem{due: now.Add(s.wait(s.rec.delay(q.pair))), frame: q.pair, id: bytes.Clone(m.ID().Raw), answer: true}, true
}

// answerBatch answers a host batch with a batch: each request in it
// matched as on its own (none forwarded), its notifications taken as on
// their own. s.mu is held.
func (s *server) answerBatch(m *classify.Message, now time.Time) {
	var answers [][]byte
	for i := range m.Members {
		mm := &m.Members[i]
		switch mm.Kind {
		case classify.KindRequest:
			s.sawHostID(mm)
			it, ok := s.reply(mm, mm.Frame, now, false)
			if !ok {
				continue
			}
			b := it.raw
			if b == nil {
				var err error
				if b, _, err = s.rec.read(it.frame); err != nil {
					s.werr = err
					return
				}
				b = withID(b, it.id)
			}
			answers = append(answers, b)
		case classify.KindNotification:
			s.notified(mm, mm.Frame, now)
		}
	}
	if len(answers) > 0 {
		s.push(outItem{due: now, raw: append(append([]byte{'['}, bytes.Join(answers, []byte{','})...), ']'), answer: true})
	}
}

// notified matches a host notification, to play what the server sent
// after it, and returns the recorded one it took (-1: none). s.mu is
// held.
func (s *server) notified(m *classify.Message, body []byte, now time.Time) int32 {
	if s.fwd != nil {
		s.forwardFrame(body)
	}
	method := m.Method()
	// Of the same call: what a server sent after a document was opened is
	// not played after another one is.
	hs := sessions.Hasher{Ignore: s.opts.Ignore}
	h, idn, _ := hs.HashCall(method, body)
	key := idn.Call.Key
	pick := int32(-1)
	for _, c := range s.rec.byMethod[method] {
		f := &s.rec.frames[c]
		if f.kind != classify.KindNotification || f.used || f.call.Key != key && !f.masked {
			continue
		}
		if f.hash == h {
			pick = c
			break
		}
		if pick < 0 {
			pick = c
		}
	}
	if pick < 0 {
		return -1
	}
	s.rec.frames[pick].used = true
	if len(s.rec.after[pick]) > 0 {
		s.log("%s: playing what the server sent after line %d", esc(method), s.rec.frames[pick].line)
	}
	s.scheduleAfter(pick, now)
	return pick
}

// answered takes the host's answer to a server request replay sent.
// s.mu is held.
func (s *server) answered(m *classify.Message, body []byte, now time.Time) {
	if !m.HasID() {
		return
	}
	key := m.ID().Key()
	if s.forwardAnswer(key, body) {
		return
	}
	i, ok := s.serverQ[key]
	if !ok {
		s.log("the host answered id %s, which replay never asked", esc(m.ID().String()))
		return
	}
	delete(s.serverQ, key)
	if p := s.rec.frames[i].pair; p >= 0 {
		s.scheduleAfter(p, now)
		for _, it := range s.gated[p] {
			it.due = now.Add(s.wait(max(s.rec.frames[it.frame].t-s.rec.frames[p].t, 0)))
			s.push(it)
		}
		delete(s.gated, p)
	}
}

// errorFrame is a JSON-RPC error answer to id.
func errorFrame(id []byte, code int, msg string) []byte {
	b := []byte(`{"jsonrpc":"2.0","id":`)
	if id == nil {
		id = []byte("null")
	}
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = classify.AppendString(b, msg)
	return append(b, "}}"...)
}
