package sessions

import (
	"slices"
	"strings"
)

// MaskStrings masks a command line, argv, as everything rpctap shows of
// one (the session header, ls, the views, exports, replay's reports): the
// secrets r knows, in each argument and across arguments (a value with a
// space given as two of them), and what looks like a secret by its shape,
// whatever the environment holds:
//
//   - the value of an option named for a secret, joined or apart:
//     --token=X, --token X, --api-key X, --password X, -client-secret=X
//     (the option's last word is token, key, secret, password, …; so not
//     --key-file or --max-tokens);
//   - a variable set on the command line (env API_KEY=X server): a name
//     that looks secret, as in the environment;
//   - the credentials after "Bearer" (in one argument or the next);
//   - API keys known by their prefix: sk-…, ghp_…, github_pat_…, xoxb-…,
//     glpat-…, AKIA….
//
// A value too common to be a secret (true, 4096) is left as it is. argv
// itself is never changed; a new slice is returned when anything is
// masked.
func (r *Redactor) MaskStrings(argv []string) []string {
	if r == nil {
		return argv
	}
	out, owned := r.maskAcross(argv)
	set := func(i int, v string) {
		if v == out[i] {
			return
		}
		if !owned {
			out, owned = slices.Clone(out), true
		}
		out[i] = v
	}
	for i := range out {
		set(i, maskShapes(r.MaskString(out[i])))
	}
	for i := 0; i+1 < len(out); i++ {
		if name, ok := valueNext(out[i]); ok && !strings.HasPrefix(out[i+1], "-") && shapeSecret(out[i+1]) {
			set(i+1, string(maskOf(name)))
			i++
		}
	}
	return out
}

// maskAcross masks in argv the secrets that span arguments: found in the
// arguments joined by spaces, each argument's part of one is masked. It
// returns argv itself (and false) when there is none.
func (r *Redactor) maskAcross(argv []string) ([]string, bool) {
	if len(argv) < 2 || len(r.secrets) == 0 {
		return argv, false
	}
	joined := []byte(strings.Join(argv, " "))
	starts := make([]int, len(argv)+1) // argv[i] is joined[starts[i]:starts[i+1]-1]
	for i, a := range argv {
		starts[i+1] = starts[i] + len(a) + 1
	}
	f := finder{r: r, b: joined, stop: len(joined)}
	for range r.secrets {
		f.lit = append(f.lit, -1)
		f.litEnd = append(f.litEnd, 0)
	}
	// cuts[i] are the parts of argv[i] to mask, masks[i] their masks.
	cuts := map[int][][2]int{}
	masks := map[int][][]byte{}
	for at := 0; ; {
		start, end, s := f.find(at)
		if s == nil {
			break
		}
		at = end
		first, last := argAt(starts, start), argAt(starts, end-1)
		if first == last {
			continue // inside one argument: MaskString masks it there
		}
		for i := first; i <= last; i++ {
			lo, hi := max(start, starts[i])-starts[i], min(end, starts[i+1]-1)-starts[i]
			if lo < hi {
				cuts[i] = append(cuts[i], [2]int{lo, hi})
				masks[i] = append(masks[i], s.mask)
			}
		}
	}
	if len(cuts) == 0 {
		return argv, false
	}
	out := slices.Clone(argv)
	for i, cs := range cuts {
		var b []byte
		copied := 0
		for k, c := range cs {
			b = append(b, argv[i][copied:c[0]]...)
			b = append(b, masks[i][k]...)
			copied = c[1]
		}
		out[i] = string(append(b, argv[i][copied:]...))
	}
	return out, true
}

// argAt is the argument the joined byte at p belongs to (a space, to the
// one before it).
func argAt(starts []int, p int) int {
	i, _ := slices.BinarySearch(starts, p+1)
	return i - 1
}

// secretWords are the last words of option and variable names that hold
// secrets.
var secretWords = map[string]bool{
	"token": true, "key": true, "apikey": true, "secret": true, "password": true, "passwd": true,
	"pass": true, "pwd": true, "auth": true, "credential": true, "credentials": true, "pat": true,
	"bearer": true, "passphrase": true,
}

// optionSecret reports whether an option's name (without its dashes)
// names a secret: its last word is one of secretWords.
func optionSecret(name string) bool {
	words := strings.FieldsFunc(strings.ToLower(name), func(c rune) bool { return c == '-' || c == '_' || c == '.' })
	return len(words) > 0 && words[0] != "no" && secretWords[words[len(words)-1]]
}

