package sessions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rpctap/rpctap/classify"
)

// Replay and diff compare messages structurally: two messages are the
// same when they decode to the same JSON value (members in any order,
// strings by their decoded text, numbers by their text), with the
// envelope's id, every "_meta" member at any depth, LSP's progress tokens
// (params.workDoneToken, params.partialResultToken), and the paths the
// user names left out. A list of named items (every item an object with
// a "uri", "uriTemplate" or "name" no other item of its list has: tools,
// prompts, resources, a prompt's arguments) is compared item by item,
// by that name, wherever an item is in it. A secret the recording masked
// stands for any text (see WithMasks).

// An Ignore is a set of JSON pointers (RFC 6901) into a message, from its
// root ("/result/content/0/text", "/params/arguments/when"), that
// comparisons leave out. A segment "*" matches any member or element.
// The zero Ignore leaves out only the id, "_meta" and LSP's progress
// tokens.
type Ignore struct {
	paths [][]string
	masks *maskSet // nil: none
}

// ParseIgnore reads JSON pointers as --ignore takes them.
func ParseIgnore(ptrs []string) (Ignore, error) {
	var ig Ignore
	for _, p := range ptrs {
		if p == "" || p[0] != '/' {
			return Ignore{}, fmt.Errorf("--ignore %q is not a JSON pointer: it must start with \"/\", from the message's root, as in --ignore /result/content/0/text", p)
		}
		segs := strings.Split(p[1:], "/")
		for i, s := range segs {
			segs[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
		}
		ig.paths = append(ig.paths, segs)
	}
	return ig, nil
}

// Also returns ig leaving out the member or element at path too, a
// pointer's segments (unescaped), as in Also("result", "requestState").
func (ig Ignore) Also(path ...string) Ignore { return ig.with(slices.Clone(path)) }

// With returns ig with more pointers, already split.
func (ig Ignore) with(paths ...[]string) Ignore {
	return Ignore{paths: append(slices.Clip(ig.paths), paths...), masks: ig.masks}
}

// skips reports whether the member or element at path is left out.
func (ig Ignore) skips(path []string) bool {
	n := len(path)
	if n == 1 && path[0] == "id" {
		return true
	}
	if n > 0 && path[n-1] == "_meta" {
		return true
	}
	if n == 2 && path[0] == "params" && (path[1] == "workDoneToken" || path[1] == "partialResultToken") {
		return true // LSP's progress tokens, made up anew by each host
	}
	for _, p := range ig.paths {
		if len(p) != n {
			continue
		}
		ok := true
		for i, s := range p {
			if s != "*" && s != path[i] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// A Change is one difference between two JSON values.
type Change struct {
	Path string // a JSON pointer from the message's root
	// Was and Now are the values at Path as compact JSON; "" when the
	// member or element is not there.
	Was, Now string
	// Item names the item of a list of named items Path is in (the
	// innermost), as "name=echo": the list is compared by that name, and
	// Path has the item's index in the message that has it (the second,
	// when both do).
	Item string
}

// decodeJSON decodes a message for a structural diff, numbers as their text.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Diff lists the differences between messages a and b (see Ignore), at
// most limit of them (all when limit <= 0), in path order.
func (ig Ignore) Diff(a, b []byte, limit int) []Change {
	out, _ := ig.DiffCall(a, b, limit, nil)
	return out
}

// DiffCall is Diff, and whether every difference (not only the first
// limit) adds to a: it stops once it holds limit changes and has met one
// that does not only add. inputs are the paths of a request's inputs
// (IdentityRule.Inputs): there, absent, null and {} are the same, as
// replay matches them (no arguments are arguments {}).
func (ig Ignore) DiffCall(a, b []byte, limit int, inputs [][]string) (out []Change, onlyAdds bool) {
	va, errA := decodeJSON(a)
	vb, errB := decodeJSON(b)
	if errA != nil || errB != nil {
		if bytes.Equal(a, b) {
			return nil, true
		}
		return []Change{{Path: "", Was: compactOrText(a), Now: compactOrText(b)}}, false
	}
	d := differ{ig: ig, limit: limit, inputs: inputs}
	d.diff(va, vb)
	return d.out, !d.removes
}

type differ struct {
	ig     Ignore
	path   []string
	items  []string // the named items the path is in
	out    []Change
	limit  int
	inputs [][]string // where absent, null and {} are the same
	// removes says a change met does not only add (it removes or
	// changes a value).
	removes bool
}

func (d *differ) full() bool { return d.limit > 0 && len(d.out) >= d.limit }

// done reports whether walking on would tell nothing more: the changes
// are all kept, and one that does not only add is known.
func (d *differ) done() bool { return d.full() && d.removes }

func (d *differ) add(was, now any) {
	if _, ok := was.(absent); !ok {
		d.removes = true
	}
	if d.full() {
		return
	}
	c := Change{Path: pointer(d.path), Was: compactValue(was), Now: compactValue(now)}
	if n := len(d.items); n > 0 {
		c.Item = d.items[n-1]
	}
	d.out = append(d.out, c)
}

// absent marks a member that is not there (nil stands for JSON null).
type absent struct{}

// isInput reports whether the path is one of d.inputs.
func (d *differ) isInput() bool {
	for _, p := range d.inputs {
		if slices.Equal(p, d.path) {
			return true
		}
	}
	return false
}

// noInput reports whether an input's value (ok: there) gives nothing:
// absent, null or {}.
func noInput(v any, ok bool) bool {
	m, isObject := v.(map[string]any)
	return !ok || v == nil || isObject && len(m) == 0
}

func (d *differ) diff(a, b any) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			d.add(a, b)
			return
		}
		for _, k := range SortedKeys(x, y) {
			if d.done() {
				return
			}
			d.path = append(d.path, k)
			if !d.ig.skips(d.path) {
				va, okA := x[k]
				vb, okB := y[k]
				switch {
				case d.isInput() && noInput(va, okA) && noInput(vb, okB):
				case !okA:
					d.add(absent{}, vb)
				case !okB:
					d.add(va, absent{})
				default:
					d.diff(va, vb)
				}
			}
			d.path = d.path[:len(d.path)-1]
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			d.add(a, b)
			return
		}
		if key := itemKey(x, y); key != "" {
			d.diffItems(x, y, key)
			return
		}
		for i := range max(len(x), len(y)) {
			if d.done() {
				return
			}
			d.path = append(d.path, strconv.Itoa(i))
			if !d.ig.skips(d.path) {
				switch {
				case i >= len(x):
					d.add(absent{}, y[i])
				case i >= len(y):
					d.add(x[i], absent{})
				default:
					d.diff(x[i], y[i])
				}
			}
			d.path = d.path[:len(d.path)-1]
		}
	default:
		if a != b && !d.ig.masks.same(a, b) {
			d.add(a, b)
		}
	}
}

// itemKeys are the members that name the items of a list, in the order
// they are tried: a resource has a name too, but its URI is what no
// other resource has.
var itemKeys = []string{"uri", "uriTemplate", "name"}

// itemKey returns the member that names every item of both lists, each
// name once in its list; "" when there is none, or both are empty.
func itemKey(x, y []any) string {
	if len(x)+len(y) == 0 {
		return ""
	}
	for _, k := range itemKeys {
		if namedBy(x, k) && namedBy(y, k) {
			return k
		}
	}
	return ""
}

func namedBy(list []any, key string) bool {
	seen := make(map[string]bool, len(list))
	for _, e := range list {
		obj, ok := e.(map[string]any)
		if !ok {
			return false
		}
		name, ok := obj[key].(string)
		if !ok || seen[name] {
			return false
		}
		seen[name] = true
	}
	return true
}

// diffItems compares two lists of items named by key: items by their
// names, in x's order, then the items only y has.
func (d *differ) diffItems(x, y []any, key string) {
	name := func(e any) string { return e.(map[string]any)[key].(string) }
	inY := make(map[string]int, len(y))
	for j, e := range y {
		inY[name(e)] = j
	}
	inX := make(map[string]bool, len(x))
	at := func(i int, n string, f func()) {
		d.path = append(d.path, strconv.Itoa(i))
		if !d.ig.skips(d.path) {
			d.items = append(d.items, key+"="+n)
			f()
			d.items = d.items[:len(d.items)-1]
		}
		d.path = d.path[:len(d.path)-1]
	}
	for i, e := range x {
		if d.done() {
			return
		}
		n := name(e)
		inX[n] = true
		if j, ok := inY[n]; ok {
			at(j, n, func() { d.diff(e, y[j]) })
		} else {
			at(i, n, func() { d.add(e, absent{}) })
		}
	}
	for j, e := range y {
		if n := name(e); !inX[n] {
			at(j, n, func() { d.add(absent{}, e) })
		}
	}
}

// Similarity says how alike two messages are, from 0 (nothing in common)
// to 1 (the same, see Ignore): the share of leaf values, by path, that
// are equal in both.
func (ig Ignore) Similarity(a, b []byte) float64 {
	va, errA := decodeJSON(a)
	vb, errB := decodeJSON(b)
	if errA != nil || errB != nil {
		if bytes.Equal(a, b) {
			return 1
		}
		return 0
	}
	la, lb := map[string]string{}, map[string]string{}
	leaves(ig, nil, va, la)
	leaves(ig, nil, vb, lb)
	same, total := 0, len(la)
	for p, v := range lb {
		if w, ok := la[p]; ok {
			if w == v || ig.masks.sameJSON(w, v) {
				same++
			}
		} else {
			total++
		}
	}
	if total == 0 {
		return 1
	}
	return float64(same) / float64(total)
}

func leaves(ig Ignore, path []string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := append(path, k)
			if !ig.skips(p) {
				leaves(ig, p, e, out)
			}
		}
		if len(x) == 0 {
			out[pointer(path)] = "{}"
		}
	case []any:
		for i, e := range x {
			p := append(path, strconv.Itoa(i))
			if !ig.skips(p) {
				leaves(ig, p, e, out)
			}
		}
		if len(x) == 0 {
			out[pointer(path)] = "[]"
		}
	default:
		out[pointer(path)] = compactValue(v)
	}
}

