package sessions

import (
	"bytes"
	"hash/maphash"
	"strconv"

	"github.com/rpctap/rpctap/classify"
)

var hashSeed = maphash.MakeSeed()

// A Hasher computes a structural hash of a JSON value without decoding
// it into Go values: equal values (see Ignore) hash equal.
type Hasher struct {
	Ignore Ignore
	path   []string
	buf    []byte
	// want are the members (paths) whose hashes and raw values got
	// keeps, as hashCall asks.
	want [][]string
	got  []captured
}

// Hash returns the structural hash of the message msg (see Ignore); ok is
// false when msg is not one JSON value.
func (ig Ignore) Hash(msg []byte) (h uint64, ok bool) {
	hs := Hasher{Ignore: ig}
	return hs.Hash(msg)
}

// Hash is Ignore.Hash, reusing the hasher's memory.
func (hs *Hasher) Hash(msg []byte) (h uint64, ok bool) {
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

func (hs *Hasher) value(s []byte, i, depth int) (uint64, int, bool) {
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
			skip := hs.Ignore.skips(hs.path)
			v, next, ok := hs.value(s, i, depth+1)
			if ok && len(hs.want) > 0 && len(hs.path) <= maxWanted {
				hs.capture(v, s[i:next])
			}
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
			skip := len(hs.Ignore.paths) > 0 && hs.Ignore.skips(hs.path)
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
		next, ok := classify.SkipValue(s, i)
		return mix(maphash.Bytes(hashSeed, s[i:next]) ^ tagNumber), next, ok
	default:
		next, ok := classify.SkipValue(s, i)
		return mix(maphash.Bytes(hashSeed, s[i:next]) ^ tagLiteral), next, ok
	}
}

// str decodes the JSON string at s[i] (its opening quote), into a
// scratch buffer when it has escapes; s is never changed. It finds the
// closing quote with bytes.IndexByte, and does not check for raw control
// characters: the hash of a string that is not quite JSON is still its
// bytes' hash.
func (hs *Hasher) str(s []byte, i int) ([]byte, int, bool) {
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

// MemberSpan finds the value of the member key of the JSON object obj:
// obj[start:end]. ok is false when obj is not an object or has no such
// member.
func MemberSpan(obj []byte, key string) (start, end int, ok bool) {
	var hs Hasher
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return 0, 0, false
	}
	i = skipSpace(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		k, next, ok := hs.str(obj, i)
		if !ok {
			return 0, 0, false
		}
		i = skipSpace(obj, next)
		if i >= len(obj) || obj[i] != ':' {
			return 0, 0, false
		}
		i = skipSpace(obj, i+1)
		end, ok := classify.SkipValue(obj, i)
		if !ok {
			return 0, 0, false
		}
		if string(k) == key {
			return i, end, true
		}
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ',' {
			return 0, 0, false
		}
		i = skipSpace(obj, i+1)
	}
	return 0, 0, false
}
