package sessions

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
)

// A Redactor masks secrets in what is recorded and shown: it is the one
// step that every byte a tap writes to its session file or serves to an
// observer goes through (frame bodies of any size, LSP header blocks, the
// fields derived from them, the session header's argv and name, the answer
// to a captured injection), and every export of a session. The wire is
// never changed.
//
// A secret is found however a peer spelled it in JSON: each of its
// characters may be written as itself or as any JSON string escape that
// decodes to it (\u0073, \u0053 for S, \/ for /, \" for ", a surrogate
// pair for a character past U+FFFF). Escapes nested inside a JSON string
// that is itself inside a JSON string are not followed.
//
// In a frame that is JSON, a secret is masked only inside a string (an
// object's key or a value), never across a string's end or inside an
// escape, so that the masked frame is JSON of the same shape, judged as
// what it was: a secret written as a number or a literal is left as it
// is, and the Redactor keeps the name of the first it left so (InClear),
// for the tap to say. In a frame that is not JSON (a log line on stderr),
// and in text (argv, names), a secret is masked wherever it is.
//
// A nil *Redactor masks nothing. A Redactor is read only once made (but
// for the name InClear reports), so any number of goroutines may use it
// at once.
type Redactor struct {
	secrets []secret // longest value first
	// spots are where each character is in the values (ASCII ones by
	// index, the others in other): an escape of a character in none of
	// them cannot be part of a secret.
	spots [utf8.RuneSelf][]spot
	other map[rune][]spot
	// plainAfter marks the letters of two-character escapes of
	// characters no value holds.
	plainAfter [256]bool
	longest    int // bytes of the longest value
	widest     int // bytes of the longest spelling of any value
	// inClear is the first secret found outside every string of a JSON
	// frame (a number), which masking leaves as it is.
	inClear atomic.Pointer[secret]
}

type secret struct {
	name  string
	value []byte
	mask  []byte
}

// A spot is a character's place in a value: secrets[secret].value[off:].
type spot struct{ secret, off int }

// minSecretLen keeps short values (a "1", "on", "abc") from being taken
// for secrets: a value that short is no secret anyone could keep (it is
// guessed in a blink), and masking it would mask it in every string that
// holds those letters, hiding half of every frame and telling nothing.
const minSecretLen = 4

// commonValues are values that variables with secret-looking names hold
// and that are no secrets: JSON's literals and the words a setting says
// yes or no with (AUTH_ENABLED=true, USE_API_KEY=false, a *_KEY set to
// null), and the member names of the JSON-RPC envelope. Each is in many
// frames, where it means something else ("listChanged":true, a result's
// "true"); masking it would hide what the frames say, and the envelope's
// names would stop a request being one. Compared case-insensitively.
var commonValues = map[string]bool{
	"true": true, "false": true, "null": true,
	"none": true, "nil": true, "undefined": true, "empty": true, "unset": true,
	"yes": true, "on": true, "off": true,
	"enable": true, "enabled": true, "disable": true, "disabled": true,
	"default": true, "auto": true, "always": true, "never": true,
	"required": true, "optional": true,
	"jsonrpc": true, "method": true, "params": true, "result": true,
	"error": true, "code": true, "message": true, "data": true,
}

// maxCommonNumber is the length under which a value that is a decimal
// number is no secret: a count, a size, a port or a timeout
// (MAX_TOKENS=4096, AUTH_PORT=8443, TOKEN_TTL=3600), which frames hold
// for their own reasons.
const maxCommonNumber = 8

// secretValue reports whether value may be a secret: long enough, and
// neither a common word nor a short number.
func secretValue(value string) bool {
	if len(value) < minSecretLen || commonValues[strings.ToLower(value)] {
		return false
	}
	return len(value) >= maxCommonNumber || !decimal(value)
}

// decimal reports whether s is a decimal number: digits, with a sign or a
// point.
func decimal(s string) bool {
	digits := 0
	for i, c := range []byte(s) {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case (c == '-' || c == '+') && i == 0, c == '.':
		default:
			return false
		}
	}
	return digits > 0
}

// maskOf is the mask that stands for a secret named name: ***NAME***,
// with any byte of the name that is not a letter, a digit, '_', '-' or
// '.' as '_', so that a mask is at home in a JSON string, a header value
// and a terminal line.
func maskOf(name string) []byte {
	m := make([]byte, 0, len(name)+2*len(maskEdge))
	m = append(m, maskEdge...)
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			c = '_'
		}
		m = append(m, c)
	}
	return append(m, maskEdge...)
}

