package filter

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"
)

// needle is a plain-text token, prepared for case-insensitive search.
type needle struct {
	phrase string // as written
	// lower is the phrase in ASCII lower case when it is all ASCII; the
	// search then folds ASCII letters only, byte by byte. Otherwise lower
	// is "" and the search folds every character (slower, still without
	// allocating).
	lower string
	// first marks the bytes that can begin a match of a non-ASCII phrase:
	// the first bytes of every case of its first character.
	first [4]uint64
}

func newNeedle(phrase string) needle {
	for i := 0; i < len(phrase); i++ {
		if phrase[i] >= utf8.RuneSelf {
			n := needle{phrase: phrase}
			n.first[phrase[0]>>6] |= 1 << (phrase[0] & 63) // even when not UTF-8
			r, _ := utf8.DecodeRuneInString(phrase)
			for c := r; ; {
				var buf [utf8.UTFMax]byte
				utf8.EncodeRune(buf[:], c)
				n.first[buf[0]>>6] |= 1 << (buf[0] & 63)
				if c = unicode.SimpleFold(c); c == r {
					break
				}
			}
			return n
		}
	}
	b := []byte(phrase)
	for i, c := range b {
		b[i] = lowerASCII[c]
	}
	return needle{phrase: phrase, lower: string(b)}
}

// matchHead reports whether the method or the id contains the phrase.
func (n *needle) matchHead(fr *Frame) bool {
	return contains(fr.Method, n, strings.IndexByte, utf8.DecodeRuneInString) ||
		contains(fr.ID, n, strings.IndexByte, utf8.DecodeRuneInString)
}

// containedIn reports whether the payload contains the phrase.
func (n *needle) containedIn(payload []byte) bool {
	return contains(payload, n, bytes.IndexByte, utf8.DecodeRune)
}

// contains searches h for the needle, ignoring case. indexByte and decode
// are the strings or bytes functions for h's type.
func contains[T string | []byte](h T, n *needle, indexByte func(T, byte) int, decode func(T) (rune, int)) bool {
	if n.phrase == "" {
		return true
	}
	if n.lower == "" {
		return containsFold(h, n, decode)
	}
	return containsASCII(h, n.lower, indexByte)
}

// containsASCII searches h for lower (all ASCII, lower case), folding
// ASCII letters. Candidates are found with indexByte, once per case of the
// first byte, so the scan stays linear.
func containsASCII[T string | []byte](h T, lower string, indexByte func(T, byte) int) bool {
	last := len(h) - len(lower) // last possible start
	if last < 0 {
		return false
	}
	c0 := lower[0]
	c1 := upperASCII[c0]
	next0, next1 := -1, -1 // next start with c0 or c1 at or after i; -2: none
	if c1 == c0 {
		next1 = -2
	}
	for i := 0; i <= last; {
		if next0 != -2 && next0 < i {
			next0 = find(h, i, last, c0, indexByte)
		}
		if next1 != -2 && next1 < i {
			next1 = find(h, i, last, c1, indexByte)
		}
		switch {
		case next0 == -2 && next1 == -2:
			return false
		case next0 == -2, next1 != -2 && next1 < next0:
			i = next1
		default:
			i = next0
		}
		j := 1
		for j < len(lower) && lowerASCII[h[i+j]] == lower[j] {
			j++
		}
		if j == len(lower) {
			return true
		}
		i++
	}
	return false
}

// find gives the index of the first c in h[from:last+1], or -2.
func find[T string | []byte](h T, from, last int, c byte, indexByte func(T, byte) int) int {
	k := indexByte(h[from:last+1], c)
	if k < 0 {
		return -2
	}
	return from + k
}

// containsFold searches h for a non-ASCII phrase, folding every character.
func containsFold[T string | []byte](h T, n *needle, decode func(T) (rune, int)) bool {
	for i := 0; i < len(h); i++ {
		if c := h[i]; n.first[c>>6]&(1<<(c&63)) != 0 && foldPrefix(h[i:], n.phrase, decode) {
			return true
		}
	}
	return false
}

// foldPrefix reports whether h starts with phrase, ignoring case.
func foldPrefix[T string | []byte](h T, phrase string, decode func(T) (rune, int)) bool {
	i := 0
	for _, want := range phrase {
		if i >= len(h) {
			return false
		}
		got, w := decode(h[i:])
		if !equalFold(got, want) {
			return false
		}
		i += w
	}
	return true
}

func equalFold(a, b rune) bool {
	if a == b {
		return true
	}
	if a < utf8.RuneSelf && b < utf8.RuneSelf {
		return lowerASCII[a] == lowerASCII[b]
	}
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}

var lowerASCII, upperASCII = func() (lo, up [256]byte) {
	for i := range 256 {
		lo[i], up[i] = byte(i), byte(i)
	}
	for c := 'a'; c <= 'z'; c++ {
		up[c] = byte(c - 'a' + 'A')
		lo[c-'a'+'A'] = byte(c)
	}
	return lo, up
}()
