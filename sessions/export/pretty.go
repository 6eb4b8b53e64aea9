package export

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// Cuts bound what a pretty-printed frame shows of long values.
type Cuts struct {
	// String is the most bytes of a string's text shown (0: no cut); the
	// rest is replaced by a marker with the string's full size.
	String int
	// Elements is the most members of an array or object shown (0: no
	// cut); the rest is replaced by a marker saying how many are left out.
	Elements int
}

// DefaultCuts are the cuts of the text exports.
var DefaultCuts = Cuts{String: 240, Elements: 100}

// appendPretty appends the JSON text js, which must be valid JSON,
// indented by two spaces a level from indent, with values cut as c says.
// A cut string keeps its start and ends with "…" and its size in bytes
// ("…(880 bytes in all)"); the members of an array or object past the
// cut become one string member (or key) saying how many were left out.
// The result is valid JSON. It is not made safe for a terminal: pass it
// through classify.AppendSafeJSON.
func appendPretty(dst, js []byte, c Cuts) []byte {
	p := pretty{js: js, c: c, dst: dst}
	p.skipSpace()
	p.value(0)
	return p.dst
}

type pretty struct {
	js  []byte
	i   int
	c   Cuts
	dst []byte
}

func (p *pretty) skipSpace() {
	for p.i < len(p.js) {
		switch p.js[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *pretty) newline(depth int) {
	p.dst = append(p.dst, '\n')
	for range depth {
		p.dst = append(p.dst, ' ', ' ')
	}
}

// value writes the value at p.i and moves past it.
func (p *pretty) value(depth int) {
	if p.i >= len(p.js) {
		return
	}
	switch p.js[p.i] {
	case '{', '[':
		p.container(depth)
	case '"':
		p.str()
	default:
		start := p.i
		for p.i < len(p.js) {
			switch p.js[p.i] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				p.dst = append(p.dst, p.js[start:p.i]...)
				return
			}
			p.i++
		}
		p.dst = append(p.dst, p.js[start:p.i]...)
	}
}

func (p *pretty) container(depth int) {
	open := p.js[p.i]
	close := byte(']')
	if open == '{' {
		close = '}'
	}
	p.i++
	p.skipSpace()
	p.dst = append(p.dst, open)
	if p.i < len(p.js) && p.js[p.i] == close {
		p.i++
		p.dst = append(p.dst, close)
		return
	}
	n, left := 0, 0
	for p.i < len(p.js) {
		if p.c.Elements > 0 && n >= p.c.Elements {
			left++
			p.skipMember(open == '{')
		} else {
			if n > 0 {
				p.dst = append(p.dst, ',')
			}
			p.newline(depth + 1)
			if open == '{' {
				p.str()
				p.skipSpace()
				p.i++ // ':'
				p.skipSpace()
				p.dst = append(p.dst, ':', ' ')
			}
			p.value(depth + 1)
			n++
		}
		p.skipSpace()
		if p.i < len(p.js) && p.js[p.i] == ',' {
			p.i++
			p.skipSpace()
			continue
		}
		break
	}
	p.i++ // close
	if left > 0 {
		p.dst = append(p.dst, ',')
		p.newline(depth + 1)
		p.dst = append(p.dst, `"… `...)
		p.dst = strconv.AppendInt(p.dst, int64(left), 10)
		if open == '{' {
			p.dst = append(p.dst, ` more members left out": null`...)
		} else {
			p.dst = append(p.dst, ` more elements left out"`...)
		}
	}
	p.newline(depth)
	p.dst = append(p.dst, close)
}

// skipMember moves past one member of a container (a key and its value
// in an object) without writing it.
func (p *pretty) skipMember(object bool) {
	if object {
		p.skipValue()
		p.skipSpace()
		p.i++ // ':'
		p.skipSpace()
	}
	p.skipValue()
}

// skipValue moves past the value at p.i.
func (p *pretty) skipValue() {
	depth := 0
	for p.i < len(p.js) {
		switch p.js[p.i] {
		case '"':
			p.i = stringEnd(p.js, p.i)
			if depth == 0 {
				return
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return
			}
			depth--
			if depth == 0 {
				p.i++
				return
			}
		case ',':
			if depth == 0 {
				return
			}
		case ' ', '\t', '\n', '\r':
			if depth == 0 {
				return
			}
		}
		p.i++
	}
}

// stringEnd returns the index just past the JSON string that starts at i.
func stringEnd(js []byte, i int) int {
	for i++; i < len(js); {
		k := bytes.IndexByte(js[i:], '"')
		if k < 0 {
			return len(js)
		}
		i += k
		n := 0 // backslashes before the quote: an odd run escapes it
		for n < i && js[i-1-n] == '\\' {
			n++
		}
		i++
		if n%2 == 0 {
			return i
		}
	}
	return len(js)
}

// str writes the string at p.i, cut when it is long.
func (p *pretty) str() {
	start := p.i
	end := stringEnd(p.js, start)
	p.i = end
	body := p.js[start+1 : max(start+1, end-1)]
	if p.c.String <= 0 || len(body) <= p.c.String+32 {
		p.dst = append(p.dst, p.js[start:end]...)
		return
	}
	cut := p.c.String
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
	p.dst = append(p.dst, '"')
	p.dst = append(p.dst, body[:cut]...)
	p.dst = append(p.dst, "…("...)
	p.dst = strconv.AppendInt(p.dst, int64(len(body)), 10)
	p.dst = append(p.dst, ` bytes in all)"`...)
}