// SecretName reports whether an environment variable's name looks like it
// holds a secret.
func SecretName(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "AUTH", "CREDENTIAL"} {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// NewRedactor collects the values to mask: those of environment variables
// with secret-looking names, and those named by --redact: NAME (the value
// of that variable) or NAME=VALUE (a literal value, shown as NAME). A
// value too short or too common to be a secret (see secretValue) is not
// masked. The Redactor it returns is never nil, as it masks arguments by
// their shape too (see MaskStrings), whatever the values.
func NewRedactor(env []string, flags []string) (*Redactor, error) {
	r := &Redactor{}
	add := func(name, value string) {
		if !secretValue(value) {
			return
		}
		r.secrets = append(r.secrets, secret{name: name, value: []byte(value), mask: maskOf(name)})
	}
	lookup := map[string]string{}
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		lookup[name] = value
		if SecretName(name) {
			add(name, value)
		}
	}
	for _, f := range flags {
		name, value, literal := strings.Cut(f, "=")
		if name == "" {
			return nil, fmt.Errorf("--redact %q names nothing: use --redact NAME (mask the value of environment variable NAME) or --redact NAME=VALUE (mask VALUE)", f)
		}
		if !literal {
			v, ok := lookup[name]
			if !ok {
				v, ok = os.LookupEnv(name)
			}
			if !ok {
				return nil, fmt.Errorf("--redact %s: there is no environment variable %s to take a value from; use --redact %s=VALUE to mask a value directly", name, name, name)
			}
			value = v
		}
		add(name, value)
	}
	if len(r.secrets) == 0 {
		return r, nil
	}
	// Longer values first, so a value that contains another is masked whole.
	sort.SliceStable(r.secrets, func(i, j int) bool { return len(r.secrets[i].value) > len(r.secrets[j].value) })
	r.other = map[rune][]spot{}
	for i, s := range r.secrets {
		r.longest = max(r.longest, len(s.value))
		wide := 0
		for off := 0; off < len(s.value); {
			c, size := utf8.DecodeRune(s.value[off:])
			switch {
			case c == utf8.RuneError && size == 1:
				wide++ // a byte that is not UTF-8 is only ever itself
				off++
				continue
			case c < utf8.RuneSelf:
				r.spots[c] = append(r.spots[c], spot{i, off})
			default:
				r.other[c] = append(r.other[c], spot{i, off})
			}
			wide += max(size, escapeLen(c))
			off += size
		}
		r.widest = max(r.widest, wide)
	}
	for _, c := range []byte(`"\/bfnrt`) {
		d, _, _ := classify.DecodeEscape([]byte{'\\', c})
		r.plainAfter[c] = len(r.spotsOf(d)) == 0
	}
	return r, nil
}

// maskEdge opens and closes every mask (maskOf).
const maskEdge = "***"

