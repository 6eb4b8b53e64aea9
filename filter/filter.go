// Package filter parses and evaluates the filter language that the terminal
// UI and `rpctap tail` share.
//
// An expression is a list of tokens separated by white space; a frame
// matches when every token matches (the tokens are ANDed). A `!` before a
// token negates it.
//
//	method:GLOB   the method, or for a response its request's method;
//	              `*` matches any run of characters, `?` one character
//	dir:DIR       h2s (or > or →), s2h (or < or ←), err
//	kind:KIND     a classify kind: request, response, notification,
//	              invalid, not-json, stray, batch, blank, non-object
//	id:VALUE      the id as on the wire: id:1 is the number 1 (not 1.0,
//	              not the string "1"), id:"1" the string "1" (however
//	              escaped), id:null the null id; an unquoted value must be
//	              a JSON number or null
//	flag:FLAG     a finding code (flag:leaky-error), or a summary flag:
//	              unmatched (unmatched-response, duplicate-response),
//	              invalid (kinds invalid, not-json, non-object, stray, or
//	              bad-method, bad-id, bad-jsonrpc, bad-params, empty-batch),
//	              redacted (redacted, opaque-error, leaky-error), timeout
//	              (timeout, late-response); the summary flags redacted and
//	              timeout take the place of the codes of the same name
//	sev:SEV       the frame's worst finding is at least error, warn or info
//	status:STATUS pending, ok, error, late, cancelled, gap
//	fate:FATE     what became of the frame in the tap: injected,
//	              captured, held (whatever became of it then), edited,
//	              dropped, answered-in-place (or answered), expired,
//	              detached, overflow, waited, ended, partial (the words
//	              of sessions.FateWords); an intercept filter refuses it
//	TEXT          any other token, or a "quoted phrase": a case-insensitive
//	              substring of the method, the id or the frame's bytes
//	              as on the wire (JSON escapes are not decoded)
//
// Keys and the names of values are case-insensitive; globs are not. A token
// that starts with ASCII letters and a colon is always read as a key, so
// an unknown one (meth:x) is an error rather than text: quote it to search
// for it ("http://x"). Double quotes group a phrase or a value with spaces
// (method:"a b"); a backslash inside quotes takes the next character
// literally. A quote inside an unquoted word is an error.
//
// Parsing does the work once (globs are compiled, needles folded), so that
// Match costs no allocation and, for tokens that read only the frame's
// summary, tens of nanoseconds.
package filter

import (
	"strings"

	"github.com/rpctap/rpctap/classify"
)

// Frame is what a filter sees of one frame. The UI fills it from its index.
type Frame struct {
	Dir  classify.Direction
	Kind classify.Kind
	// ID is the frame's id exactly as on the wire (`1`, `"1"`, `null`), or
	// "" when the frame has none.
	ID string
	// Method is the frame's method; for a response, the method of the
	// request it answers ("" when it answers none).
	Method string
	// Codes is the set of the frame's findings' codes.
	Codes classify.CodeSet
	// Worst is the severity of the frame's worst finding, 0 when it has none.
	Worst classify.Severity
	// Status is the call's state: "", pending, ok, error, late, cancelled, gap.
	Status string
	// Fate is a bit set of the frame's fate words: bit i for
	// sessions.FateWords[i] (sessions.Fate.Set).
	Fate uint32
	// Payload returns the frame's bytes. It is called only when a text
	// token cannot be decided from the method and the id, at most once per
	// Match. It may be nil: text then searches the method and the id only.
	Payload func() []byte
}

// CodesOf is the set Frame.Codes holds for findings fs.
func CodesOf(fs []classify.Finding) classify.CodeSet {
	var c classify.CodeSet
	for _, f := range fs {
		c = c.With(f.Code)
	}
	return c
}

// A Filter is a parsed expression. It is immutable, so one Filter may be
// used from several goroutines at once.
type Filter struct {
	terms []term // as written, for String
	eval  []term // the same terms, index-only ones first, for Match
}

// Parse reads a filter expression. The empty expression (or one of only
// white space) gives a filter that matches every frame. A syntax error is
// a *SyntaxError that says what is wrong and at which column.
func Parse(expr string) (*Filter, error) {
	terms, err := parse(expr)
	if err != nil {
		return nil, err
	}
	f := &Filter{terms: terms, eval: make([]term, 0, len(terms))}
	for _, t := range terms {
		if !t.needsText() {
			f.eval = append(f.eval, t)
		}
	}
	for _, t := range terms {
		if t.needsText() {
			f.eval = append(f.eval, t)
		}
	}
	return f, nil
}

// Match reports whether fr satisfies every token of f. A nil Filter
// matches everything.
func (f *Filter) Match(fr *Frame) bool {
	if f == nil {
		return true
	}
	var (
		payload []byte
		fetched bool
	)
	for i := range f.eval {
		t := &f.eval[i]
		var ok bool
		if t.key == keyText {
			ok = t.text.matchHead(fr)
			if !ok && fr.Payload != nil {
				if !fetched {
					payload, fetched = fr.Payload(), true
				}
				ok = t.text.containedIn(payload)
			}
		} else {
			ok = t.match(fr)
		}
		if ok == t.neg {
			return false
		}
	}
	return true
}

// NeedsPayload reports whether some token may need the frame's bytes, so
// that the UI can decide to scan in the background.
func (f *Filter) NeedsPayload() bool {
	if f == nil {
		return false
	}
	for i := range f.terms {
		if f.terms[i].needsText() {
			return true
		}
	}
	return false
}

// Uses reports whether a token of f tests the key name (fate, status,
// …): where the frames judged cannot carry what a key tests, a filter
// that uses it is refused rather than never matching.
func (f *Filter) Uses(name string) bool {
	if f == nil {
		return false
	}
	for i := range f.terms {
		if f.terms[i].key != keyText && keyNames[f.terms[i].key] == name {
			return true
		}
	}
	return false
}

// String is the filter's canonical form: its tokens in the order written,
// with lower-case keys, canonical values (dir:> is dir:h2s) and quotes only
// where they are needed. Parsing it gives an equal filter.
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	var b strings.Builder
	for i, t := range f.terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		t.write(&b)
	}
	return b.String()
}
