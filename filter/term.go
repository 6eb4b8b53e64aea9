package filter

import (
	"strings"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
)

// key is what a token tests.
type key uint8

const (
	keyText key = iota // plain text: no key
	keyMethod
	keyDir
	keyKind
	keyID
	keyFlag
	keySev
	keyStatus
	keyFate
)

var keyNames = [...]string{
	keyMethod: "method",
	keyDir:    "dir",
	keyKind:   "kind",
	keyID:     "id",
	keyFlag:   "flag",
	keySev:    "sev",
	keyStatus: "status",
	keyFate:   "fate",
}

// term is one token, compiled. Only the fields its key uses are set, so two
// terms read from the same canonical text are equal field by field.
type term struct {
	key key
	neg bool
	// value is the token's canonical value: the phrase for text, the glob
	// for method, the id (its content when quoted), the name for the rest.
	value string
	// quoted says an id was written as a quoted string.
	quoted bool

	glob  glob               // method
	dir   classify.Direction // dir
	kind  classify.Kind      // kind
	codes classify.CodeSet   // flag: any of these codes...
	kinds uint16             // ...or any of these kinds (1<<Kind)
	sev   classify.Severity  // sev
	fate  uint32             // fate: the word's bit (sessions.FateSet)
	text  needle             // text
}

// needsText reports whether the term may have to read the frame's bytes.
func (t *term) needsText() bool { return t.key == keyText && t.text.phrase != "" }

// match evaluates every term but text ones, which Match handles so that
// it fetches the payload at most once.
func (t *term) match(fr *Frame) bool {
	switch t.key {
	case keyMethod:
		return t.glob.match(fr.Method)
	case keyDir:
		return fr.Dir == t.dir
	case keyKind:
		return fr.Kind == t.kind
	case keyID:
		if t.quoted {
			return stringIDIs(fr.ID, t.value)
		}
		return fr.ID == t.value
	case keyFlag:
		return fr.Codes.Intersects(t.codes) || t.kinds&(1<<fr.Kind) != 0
	case keySev:
		return fr.Worst >= t.sev
	case keyStatus:
		return fr.Status == t.value
	case keyFate:
		return fr.Fate&t.fate != 0
	}
	return false
}

// write appends the term's canonical form.
func (t *term) write(b *strings.Builder) {
	if t.neg {
		b.WriteByte('!')
	}
	if t.key == keyText {
		if bareText(t.value) {
			b.WriteString(t.value)
		} else {
			writeQuoted(b, t.value)
		}
		return
	}
	b.WriteString(keyNames[t.key])
	b.WriteByte(':')
	if t.quoted || !bareValue(t.value) {
		writeQuoted(b, t.value)
	} else {
		b.WriteString(t.value)
	}
}

// bareValue reports whether a value reads back the same without quotes.
func bareValue(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r == '"' || isSpace(r) {
			return false
		}
	}
	return true
}

// bareText reports whether a phrase reads back as the same plain text
// without quotes: it must also not look negated or like a key.
func bareText(s string) bool {
	return bareValue(s) && s[0] != '!' && keyPrefix(s) == 0
}

func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
}

func quote(s string) string {
	var b strings.Builder
	writeQuoted(&b, s)
	return b.String()
}

// stringIDIs reports whether wire, an id as on the wire, is a JSON string
// whose decoded content is want. It does not allocate.
func stringIDIs(wire, want string) bool {
	if len(wire) < 2 || wire[0] != '"' || wire[len(wire)-1] != '"' {
		return false
	}
	body := wire[1 : len(wire)-1]
	if strings.IndexByte(body, '\\') < 0 {
		return body == want
	}
	j := 0
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			if j >= len(want) || want[j] != c {
				return false
			}
			i++
			j++
			continue
		}
		r, n, ok := classify.DecodeEscape(body[i:])
		if !ok {
			return false
		}
		i += n
		var buf [utf8.UTFMax]byte
		size := utf8.EncodeRune(buf[:], r)
		if len(want)-j < size || want[j:j+size] != string(buf[:size]) {
			return false
		}
		j += size
	}
	return j == len(want)
}

// isJSONNumber reports whether s is a number as JSON writes it.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
