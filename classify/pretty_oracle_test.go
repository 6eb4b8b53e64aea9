package classify

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The exports' appendPretty, which skipped the members it cut with a
// walker of its own, kept as the oracle of AppendPretty: for any valid
// JSON and any cuts, both write the same bytes. Run it with
//
//	go test -run XXX -fuzz FuzzAppendPrettyMatchesItsOracle -fuzztime 60s ./classify
func FuzzAppendPrettyMatchesItsOracle(f *testing.F) {
	cuts := [][2]uint8{{0, 0}, {1, 1}, {4, 2}, {70, 4}}
	for k, frame := range envelopeFrames() {
		c := cuts[k%len(cuts)]
		f.Add(frame, c[0], c[1])
	}
	for _, s := range []string{`{"a":[1,2,3,4,5,6,7],"o":{"a":1,"b":2,"c":3,"d":4,"e":5}}`, " [ 1 , \"x y\" , { } , [ [ ] ] ] ",
		`"` + strings.Repeat("é\\u00e9x\\\"", 40) + `"`, `{"` + strings.Repeat("k", 80) + `":[[],{}]}`} {
		for _, c := range cuts {
			f.Add([]byte(s), c[0], c[1])
		}
	}
	f.Fuzz(func(t *testing.T, js []byte, str, elements uint8) {
		if !json.Valid(js) {
			return
		}
		c := Cuts{String: int(str), Elements: int(elements)}
		got := AppendPretty([]byte("x"), js, c)
		want := oracleAppendPretty([]byte("x"), js, c)
		if !bytes.Equal(got, want) {
			t.Fatalf("%q cut %+v:\n%s\noracle:\n%s", js, c, got, want)
		}
	})
}

// oracleAppendPretty appends the JSON text js, which must be valid JSON,
// indented by two spaces a level from indent, with values cut as c says.
// A cut string keeps its start and ends with "…" and its size in bytes
// ("…(880 bytes in all)"); the members of an array or object past the
// cut become one string member (or key) saying how many were left out.
// The result is valid JSON. It is not made safe for a terminal: pass it
// through AppendSafeJSON.
func oracleAppendPretty(dst, js []byte, c Cuts) []byte {
	p := oraclePretty{js: js, c: c, dst: dst}
	p.skipSpace()
	p.value(0)
	return p.dst
}

type oraclePretty struct {
	js  []byte
	i   int
	c   Cuts
	dst []byte
}

func (p *oraclePretty) skipSpace() {
	for p.i < len(p.js) {
		switch p.js[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *oraclePretty) newline(depth int) {
	p.dst = append(p.dst, '\n')
	for range depth {
		p.dst = append(p.dst, ' ', ' ')
	}
}

// value writes the value at p.i and moves past it.
func (p *oraclePretty) value(depth int) {
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

func (p *oraclePretty) container(depth int) {
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
func (p *oraclePretty) skipMember(object bool) {
	if object {
		p.skipValue()
		p.skipSpace()
		p.i++ // ':'
		p.skipSpace()
	}
	p.skipValue()
}

// skipValue moves past the value at p.i.
func (p *oraclePretty) skipValue() {
	depth := 0
	for p.i < len(p.js) {
		switch p.js[p.i] {
		case '"':
			p.i = oracleStringEnd(p.js, p.i)
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

// oracleStringEnd returns the index just past the JSON string that starts at i.
func oracleStringEnd(js []byte, i int) int {
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
func (p *oraclePretty) str() {
	start := p.i
	end := oracleStringEnd(p.js, start)
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

// BenchmarkAppendPretty lays out a 1 KiB frame as the exports do, with
// the oracle beside it as the baseline of the same run.
func BenchmarkAppendPretty(b *testing.B) {
	frame := frame1KiB(true)
	for _, c := range []struct {
		name string
		fn   func(dst, js []byte, c Cuts) []byte
	}{{"Indent", AppendPretty}, {"oracle", oracleAppendPretty}} {
		b.Run(c.name, func(b *testing.B) {
			var dst []byte
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				dst = c.fn(dst[:0], frame, Cuts{String: 240, Elements: 100})
			}
		})
	}
}
