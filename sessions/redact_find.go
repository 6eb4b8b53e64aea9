package sessions

import (
	"bytes"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
)

// This file holds how the redactor finds a secret: every spelling of its
// value a peer may write in JSON, where the JSON rules let it be masked.

// A finder finds the spellings of secrets in b that start before stop, in
// order.
type finder struct {
	r    *Redactor
	b    []byte
	stop int
	// lit is, for each secret, where its value is next written as it
	// is (stop: nowhere before stop; -1: not looked for yet), so that
	// each plain search covers b once; litEnd where that spelling ends.
	lit, litEnd []int
	// lx, when set, is where the frame b is part of stands just before
	// b: only the spellings the JSON rules let be masked are found.
	// view is what it says of b, worked out when a first spelling is
	// found (frames with no secret cost nothing more).
	lx   *jsonLexer
	view *jsonView
}

// may reports whether b[start:end] may be masked.
func (f *finder) may(start, end int) bool {
	if f.lx == nil {
		return true
	}
	if f.view == nil {
		f.view = newJSONView(f.lx, f.b)
	}
	return f.view.mayMask(f.b, start, end)
}

// plainEnd returns where the spelling of sec's value written as it is at
// p ends, when it may be masked: at the value's length, or, where that
// would end inside an escape, with the escape that spells the value's
// last backslash.
func (f *finder) plainEnd(p int, sec *secret) (int, bool) {
	e := p + len(sec.value)
	if f.may(p, e) {
		return e, true
	}
	if f.lx != nil && f.view.bad >= e && !f.view.inString(p) {
		// Written outside the frame's strings (a number): left in clear.
		f.r.inClear.CompareAndSwap(nil, sec)
	}
	if e2, ok := spelledAt(f.b, p, sec.value); ok && e2 != e && f.may(p, e2) {
		return e2, true
	}
	return 0, false
}

// find returns the first spelling of a secret that starts at or after
// from (s == nil: none). Of spellings that start at the same place, the
// longest value's wins.
func (f *finder) find(from int) (start, end int, s *secret) {
	r, b := f.r, f.b
	start = f.stop
	if from >= f.stop {
		return start, 0, nil
	}
	// A spelling with no escape is found by a plain search.
	for i := range r.secrets {
		sec := &r.secrets[i]
		for at := from; f.lit[i] < from; {
			f.lit[i] = f.stop
			k := bytes.Index(b[at:min(len(b), f.stop+len(sec.value)-1)], sec.value)
			if k < 0 {
				break
			}
			if e, ok := f.plainEnd(at+k, sec); ok {
				f.lit[i], f.litEnd[i] = at+k, e
				break
			}
			at += k + 1
			f.lit[i] = -1 // one that may not be masked: look on
		}
		if f.lit[i] < start {
			start, end, s = f.lit[i], f.litEnd[i], sec
		}
	}
	// One with an escape is found from its first escape: that decodes
	// to one of the value's characters, and the value's bytes before
	// that character are written as they are just before it.
	for q := from; q < len(b) && q-r.longest < start; q++ {
		k := bytes.IndexByte(b[q:], '\\')
		if k < 0 {
			break
		}
		q += k
		// Every backslash is looked at, the second of \\\\ too: a peer's
		// literal \\u0073 is a spelling (see appendMasked).
		if q+1 < len(b) && r.plainAfter[b[q+1]] {
			continue // \" or \\ when no value holds " or \, say
		}
		c, _, ok := classify.DecodeEscape(b[q:])
		if !ok {
			continue
		}
		for _, sp := range r.spotsOf(c) {
			sec, p := &r.secrets[sp.secret], q-sp.off
			if p >= from && (p < start || p == start && s != nil && longerFirst(r, sec, s)) && bytes.Equal(b[p:q], sec.value[:sp.off]) {
				if e, ok := spelledAt(b, p, sec.value); ok && f.may(p, e) {
					start, end, s = p, e, sec
				}
			}
		}
	}
	return start, end, s
}

// longerFirst reports whether a comes before b in r's order (the longer
// value first).
func longerFirst(r *Redactor, a, b *secret) bool {
	for i := range r.secrets {
		switch &r.secrets[i] {
		case b:
			return false
		case a:
			return true
		}
	}
	return false
}

// spotsOf returns where the character c is in the values.
func (r *Redactor) spotsOf(c rune) []spot {
	if c < utf8.RuneSelf {
		return r.spots[c]
	}
	return r.other[c]
}

// spelledAt reports whether b holds a spelling of value at p (each of its
// characters as itself or as a JSON escape of it), and where it ends.
func spelledAt(b []byte, p int, value []byte) (end int, ok bool) {
	j := p
	for v := value; len(v) > 0; {
		c, size := utf8.DecodeRune(v)
		if c == utf8.RuneError && size == 1 {
			c = -1 // matches only itself
		}
		if j < len(b) && b[j] == '\\' && c >= 0 {
			// An escape is tried first, so that a backslash in a value
			// matches the \\ that stands for it.
			if d, n, ok := classify.DecodeEscape(b[j:]); ok && d == c {
				j += n
				v = v[size:]
				continue
			}
		}
		if !bytes.HasPrefix(b[j:], v[:size]) {
			return 0, false
		}
		j += size
		v = v[size:]
	}
	return j, true
}
