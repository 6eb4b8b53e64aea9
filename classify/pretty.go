package classify

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// Cuts bound what a pretty-printed value shows of long values.
type Cuts struct {
	// String is the most bytes of a string's text shown (0: no cut); the
	// rest is replaced by a marker with the string's full size.
	String int
	// Elements is the most members of an array or object shown (0: no
	// cut); the rest is replaced by a marker saying how many are left out.
	Elements int
}

// IndentOptions say how Indent lays a value out.
type IndentOptions struct {
	// Cuts cut long strings and containers (zero: none).
	Cuts Cuts
	// MaxLine is the most bytes the first line may hold (0: no bound);
	// the bound of each next line is what Indent's line function returned.
	MaxLine int
}

// Indent lays out js, which must be one valid JSON value, as json.Indent
// does with two spaces a level: a member or element a line, a space after
// a key's colon, empty objects and arrays kept as {} and [], the space
// between values dropped; long values are cut as o.Cuts says (see
// AppendPretty). It passes each line in turn to line, without its line
// feed, with end, how many bytes of js were read when the line ended
// (len(js) for the last line). line returns the bound of the next line:
// the most bytes it may hold, 0 for none, below 0 to stop there. The
// line's bytes are Indent's once line returns.
//
// A line that grows past its bound is passed with its first bound bytes
// and cut set, and end the index of the byte of js that made it too long;
// Indent stops there, and reads no further: a long string that is not cut
// is not scanned past the bound.
//
// The lines are not made safe for a terminal: pass them through
// AppendSafeJSON.
func Indent(js []byte, o IndentOptions, line func(l []byte, end int, cut bool) (next int)) {
	d := indenter{js: js, cuts: o.Cuts, limit: o.MaxLine, line: line}
	d.space()
	if d.value(0) && len(d.cur) > 0 {
		d.line(d.cur, len(js), false)
	}
}

// AppendPretty appends js, which must be one valid JSON value, laid out
// as Indent does, its lines joined by line feeds, with values cut as c
// says. A cut string keeps its start and ends with "…" and its size in
// bytes ("…(880 bytes in all)"); the members of an array or object past
// the cut become one string member (or key) saying how many were left
// out. The result is valid JSON. It is not made safe for a terminal: pass
// it through AppendSafeJSON.
func AppendPretty(dst, js []byte, c Cuts) []byte {
	// The lines are built in dst, one after the other.
	d := indenter{js: js, cuts: c, cur: dst, lineStart: len(dst), keep: true}
	d.space()
	d.value(0)
	return d.cur
}

// An indenter is one run of Indent. Each of its steps reports whether
// the run goes on.
type indenter struct {
	js    []byte
	i     int // the next byte of js to read
	cuts  Cuts
	cur   []byte // the line being built, from lineStart on
	limit int    // the most bytes the line may hold (0: no bound)
	line  func([]byte, int, bool) int
	// keep keeps the lines in cur, each after the one before and a line
	// feed (AppendPretty's), and lineStart is where the line being built
	// starts; line is not called.
	keep      bool
	lineStart int
}

func (d *indenter) space() {
	for d.i < len(d.js) && isSpace(d.js[d.i]) {
		d.i++
	}
}

// emit adds text, which shows the n bytes of js from start, to the line,
// and cuts the line when it grows past its bound.
func (d *indenter) emit(text []byte, start, n int) bool {
	before := len(d.cur) - d.lineStart
	d.cur = append(d.cur, text...)
	return d.grown(before, start, n)
}

// grown cuts the line when what was added to it since it held before
// bytes, which shows the n bytes of js from start, took it past its bound.
func (d *indenter) grown(before, start, n int) bool {
	return d.check(start + min(max(d.limit-before, 0), max(n-1, 0)))
}

// check cuts the line when it is past its bound, at the byte at of js.
func (d *indenter) check(at int) bool {
	if d.limit <= 0 || len(d.cur)-d.lineStart <= d.limit {
		return true
	}
	d.line(d.cur[d.lineStart:d.lineStart+d.limit], at, true)
	return false
}

// newline ends the line, end bytes of js read, and begins the next,
// indented depth levels.
func (d *indenter) newline(depth, end int) bool {
	if d.keep {
		d.cur = append(d.cur, '\n')
		d.lineStart = len(d.cur)
	} else {
		next := d.line(d.cur, end, false)
		if next < 0 {
			return false
		}
		d.limit = next
		d.cur = d.cur[:0]
	}
	for range depth {
		d.cur = append(d.cur, ' ', ' ')
	}
	return true
}

// value lays out the value at d.i and moves past it.
func (d *indenter) value(depth int) bool {
	if d.i >= len(d.js) {
		return true
	}
	switch d.js[d.i] {
	case '{', '[':
		return d.container(depth)
	case '"':
		return d.str()
	}
	start := d.i
	for d.i < len(d.js) {
		switch d.js[d.i] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			return d.emit(d.js[start:d.i], start, d.i-start)
		}
		d.i++
	}
	return d.emit(d.js[start:d.i], start, d.i-start)
}

