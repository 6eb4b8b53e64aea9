package hostconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// kind is the type of a JSON value.
type kind int

const (
	kObject kind = iota
	kArray
	kString
	kOther // number, true, false, null
)

// A node is a JSON value and where its bytes are: src[start:end].
type node struct {
	kind       kind
	start, end int
	members    []member // kObject, in file order
	elems      []*node  // kArray
}

type member struct {
	key   string // decoded
	value *node
	// keyStart is where the member's key token starts.
	keyStart int
}

// get returns the value of the last member named key (a JSON parser keeps
// the last of duplicate keys, as the hosts do), or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kObject {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i].value
		}
	}
	return nil
}

func (n *node) memberIndex(key string) int {
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return i
		}
	}
	return -1
}

// A SyntaxError says where a file stops being JSON (or JSONC).
type SyntaxError struct {
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// parse reads src as JSON with comments (// and /* */) and trailing
// commas, which VS Code accepts; files of the hosts that want strict JSON
// rarely have them, and reading them anyway costs nothing.
func parse(src []byte) (*node, error) {
	p := &parser{src: src}
	if bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) {
		p.pos = 3
	}
	p.space()
	if p.pos >= len(src) {
		return nil, p.fail("the file is empty; an MCP config is a JSON object, as in {\"mcpServers\": {}}")
	}
	n, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.pos < len(src) {
		return nil, p.fail("unexpected text after the end of the JSON value")
	}
	return n, nil
}

type parser struct {
	src []byte
	pos int
}

// maxDepth bounds nesting, so a hostile file cannot exhaust the stack.
const maxDepth = 1000

func (p *parser) fail(msg string) error {
	line, col := 1, 1
	for _, c := range p.src[:min(p.pos, len(p.src))] {
		if c == '\n' {
			line++
			col = 1
		} else if c&0xc0 != 0x80 { // count characters, not UTF-8 continuation bytes
			col++
		}
	}
	return &SyntaxError{Line: line, Column: col, Msg: msg}
}

// space skips whitespace and comments.
func (p *parser) space() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '/':
			if i := bytes.IndexByte(p.src[p.pos:], '\n'); i >= 0 {
				p.pos += i + 1
			} else {
				p.pos = len(p.src)
			}
		case c == '/' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '*':
			if i := bytes.Index(p.src[p.pos+2:], []byte("*/")); i >= 0 {
				p.pos += 2 + i + 2
			} else {
				p.pos = len(p.src) // an unclosed comment: the value after it is missing
			}
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (*node, error) {
	if depth > maxDepth {
		return nil, p.fail("values are nested too deeply")
	}
	if p.pos >= len(p.src) {
		return nil, p.fail("the file ends where a value should be")
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		start := p.pos
		if err := p.str(); err != nil {
			return nil, err
		}
		return &node{kind: kString, start: start, end: p.pos}, nil
	case c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z':
		start := p.pos
		for p.pos < len(p.src) && bytes.IndexByte([]byte("+-.0123456789abcdefghijklmnopqrstuvwxyzE"), p.src[p.pos]) >= 0 {
			p.pos++
		}
		tok := p.src[start:p.pos]
		if !json.Valid(tok) {
			p.pos = start
			return nil, p.fail(fmt.Sprintf("%q is not a JSON value", tok))
		}
		return &node{kind: kOther, start: start, end: p.pos}, nil
	default:
		return nil, p.fail(fmt.Sprintf("unexpected %q where a value should be", rune(c)))
	}
}

// str skips a string token, checking it is valid JSON.
func (p *parser) str() error {
	start := p.pos
	p.pos++
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == '\\':
			p.pos += 2
		case c == '"':
			p.pos++
			if !json.Valid(p.src[start:p.pos]) {
				p.pos = start
				return p.fail("this string has a control character or a bad escape in it")
			}
			return nil
		case c == '\n':
			p.pos = start
			return p.fail("this string is not closed on its line")
		default:
			p.pos++
		}
	}
	p.pos = start
	return p.fail("this string is not closed")
}

func (p *parser) object(depth int) (*node, error) {
	n := &node{kind: kObject, start: p.pos}
	err := p.seq('}', "an object", func() error {
		if p.src[p.pos] != '"' {
			return p.fail("a key in double quotes should be here")
		}
		keyStart := p.pos
		if err := p.str(); err != nil {
			return err
		}
		var key string
		json.Unmarshal(p.src[keyStart:p.pos], &key) // valid: str checked it
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return p.fail("a : is missing after the key")
		}
		p.pos++
		p.space()
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		n.members = append(n.members, member{key: key, value: v, keyStart: keyStart})
		return nil
	})
	n.end = p.pos
	return n, err
}

func (p *parser) array(depth int) (*node, error) {
	n := &node{kind: kArray, start: p.pos}
	err := p.seq(']', "an array", func() error {
		v, err := p.value(depth + 1)
		if err == nil {
			n.elems = append(n.elems, v)
		}
		return err
	})
	n.end = p.pos
	return n, err
}

// seq reads the items of an object or array from its opening bracket to
// close, calling item at the start of each: commas between them, and one
// after the last allowed (JSONC).
func (p *parser) seq(close byte, what string, item func() error) error {
	p.pos++
	for first := true; ; first = false {
		p.space()
		if p.pos >= len(p.src) {
			return p.fail(fmt.Sprintf("the file ends inside %s; a %c is missing", what, close))
		}
		if p.src[p.pos] == close {
			p.pos++
			return nil
		}
		if !first {
			if p.src[p.pos] != ',' {
				return p.fail(fmt.Sprintf("a comma or %c is missing after the value before", close))
			}
			p.pos++
			p.space()
			if p.pos < len(p.src) && p.src[p.pos] == close {
				p.pos++
				return nil // a trailing comma
			}
			if p.pos >= len(p.src) {
				return p.fail(fmt.Sprintf("the file ends inside %s; a %c is missing", what, close))
			}
		}
		if err := item(); err != nil {
			return err
		}
	}
}

// text decodes a string node (empty for any other kind).
func text(src []byte, n *node) string {
	var s string
	if n != nil && n.kind == kString {
		json.Unmarshal(src[n.start:n.end], &s)
	}
	return s
}
