package filter

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/internal/textdist"
	"github.com/rpctap/rpctap/sessions"
)

// A SyntaxError says what is wrong with an expression and where.
type SyntaxError struct {
	// Column is where the fault is, counted in characters from 1.
	Column int
	// Msg is the whole sentence, column included.
	Msg string
}

func (e *SyntaxError) Error() string { return e.Msg }

// Hints that close the errors about each key's values.
const (
	keysHint   = "use method, dir, kind, id, flag, sev, status, fate, or quote the token to search for it as text"
	methodHint = "write a glob, as in method:tools/*"
	dirHint    = "use h2s (or >), s2h (or <), or err"
	kindHint   = "use request, response, notification, invalid, not-json, stray, batch, blank, or non-object"
	idHint     = `use a number, null, or a quoted string, as in id:"abc"`
	flagHint   = "use a finding code or unmatched, invalid, redacted, timeout"
	sevHint    = "use error, warn, or info"
	statusHint = "use pending, ok, error, late, cancelled, or gap"
	fateHint   = "use injected, captured, held, edited, dropped, answered-in-place, expired, detached, overflow, waited, ended, or partial"
)

// Summary flags: names that stand for a group of findings (and kinds).
var summaryFlags = []struct {
	name  string
	codes []classify.Code
	kinds []classify.Kind
}{
	{"unmatched", []classify.Code{classify.CodeUnmatchedResponse, classify.CodeDuplicateResponse}, nil},
	{"invalid",
		[]classify.Code{classify.CodeBadMethod, classify.CodeBadID, classify.CodeBadJSONRPC, classify.CodeBadParams, classify.CodeEmptyBatch},
		[]classify.Kind{classify.KindInvalid, classify.KindNotJSON, classify.KindNonObject, classify.KindStray}},
	{"redacted", []classify.Code{classify.CodeRedacted, classify.CodeOpaqueError, classify.CodeLeakyError}, nil},
	{"timeout", []classify.Code{classify.CodeTimeout, classify.CodeLateResponse}, nil},
}

var statuses = []string{"pending", "ok", "error", "late", "cancelled", "gap"}

// parser reads one expression; off is a byte offset into expr.
type parser struct {
	expr string
	off  int
}

func parse(expr string) ([]term, error) {
	p := &parser{expr: expr}
	var terms []term
	for {
		p.skipSpace()
		if p.off == len(p.expr) {
			return terms, nil
		}
		t, err := p.token()
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
	}
}

// errorf builds "WHAT at column N: HINT", with a suggestion after the
// column when there is one.
func (p *parser) errorf(off int, hint, suggestion, format string, args ...any) error {
	col := utf8.RuneCountInString(p.expr[:off]) + 1
	msg := fmt.Sprintf(format, args...) + fmt.Sprintf(" at column %d", col)
	if suggestion != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", suggestion)
	}
	if hint != "" {
		msg += ": " + hint
	}
	return &SyntaxError{Column: col, Msg: msg}
}

func (p *parser) peek() (rune, int) {
	if p.off >= len(p.expr) {
		return -1, 0
	}
	return utf8.DecodeRuneInString(p.expr[p.off:])
}

func (p *parser) skipSpace() {
	for {
		r, w := p.peek()
		if w == 0 || !isSpace(r) {
			return
		}
		p.off += w
	}
}

func isSpace(r rune) bool { return unicode.IsSpace(r) }

// atEnd reports whether the current token ends here.
func (p *parser) atEnd() bool {
	r, w := p.peek()
	return w == 0 || isSpace(r)
}

// token reads one token: [!] then "phrase", key:value, or a word.
func (p *parser) token() (term, error) {
	var t term
	if p.expr[p.off] == '!' {
		t.neg = true
		p.off++
		if p.atEnd() {
			return t, p.errorf(p.off-1, `write it right before a token, as in !dir:err`, "", `"!" with nothing after it`)
		}
		if p.expr[p.off] == '!' {
			return t, p.errorf(p.off, `negate a token once, and quote a phrase that starts with "!"`, "", "second negation")
		}
	}
	if p.expr[p.off] == '"' {
		phrase, err := p.quoted()
		if err != nil {
			return t, err
		}
		t.key, t.value, t.text = keyText, phrase, newNeedle(phrase)
		return t, nil
	}
	start := p.off
	if n := keyPrefix(p.expr[p.off:]); n > 0 {
		name := p.expr[start : start+n]
		k, ok := lookupKey(name)
		if !ok {
			return t, p.errorf(start, keysHint, suggest(strings.ToLower(name), keyNames[1:]), "unknown key %q", name)
		}
		p.off += n + 1
		t.key = k
		return t, p.value(&t)
	}
	word, err := p.word()
	if err != nil {
		return t, err
	}
	t.key, t.value, t.text = keyText, word, newNeedle(word)
	return t, nil
}

// keyPrefix gives the length of s's key, when s starts with ASCII letters
// and a colon (any such token is meant as a key), or 0.
func keyPrefix(s string) int {
	n := 0
	for n < len(s) && ('a' <= s[n]|0x20 && s[n]|0x20 <= 'z') {
		n++
	}
	if n == 0 || n == len(s) || s[n] != ':' {
		return 0
	}
	return n
}

func lookupKey(name string) (key, bool) {
	for k, n := range keyNames {
		if n != "" && strings.EqualFold(n, name) {
			return key(k), true
		}
	}
	return 0, false
}