// Names are the names of the secrets r masks wherever they turn up (each
// once, sorted), whether or not any has: what a session header names, and
// a replay masks again.
func (r *Redactor) Names() []string {
	if r == nil {
		return nil
	}
	var names []string
	for _, s := range r.secrets {
		names = append(names, s.name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// InClear returns the name of the first secret r found written outside
// every string of a JSON frame it masked (as a number: "pin":123456789012),
// which it left in clear; "" when there has been none.
func (r *Redactor) InClear() string {
	if r == nil {
		return ""
	}
	if s := r.inClear.Load(); s != nil {
		return s.name
	}
	return ""
}

// escapeLen is the length of the longest JSON escape of c.
func escapeLen(c rune) int {
	if c > 0xffff {
		return 12 // a surrogate pair
	}
	return 6
}

// Mask returns the frame b with every secret masked, and whether any was;
// b itself is returned when nothing was, and is never changed. When b is
// JSON, so is what Mask returns, of the same shape: secrets are masked
// only inside its strings (see Redactor).
func (r *Redactor) Mask(b []byte) ([]byte, bool) {
	if r == nil || len(r.secrets) == 0 {
		return b, false
	}
	var lx jsonLexer
	out, _, masked := r.appendMasked(nil, b, len(b), &lx)
	if !masked {
		return b, false
	}
	return out, true
}

// maskText is Mask for text that is no frame: secrets are masked wherever
// they are.
func (r *Redactor) maskText(b []byte) ([]byte, bool) {
	if r == nil || len(r.secrets) == 0 {
		return b, false
	}
	out, _, masked := r.appendMasked(nil, b, len(b), nil)
	if !masked {
		return b, false
	}
	return out, true
}

// MaskHeader returns an LSP header block with every secret in its header
// values masked, and whether any was: never in a header's name, nor in
// Content-Length's value, which must stay the body's length; a line that
// is no header (it has no colon) is masked whole. b itself is returned
// when nothing was masked, and is never changed.
func (r *Redactor) MaskHeader(b []byte) ([]byte, bool) {
	if r == nil || len(r.secrets) == 0 {
		return b, false
	}
	var out []byte
	copied := 0
	for at := 0; at < len(b); {
		end := len(b)
		if k := bytes.IndexByte(b[at:], '\n'); k >= 0 {
			end = at + k
		}
		lo, hi := at, end
		if hi > lo && b[hi-1] == '\r' {
			hi--
		}
		if c := bytes.IndexByte(b[lo:hi], ':'); c >= 0 {
			lo += c + 1
			if strings.EqualFold(string(bytes.TrimSpace(b[at:at+c])), "Content-Length") {
				lo = hi
			}
		}
		if m, ok := r.maskText(b[lo:hi]); ok {
			out = append(out, b[copied:lo]...)
			out = append(out, m...)
			copied = hi
		}
		at = end + 1
	}
	if out == nil {
		return b, false
	}
	return append(out, b[copied:]...), true
}

// Unmask undoes, in edited (a person's edit of Mask(original)), the masks
// Mask(original) wrote that the edit left as they were: each stands again
// for the bytes it masked there, as they were spelled. The k-th copy of a
// mask in edited takes the k-th spelling it masked in original (the last
// one, past their number). A mask that original had no secret for, or one
// the person changed, stays as typed: Unmask puts back only secrets that
// were in original. edited itself is never changed.
func (r *Redactor) Unmask(edited, original []byte) []byte {
	if r == nil {
		return edited
	}
	spelled := map[*secret][][]byte{}
	var lx jsonLexer
	f := finder{r: r, b: original, stop: len(original), lx: &lx}
	for range r.secrets {
		f.lit = append(f.lit, -1)
		f.litEnd = append(f.litEnd, 0)
	}
	for copied, at := 0, 0; ; {
		start, end, s := f.find(at)
		if s == nil {
			break
		}
		if oddBackslashes(original[copied:start]) {
			start-- // the mask took that backslash too (see appendMasked)
		}
		spelled[s] = append(spelled[s], original[start:end])
		copied, at = end, end
	}
	if len(spelled) == 0 {
		return edited
	}
	var out []byte
	used := map[*secret]int{}
	copied := 0
	for at := 0; at < len(edited); {
		k := bytes.Index(edited[at:], []byte("***"))
		if k < 0 {
			break
		}
		at += k
		var hit *secret
		for i := range r.secrets { // longest value first; masks are whole names
			s := &r.secrets[i]
			if len(spelled[s]) > 0 && bytes.HasPrefix(edited[at:], s.mask) && (hit == nil || len(s.mask) > len(hit.mask)) {
				hit = s
			}
		}
		if hit == nil {
			at++
			continue
		}
		ways := spelled[hit]
		out = append(out, edited[copied:at]...)
		out = append(out, ways[min(used[hit], len(ways)-1)]...)
		used[hit]++
		at += len(hit.mask)
		copied = at
	}
	if out == nil {
		return edited
	}
	return append(out, edited[copied:]...)
}

// MaskString masks the secrets in s, text that is no frame (a name, a
// message, a method): wherever they are.
func (r *Redactor) MaskString(s string) string {
	if out, ok := r.maskText([]byte(s)); ok {
		return string(out)
	}
	return s
}

// appendMasked appends b to dst, with each spelling of a secret that
// starts before stop masked, up to next: stop, or the end of a secret
// that starts before stop and ends after it. A caller that has more
// bytes to come passes stop = len(b) - (r.widest-1) and keeps b[next:]
// for its next call, so that a secret cut across the two is found whole.
// A spelling that starts right after a backslash that escapes its first
// byte is masked with that backslash. When nothing is masked, dst is
// returned as it was.
//
// lx is where a frame stands just before b (the JSON rules of Redactor
// apply), or nil for text (a secret is masked wherever it is).
func (r *Redactor) appendMasked(dst, b []byte, stop int, lx *jsonLexer) (out []byte, next int, masked bool) {
	if stop <= 0 {
		return dst, 0, false
	}
	var lit, litEnd [8]int
	f := finder{r: r, b: b, stop: stop, lit: lit[:0], litEnd: litEnd[:0], lx: lx}
	for range r.secrets {
		f.lit = append(f.lit, -1)
		f.litEnd = append(f.litEnd, 0)
	}
	copied := 0 // b[:copied] is in dst
	for at := 0; ; {
		start, end, s := f.find(at)
		if s == nil {
			break
		}
		if !masked {
			dst = slices.Grow(dst, len(b))
		}
		masked = true
		if oddBackslashes(b[copied:start]) {
			// The spelling starts right after a backslash that escapes
			// its first byte (\\u0073...): the mask takes that
			// backslash too, so that the string stays well formed.
			start--
		}
		dst = append(dst, b[copied:start]...)
		dst = append(dst, s.mask...)
		copied, at = end, end
	}
	next = max(stop, copied)
	if next < len(b) && next > copied && oddBackslashes(b[copied:next]) {
		// Keep back the backslash that escapes b[next], for the rule
		// above: the bytes passed on end with an even run of them.
		next--
	}
	if !masked {
		return dst, next, false
	}
	return append(dst, b[copied:next]...), next, true
}

// oddBackslashes reports whether b ends in an odd number of backslashes.
func oddBackslashes(b []byte) bool {
	n := 0
	for n < len(b) && b[len(b)-1-n] == '\\' {
		n++
	}
	return n%2 == 1
}