func (d *indenter) container(depth int) bool {
	open := d.js[d.i]
	object := open == '{'
	close := byte(']')
	if object {
		close = '}'
	}
	if !d.emit(d.js[d.i:d.i+1], d.i, 1) {
		return false
	}
	d.i++
	d.space()
	if d.i < len(d.js) && d.js[d.i] == close {
		d.i++
		return d.emit(d.js[d.i-1:d.i], d.i-1, 1)
	}
	n, left, comma := 0, 0, 0
	for d.i < len(d.js) {
		if d.cuts.Elements > 0 && n >= d.cuts.Elements {
			left++
			d.skipMember(object)
		} else {
			if n == 0 {
				if !d.newline(depth+1, d.i) {
					return false
				}
			} else {
				d.cur = append(d.cur, ',')
				if !d.newline(depth+1, comma+1) || !d.check(comma) {
					return false
				}
			}
			if !d.member(object, depth+1) {
				return false
			}
			n++
		}
		d.space()
		if d.i < len(d.js) && d.js[d.i] == ',' {
			comma = d.i
			d.i++
			d.space()
			continue
		}
		break
	}
	at := d.i
	d.i++ // close
	if left > 0 {
		d.cur = append(d.cur, ',')
		if !d.newline(depth+1, at) {
			return false
		}
		before := len(d.cur) - d.lineStart
		d.cur = appendLeftOut(d.cur, left, object)
		if !d.grown(before, at, 1) {
			return false
		}
	}
	return d.newline(depth, at) && d.emit([]byte{close}, at, 1)
}

// member lays out one member of a container: a key and its value in an
// object.
func (d *indenter) member(object bool, depth int) bool {
	if object {
		if !d.str() {
			return false
		}
		d.space()
		colon := d.i
		d.i++
		d.space()
		if !d.emit([]byte(": "), colon, 1) {
			return false
		}
	}
	return d.value(depth)
}

// appendLeftOut appends the member that stands for left members cut
// from a container.
func appendLeftOut(b []byte, left int, object bool) []byte {
	b = append(b, `"… `...)
	b = strconv.AppendInt(b, int64(left), 10)
	if object {
		return append(b, ` more members left out": null`...)
	}
	return append(b, ` more elements left out"`...)
}

// skipMember moves past one member of a container (a key and its value
// in an object) without laying it out.
func (d *indenter) skipMember(object bool) {
	if object {
		d.skip()
		d.space()
		d.i++ // ':'
		d.space()
	}
	d.skip()
}

// skip moves past the value at d.i; past the end of js when it is not
// JSON.
func (d *indenter) skip() {
	s := scanner{data: d.js, pos: d.i}
	s.skipValue(0)
	if s.stopped() {
		d.i = len(d.js)
		return
	}
	d.i = s.pos
}

// str lays out the string at d.i, cut when it is long. A string that is
// not cut is read only as far as the line's bound.
func (d *indenter) str() bool {
	start := d.i
	if d.cuts.String <= 0 {
		w := len(d.js)
		if d.limit > 0 {
			w = min(w, start+max(d.limit-(len(d.cur)-d.lineStart), 0)+1)
		}
		d.i, _ = stringEnd(d.js[:w], start)
		return d.emit(d.js[start:d.i], start, d.i-start)
	}
	end, _ := stringEnd(d.js, start)
	d.i = end
	body := d.js[start+1 : max(start+1, end-1)]
	if len(body) <= d.cuts.String+32 {
		return d.emit(d.js[start:end], start, end-start)
	}
	cut := d.cuts.String
	// Cut before an escape that would be split, and at a character boundary.
	for k := 0; k < cut; k++ {
		if body[k] == '\\' {
			n := 2
			if k+1 < len(body) && body[k+1] == 'u' {
				n = 6
			}
			if k+n > cut {
				cut = k
				break
			}
			k += n - 1
		}
	}
	for cut > 0 && !utf8.RuneStart(body[cut]) {
		cut--
	}
	before := len(d.cur) - d.lineStart
	d.cur = append(d.cur, '"')
	d.cur = append(d.cur, body[:cut]...)
	d.cur = append(d.cur, "…("...)
	d.cur = strconv.AppendInt(d.cur, int64(len(body)), 10)
	d.cur = append(d.cur, ` bytes in all)"`...)
	return d.grown(before, start, end-start)
}

// stringEnd returns the index just past the JSON string that starts at
// js[i]; len(js) and false when js ends inside it.
func stringEnd(js []byte, i int) (int, bool) {
	for i++; i < len(js); {
		k := bytes.IndexByte(js[i:], '"')
		if k < 0 {
			return len(js), false
		}
		i += k
		n := 0 // backslashes before the quote: an odd run escapes it
		for n < i && js[i-1-n] == '\\' {
			n++
		}
		i++
		if n%2 == 0 {
			return i, true
		}
	}
	return len(js), false
}