// optionName is name as a mask names it: API_KEY for api-key.
func optionName(name string) string {
	return strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(name))
}

// valueNext reports whether arg is one whose value is the next argument:
// an option named for a secret with no value of its own (--token), or
// Bearer; and the name of the mask for that value.
func valueNext(arg string) (string, bool) {
	if strings.EqualFold(arg, "bearer") {
		return "TOKEN", true
	}
	name := strings.TrimLeft(arg, "-")
	if len(arg)-len(name) == 0 || len(arg)-len(name) > 2 || strings.Contains(name, "=") || !optionSecret(name) {
		return "", false
	}
	return optionName(name), true
}

// shapeSecret reports whether v, found where a secret goes, may be one:
// not empty, not a mask already, and no common value.
func shapeSecret(v string) bool {
	if v == "" || isMask(v) || commonValues[strings.ToLower(v)] {
		return false
	}
	return len(v) >= maxCommonNumber || !decimal(v)
}

// isMask reports whether v is one mask, ***NAME***.
func isMask(v string) bool {
	return len(v) > 6 && strings.HasPrefix(v, "***") && strings.HasSuffix(v, "***") && !strings.Contains(v[3:len(v)-3], "*")
}

// maskShapes masks in one argument what looks like a secret by its shape:
// an option's or a variable's value, Bearer credentials, keys by prefix.
func maskShapes(arg string) string {
	if name, value, ok := strings.Cut(arg, "="); ok && shapeSecret(value) {
		opt := strings.TrimLeft(name, "-")
		switch dashes := len(name) - len(opt); {
		case (dashes == 1 || dashes == 2) && optionSecret(opt):
			return name + "=" + string(maskOf(optionName(opt)))
		case dashes == 0 && envName(name) && SecretName(name):
			return name + "=" + string(maskOf(name))
		}
	}
	return maskKeys(maskBearer(arg))
}

// envName reports whether s can name an environment variable.
func envName(s string) bool {
	for i, c := range []byte(s) {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// maskBearer masks the credentials after each "Bearer " in s.
func maskBearer(s string) string {
	lower := strings.ToLower(s)
	var b strings.Builder
	copied := 0
	for at := 0; ; {
		k := strings.Index(lower[at:], "bearer ")
		if k < 0 {
			break
		}
		k += at
		v := k + len("bearer ")
		for v < len(s) && s[v] == ' ' {
			v++
		}
		e := v
		for e < len(s) && s[e] != ' ' && s[e] != '"' && s[e] != '\'' && s[e] != ',' {
			e++
		}
		at = e
		if (k > 0 && wordByte(s[k-1])) || !shapeSecret(s[v:e]) {
			continue
		}
		b.WriteString(s[copied:v])
		b.Write(maskOf("TOKEN"))
		copied = e
	}
	if copied == 0 {
		return s
	}
	b.WriteString(s[copied:])
	return b.String()
}

// keyPrefixes begin API keys that are known by them, each with the
// fewest characters that follow it in a key.
var keyPrefixes = []struct {
	prefix string
	rest   int
}{
	{"sk-", 16}, {"ghp_", 20}, {"gho_", 20}, {"ghu_", 20}, {"ghs_", 20}, {"ghr_", 20},
	{"github_pat_", 20}, {"xoxb-", 10}, {"xoxp-", 10}, {"xoxa-", 10}, {"xoxs-", 10},
	{"glpat-", 16}, {"AKIA", 16},
}

// wordByte reports whether c can be part of a key.
func wordByte(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// maskKeys masks in s each API key known by its prefix (a word that
// starts with one and goes on long enough).
func maskKeys(s string) string {
	var b strings.Builder
	copied := 0
	for i := 0; i < len(s); i++ {
		if i > 0 && wordByte(s[i-1]) {
			continue
		}
		for _, kp := range keyPrefixes {
			if !strings.HasPrefix(s[i:], kp.prefix) {
				continue
			}
			e := i + len(kp.prefix)
			for e < len(s) && wordByte(s[e]) {
				e++
			}
			if e-i-len(kp.prefix) < kp.rest {
				continue
			}
			b.WriteString(s[copied:i])
			b.Write(maskOf("API_KEY"))
			copied, i = e, e-1
			break
		}
	}
	if copied == 0 {
		return s
	}
	b.WriteString(s[copied:])
	return b.String()
}