// word reads an unquoted run up to white space.
func (p *parser) word() (string, error) {
	start := p.off
	for !p.atEnd() {
		if p.expr[p.off] == '"' {
			return "", p.errorf(p.off, "quote the whole phrase or value instead", "", "quote inside a word")
		}
		_, w := p.peek()
		p.off += w
	}
	return p.expr[start:p.off], nil
}

// quoted reads a "..." phrase; a backslash takes the next character
// literally. The phrase must end the token.
func (p *parser) quoted() (string, error) {
	open := p.off
	p.off++
	var b strings.Builder
	for {
		if p.off >= len(p.expr) {
			return "", p.errorf(open, `end it with another "`, "", "unclosed quote")
		}
		c := p.expr[p.off]
		switch c {
		case '"':
			p.off++
			if !p.atEnd() {
				return "", p.errorf(p.off, "separate tokens with a space", "", "text right after a closing quote")
			}
			return b.String(), nil
		case '\\':
			p.off++
			if p.off >= len(p.expr) {
				return "", p.errorf(open, `end it with another "`, "", "unclosed quote")
			}
			c = p.expr[p.off]
		}
		b.WriteByte(c)
		p.off++
	}
}

// value reads and compiles the value of a key:value token into t.
func (p *parser) value(t *term) error {
	at := p.off
	var (
		v      string
		quoted bool
		err    error
	)
	if p.off < len(p.expr) && p.expr[p.off] == '"' {
		v, err = p.quoted()
		quoted = true
	} else {
		v, err = p.word()
	}
	if err != nil {
		return err
	}
	if v == "" && !(quoted && (t.key == keyMethod || t.key == keyID)) {
		return p.errorf(at, hintFor(t.key), "", "missing value after %q", keyNames[t.key]+":")
	}
	low := strings.ToLower(v)
	switch t.key {
	case keyMethod:
		t.value, t.glob = v, compileGlob(v)
	case keyDir:
		switch low {
		case "h2s", ">", "→":
			t.dir = classify.H2S
		case "s2h", "<", "←":
			t.dir = classify.S2H
		case "err":
			t.dir = classify.Err
		default:
			return p.errorf(at, dirHint, suggest(low, []string{"h2s", "s2h", "err"}), "unknown direction %q", v)
		}
		t.value = t.dir.String()
	case keyKind:
		k, ok := classify.ParseKind(low)
		if !ok {
			return p.errorf(at, kindHint, suggest(low, kindNames()), "unknown kind %q", v)
		}
		t.kind, t.value = k, k.String()
	case keyID:
		if !quoted && v != "null" && !isJSONNumber(v) {
			return p.errorf(at, fmt.Sprintf("write id:%s for a string id", quote(v)), "", "id %q is not a number or null", v)
		}
		t.value, t.quoted = v, quoted
	case keyFlag:
		for _, s := range summaryFlags {
			if low == s.name {
				for _, c := range s.codes {
					t.codes = t.codes.With(c)
				}
				for _, k := range s.kinds {
					t.kinds |= 1 << k
				}
				t.value = s.name
				return nil
			}
		}
		c, ok := classify.ParseCode(low)
		if !ok {
			return p.errorf(at, flagHint, suggest(low, flagNames()), "unknown flag %q", v)
		}
		t.codes, t.value = classify.CodeSet{}.With(c), c.String()
	case keySev:
		s, ok := classify.ParseSeverity(low)
		if !ok {
			return p.errorf(at, sevHint, suggest(low, []string{"error", "warn", "info"}), "unknown severity %q", v)
		}
		t.sev, t.value = s, s.String()
	case keyStatus:
		if low == "cancel" || low == "canceled" {
			low = "cancelled"
		}
		found := false
		for _, s := range statuses {
			found = found || low == s
		}
		if !found {
			return p.errorf(at, statusHint, suggest(low, statuses), "unknown status %q", v)
		}
		t.value = low
	case keyFate:
		set, ok := sessions.ParseFateWord(low)
		if !ok {
			return p.errorf(at, fateHint, suggest(low, sessions.FateWords), "unknown fate %q", v)
		}
		t.fate = uint32(set)
		for i, w := range sessions.FateWords {
			if set == 1<<i {
				t.value = w
			}
		}
	}
	return nil
}

func hintFor(k key) string {
	return [...]string{
		keyMethod: methodHint,
		keyDir:    dirHint,
		keyKind:   kindHint,
		keyID:     idHint,
		keyFlag:   flagHint,
		keySev:    sevHint,
		keyStatus: statusHint,
		keyFate:   fateHint,
	}[k]
}

func kindNames() []string {
	var names []string
	for k := classify.Kind(1); k.String() != "unknown"; k++ {
		names = append(names, k.String())
	}
	return names
}

func flagNames() []string {
	var names []string
	for _, s := range summaryFlags {
		names = append(names, s.name)
	}
	for _, c := range classify.Codes() {
		names = append(names, c.String())
	}
	return names
}

// suggest gives the one candidate that s is most likely a slip for: the
// only one it begins, or the only closest one within one edit (two for
// longer words). It gives "" when there is no such single candidate.
func suggest(s string, candidates []string) string {
	if s == "" {
		return ""
	}
	var prefixed []string
	for _, c := range candidates {
		if strings.HasPrefix(c, s) && c != s {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 && len(s) >= 2 {
		return prefixed[0]
	}
	limit := 1
	if len(s) > 4 {
		limit = 2
	}
	best, bestD, ties := "", limit+1, 0
	for _, c := range candidates {
		switch d := textdist.Distance(s, c); {
		case d < bestD:
			best, bestD, ties = c, d, 1
		case d == bestD:
			ties++
		}
	}
	if ties != 1 {
		return ""
	}
	return best
}
