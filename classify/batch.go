package classify

// This file holds batches: an array classified member by member.

// readBatch classifies an array: each element on its own, as a member.
func (m *Message) readBatch(s *scanner) {
	start := s.pos
	s.skipValue(0)
	if !s.checkEnd() {
		m.notJSON()
		return
	}
	if s.short {
		// Cut at the parse limit: a batch all the same, of untold length.
		m.Kind = KindBatch
		m.addBatch("")
		if s.unsafe {
			m.addUnsafe()
		}
		return
	}
	// Walk the elements again to classify each.
	var elems [][2]int
	var w scanner
	w.data = m.Frame
	w.pos = start + 1
	w.skipSpace()
	if w.pos < len(w.data) && w.data[w.pos] != ']' {
		for {
			w.skipSpace()
			es := w.pos
			w.skipValue(1)
			elems = append(elems, [2]int{es, w.pos})
			w.skipSpace()
			if w.pos >= len(w.data) || w.data[w.pos] != ',' {
				break
			}
			w.pos++
		}
	}
	if len(elems) == 0 {
		m.Kind = KindInvalid
		m.add(CodeEmptyBatch, Error, "The frame is an empty batch; a strict receiver answers one -32600 error.")
		m.answer(InvalidRequest, "Invalid Request: an empty batch")
		return
	}
	m.Kind = KindBatch
	m.addBatch(" of " + plural(len(elems), "message"))
	m.Members = make([]Message, len(elems))
	var answers []Answer
	for i, e := range elems {
		m.Members[i] = classifyMember(m.Frame[e[0]:e[1]], m.Dir, m.Profile)
		if a := m.Members[i].Answer; a != nil {
			answers = append(answers, *a)
		}
	}
	if answers != nil {
		m.Answer = &Answer{Batch: answers, OmitNullID: m.Profile == MCP}
	}
	if s.unsafe {
		m.addUnsafe()
	}
}

// addBatch raises finding batch: an error under MCP, which removed
// batching, info otherwise. size says how many messages, when known.
func (m *Message) addBatch(size string) {
	if m.Profile == MCP {
		m.add(CodeBatch, Error, "The frame is a batch; MCP removed JSON-RPC batching in revision 2025-06-18.")
	} else {
		m.add(CodeBatch, Info, "The frame is a batch"+size+".")
	}
}

// classifyMember judges one element of a batch.
func classifyMember(elem []byte, dir Direction, p Profile) Message {
	m := Message{Dir: dir, Profile: p, Frame: elem, Size: int64(len(elem))}
	var s scanner
	s.data = elem
	if len(elem) > 0 && elem[0] == '{' {
		var env envelope
		env.read(&m, &s)
		env.cut = s.short
		m.judge(&env, true)
		if s.unsafe {
			m.addUnsafe()
		}
		return m
	}
	t := s.peekType()
	m.Kind = KindNonObject
	m.add(CodeNonObject, Error, "This batch member is "+t.article()+", not a JSON-RPC message (a message must be a JSON object).")
	if dir == H2S {
		m.answer(InvalidRequest, "Invalid Request: a batch member must be a JSON object, not "+t.article())
	}
	return m
}

func plural(n int, noun string) string {
	if n == 1 {
		return "one " + noun
	}
	return itoa(n) + " " + noun + "s"
}