func pointer(path []string) string {
	var b strings.Builder
	for _, s := range path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func compactValue(v any) string {
	if _, ok := v.(absent); ok {
		return ""
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func compactOrText(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) == nil {
		return buf.String()
	}
	return string(b)
}

// A maskSet is the masks a recording's redactor wrote in place of
// secrets ("***DBPASS***"): in a string of the first message compared,
// each stands for any text of one byte or more, so that a secret the
// recording masked compares equal to whatever value is there now.
type maskSet struct {
	names map[string]bool
	// anyName takes any "***NAME***" for a mask: for a recording whose
	// header does not name its masks (written before headers did).
	anyName bool
	// both takes masks in the second message too (two recordings).
	both bool
}

// WithMasks returns ig with the masks of the secrets named (see
// Redactor.Names) standing for any text in the first of two messages
// compared (in either, when both are recordings); anyName takes any mask
// rpctap writes. Give it only for a message the recording says it masked.
func (ig Ignore) WithMasks(names []string, anyName, both bool) Ignore {
	ms := &maskSet{names: map[string]bool{}, anyName: anyName, both: both}
	for _, n := range names {
		m := maskOf(n) // the name as the mask spells it
		ms.names[string(m[len(maskEdge):len(m)-len(maskEdge)])] = true
	}
	ig.masks = ms
	return ig
}

// same reports whether a and b are strings that are the same with the
// masks in a (or b) standing for any text.
func (ms *maskSet) same(a, b any) bool {
	if ms == nil {
		return false
	}
	sa, okA := a.(string)
	sb, okB := b.(string)
	return okA && okB && (ms.match(sa, sb) || ms.both && ms.match(sb, sa))
}

// sameJSON is same for two values as compact JSON.
func (ms *maskSet) sameJSON(a, b string) bool {
	if ms == nil || !strings.HasPrefix(a, `"`) || !strings.HasPrefix(b, `"`) || !strings.Contains(a+b, maskEdge) {
		return false
	}
	var sa, sb string
	if json.Unmarshal([]byte(a), &sa) != nil || json.Unmarshal([]byte(b), &sb) != nil {
		return false
	}
	return ms.same(sa, sb)
}

// match reports whether s is pat with each mask in it replaced by some
// text of at least one byte; false when pat has no mask.
func (ms *maskSet) match(pat, s string) bool {
	lits := ms.split(pat)
	if len(lits) < 2 {
		return false
	}
	if !strings.HasPrefix(s, lits[0]) {
		return false
	}
	rest := s[len(lits[0]):]
	for _, lit := range lits[1 : len(lits)-1] {
		if rest == "" {
			return false
		}
		// The leftmost place after at least one byte: any later one
		// leaves less for the rest to match.
		k := strings.Index(rest[1:], lit)
		if k < 0 {
			return false
		}
		rest = rest[1+k+len(lit):]
	}
	last := lits[len(lits)-1]
	return len(rest) > len(last) && strings.HasSuffix(rest, last)
}

// split cuts s at its masks: the text around them, one more piece than
// masks.
func (ms *maskSet) split(s string) []string {
	var lits []string
	from := 0
	for at := 0; ; {
		k := strings.Index(s[at:], maskEdge)
		if k < 0 {
			break
		}
		start := at + k
		end := strings.Index(s[start+len(maskEdge):], maskEdge)
		if end < 0 {
			break
		}
		name := s[start+len(maskEdge) : start+len(maskEdge)+end]
		if !ms.isMask(name) {
			at = start + 1
			continue
		}
		lits = append(lits, s[from:start])
		from = start + 2*len(maskEdge) + len(name)
		at = from
	}
	if lits == nil {
		return nil
	}
	return append(lits, s[from:])
}

// isMask reports whether "***name***" is a mask of the set.
func (ms *maskSet) isMask(name string) bool {
	if ms.names[name] {
		return true
	}
	if !ms.anyName || name == "" || len(name) > 128 {
		return false
	}
	return !strings.ContainsAny(name, "* \t\r\n\"\\=")
}

// SortedKeys returns the keys of a and b, each once, in order.
func SortedKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// DescribeChange puts one difference in words, for a terminal: was and
// now name the two sides ("recorded", "now"; "in A", "in B").
func DescribeChange(c Change, was, now string) string {
	path := c.Path
	if path == "" {
		path = "(the whole message)"
	}
	path = classify.EscapeString(path, 120)
	if c.Item != "" {
		path += " (" + classify.EscapeString(c.Item, 120) + ")"
	}
	switch {
	case c.Was == "":
		return fmt.Sprintf("%s: added %s", path, classify.EscapeString(c.Now, 160))
	case c.Now == "":
		return fmt.Sprintf("%s: removed (was %s)", path, classify.EscapeString(c.Was, 160))
	}
	return fmt.Sprintf("%s: %s %s, %s %s", path, classify.EscapeString(c.Was, 160), was, classify.EscapeString(c.Now, 160), now)
}

// MaxChanges bounds the differences kept for one answer, and
// MaxDetailed the answers whose differences are kept: past it, an answer
// is only counted as changed, so that a report of a server that changed
// every answer of a long recording stays small.
const (
	MaxChanges  = 20
	MaxDetailed = 1000
)

// InternIn returns the copy of s kept in seen, keeping s when there is none.
func InternIn(seen map[string]string, s string) string {
	if v, ok := seen[s]; ok {
		return v
	}
	seen[s] = s
	return s
}

// Count says n of noun, for people: "1 path", "3 paths".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
