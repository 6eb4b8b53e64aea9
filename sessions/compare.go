package sessions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
)

// Replay and diff compare messages structurally: two messages are the
// same when they decode to the same JSON value (members in any order,
// strings by their decoded text, numbers by their text), with the
// envelope's id, every "_meta" member at any depth, and the paths the
// user names left out.

// An Ignore is a set of JSON pointers (RFC 6901) into a message, from its
// root ("/result/content/0/text", "/params/arguments/when"), that
// comparisons leave out. A segment "*" matches any member or element.
// The zero Ignore leaves out only the id and "_meta".
type Ignore struct {
	paths [][]string
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

// With returns ig with more pointers, already split.
func (ig Ignore) with(paths ...[]string) Ignore {
	return Ignore{paths: append(slices.Clip(ig.paths), paths...)}
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

var hashSeed = maphash.MakeSeed()

// A hasher computes a structural hash of a JSON value without decoding
// it into Go values: equal values (as above) hash equal.
type hasher struct {
	ig   Ignore
	path []string
	buf  []byte
}

// Hash returns the structural hash of the message msg (see Ignore); ok is
// false when msg is not one JSON value.
func (ig Ignore) Hash(msg []byte) (h uint64, ok bool) {
	hs := hasher{ig: ig}
	return hs.hash(msg)
}

// hash is Ignore.Hash, reusing the hasher's memory.
func (hs *hasher) hash(msg []byte) (h uint64, ok bool) {
	hs.path = hs.path[:0]
	i := skipSpace(msg, 0)
	h, i, ok = hs.value(msg, i, 0)
	return h, ok && skipSpace(msg, i) == len(msg)
}

func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

const (
	tagString = iota + 1
	tagNumber
	tagLiteral
	tagObject
	tagArray
)

func (hs *hasher) value(s []byte, i, depth int) (uint64, int, bool) {
	if i >= len(s) || depth > maxDepth {
		return 0, 0, false
	}
	switch c := s[i]; {
	case c == '"':
		v, next, ok := hs.str(s, i)
		return mix(maphash.Bytes(hashSeed, v) ^ tagString), next, ok
	case c == '{':
		var sum uint64
		i = skipSpace(s, i+1)
		if i < len(s) && s[i] == '}' {
			return mix(tagObject), i + 1, true
		}
		for {
			key, next, ok := hs.str(s, i)
			if !ok {
				return 0, 0, false
			}
			keyHash := maphash.Bytes(hashSeed, key)
			hs.path = append(hs.path, string(key))
			i = skipSpace(s, next)
			if i >= len(s) || s[i] != ':' {
				return 0, 0, false
			}
			i = skipSpace(s, i+1)
			skip := hs.ig.skips(hs.path)
			v, next, ok := hs.value(s, i, depth+1)
			hs.path = hs.path[:len(hs.path)-1]
			if !ok {
				return 0, 0, false
			}
			if !skip {
				sum += mix(keyHash*31 + v)
			}
			if i = skipSpace(s, next); i >= len(s) {
				return 0, 0, false
			}
			if s[i] == '}' {
				return mix(sum ^ tagObject), i + 1, true
			}
			if s[i] != ',' {
				return 0, 0, false
			}
			i = skipSpace(s, i+1)
		}
	case c == '[':
		h := uint64(tagArray)
		i = skipSpace(s, i+1)
		if i < len(s) && s[i] == ']' {
			return mix(h), i + 1, true
		}
		for n := 0; ; n++ {
			hs.path = append(hs.path, strconv.Itoa(n))
			skip := len(hs.ig.paths) > 0 && hs.ig.skips(hs.path)
			v, next, ok := hs.value(s, i, depth+1)
			hs.path = hs.path[:len(hs.path)-1]
			if !ok {
				return 0, 0, false
			}
			if !skip {
				h = mix(h*31 + v)
			}
			if i = skipSpace(s, next); i >= len(s) {
				return 0, 0, false
			}
			if s[i] == ']' {
				return mix(h), i + 1, true
			}
			if s[i] != ',' {
				return 0, 0, false
			}
			i = skipSpace(s, i+1)
		}
	case c == '-' || '0' <= c && c <= '9':
		next, ok := skipNumber(s, i)
		return mix(maphash.Bytes(hashSeed, s[i:next]) ^ tagNumber), next, ok
	default:
		next, ok := skipValue(s, i, depth)
		return mix(maphash.Bytes(hashSeed, s[i:next]) ^ tagLiteral), next, ok
	}
}

// str decodes the JSON string at s[i] (its opening quote), into a
// scratch buffer when it has escapes; s is never changed. It finds the
// closing quote with bytes.IndexByte, and does not check for raw control
// characters: the hash of a string that is not quite JSON is still its
// bytes' hash.
func (hs *hasher) str(s []byte, i int) ([]byte, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return nil, 0, false
	}
	j := i + 1
	for {
		k := bytes.IndexByte(s[j:], '"')
		if k < 0 {
			return nil, 0, false
		}
		j += k
		n := 0
		for p := j - 1; p > i && s[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			break
		}
		j++
	}
	raw, end := s[i+1:j], j+1
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw, end, true
	}
	hs.buf = append(hs.buf[:0], s[i:end]...)
	v, _, ok := unquote(hs.buf, 1)
	return v, end, ok
}

// A Change is one difference between two JSON values.
type Change struct {
	Path string // a JSON pointer from the message's root
	// Was and Now are the values at Path as compact JSON; "" when the
	// member or element is not there.
	Was, Now string
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
	va, errA := decodeJSON(a)
	vb, errB := decodeJSON(b)
	if errA != nil || errB != nil {
		if bytes.Equal(a, b) {
			return nil
		}
		return []Change{{Path: "", Was: compactOrText(a), Now: compactOrText(b)}}
	}
	d := differ{ig: ig, limit: limit}
	d.diff(va, vb)
	return d.out
}

type differ struct {
	ig    Ignore
	path  []string
	out   []Change
	limit int
}

func (d *differ) full() bool { return d.limit > 0 && len(d.out) >= d.limit }

func (d *differ) add(was, now any) {
	if d.full() {
		return
	}
	d.out = append(d.out, Change{Path: pointer(d.path), Was: compactValue(was), Now: compactValue(now)})
}

// absent marks a member that is not there (nil stands for JSON null).
type absent struct{}

func (d *differ) diff(a, b any) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			d.add(a, b)
			return
		}
		for _, k := range sortedKeys(x, y) {
			d.path = append(d.path, k)
			if !d.ig.skips(d.path) {
				va, okA := x[k]
				vb, okB := y[k]
				switch {
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
		for i := range max(len(x), len(y)) {
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
		if a != b {
			d.add(a, b)
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
			if w == v {
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
