package classify

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// This file holds the quoting of the JSON byte toolkit: a string written
// as a JSON string whose decoding is exactly it, terminal-safe, as the
// session file is written.

const hexDigits = "0123456789abcdef"

// bytesOf returns the bytes of s without a copy, to be read only. It reads
// s's header as a string's, which a slice's header starts with.
func bytesOf[S ~string | ~[]byte](s S) []byte {
	return unsafe.Slice(unsafe.StringData(*(*string)(unsafe.Pointer(&s))), len(s))
}

// shortEscape is the letter after the backslash for the ASCII bytes that
// have a two-character escape, and 0 for the other control characters.
var shortEscape = [utf8.RuneSelf]byte{'"': '"', '\\': '\\', '\n': 'n', '\r': 'r', '\t': 't'}

// quoteSafe marks the ASCII bytes a JSON string holds as they are.
var quoteSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// lo7 is the low seven bits of each byte.
const lo7 = 0x7f7f7f7f7f7f7f7f

// zeroBytes sets the high bit of exactly the zero bytes of y (no borrow
// runs from one byte into the next).
func zeroBytes(y uint64) uint64 { return ^((y&lo7 + lo7) | y | lo7) }

// otherBytes sets the high bit of exactly the bytes of x that are control
// characters (below 0x20) or not ASCII.
func otherBytes(x uint64) uint64 { return (^(x&lo7 + lsb*0x60) | x) & msb }

// quoteStretch is how many bytes AppendQuoted quotes a word at a time
// before it makes room again: room for twice a whole frame would cost a
// large frame twice its size.
const quoteStretch = 512

// AppendQuoted appends s as a JSON string whose decoding is exactly s:
// `"` and `\` are escaped, control characters become \n, \r, \t or \u00XX,
// and C1 controls, bidi and other format characters, U+2028 and U+2029
// become \u escapes (see UnsafeRune); everything else, DEL
// included, is copied as it is.
//
// When s is not valid UTF-8, a strict call returns ok == false (and b
// holds a partial string to be cut off); otherwise each invalid byte is
// written as \ufffd.
func AppendQuoted[S ~string | ~[]byte](b []byte, s S, strict bool) (_ []byte, ok bool) {
	return appendQuoted(b, s, strict, true)
}

// appendQuoted is AppendQuoted, and with safe false it escapes of the
// characters UnsafeRune names only U+2028 and U+2029, as JSON read as
// JavaScript needs (AppendJSONString).
func appendQuoted[S ~string | ~[]byte](b []byte, s S, strict, safe bool) (_ []byte, ok bool) {
	// Write through an index into b's spare capacity. A word of eight
	// printable ASCII bytes is stored at once, and a backslash is put in
	// front of each quote or backslash in it by storing the rest of the
	// word again one byte further on: frames are dense in quotes, and a
	// branch per quote costs more than the stores. Other bytes take the
	// path a byte at a time. Words come in stretches of quoteStretch
	// bytes, before each of which room is made for the most it can take:
	// two bytes for each byte, and the last store's overhang. Where there
	// is assembly for it (simd_amd64.s), a stretch of printable ASCII
	// goes the same way sixteen bytes at a time first.
	n := len(b)
	b = room(b, n, len(s)+64)
	b[n] = '"'
	n++
	i := 0
	for i < len(s) {
		end := min(i+quoteStretch, len(s))
		if n+2*(end-i)+24 > len(b) {
			b = room(b, n, 2*(end-i)+24+len(s)-end)
		}
		if end-i >= 32 && otherBytes(Load64(s, i))|otherBytes(Load64(s, i+8)) == 0 {
			nd, ns := quoteRun(b[n:], bytesOf(s)[i:min(end+16, len(s))])
			n += nd
			i += ns
		}
		for i+8 <= end {
			x := Load64(s, i)
			if otherBytes(x) != 0 {
				break
			}
			binary.LittleEndian.PutUint64(b[n:], x)
			for q := zeroBytes(x^lsb*'"') | zeroBytes(x^lsb*'\\'); q != 0; q &= q - 1 {
				k := bits.TrailingZeros64(q) >> 3
				b[n+k] = '\\'
				binary.LittleEndian.PutUint64(b[n+k+1:], x>>(8*k))
				n++
			}
			i += 8
			n += 8
		}
		if i+8 > end && i+8 <= len(s) {
			continue // the stretch is done, and more words follow
		}
		// Up to eight bytes one at a time: at most six bytes written for
		// each, and a sequence begun among them ends at most three bytes on.
		if n+64 > len(b) {
			b = room(b, n, len(s)-i+64)
		}
		for end := min(i+8, len(s)); i < end; {
			c := s[i]
			if c < utf8.RuneSelf {
				switch e := shortEscape[c]; {
				case quoteSafe[c]:
					b[n] = c
					n++
				case e != 0:
					b[n], b[n+1] = '\\', e
					n += 2
				default:
					b[n], b[n+1], b[n+2], b[n+3] = '\\', 'u', '0', '0'
					b[n+4], b[n+5] = hexDigits[c>>4], hexDigits[c&0xf]
					n += 6
				}
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			switch {
			case r >= 0x2070 && r < 0xfeff || r >= 0xa0 && r < 0x600 && r != 0xad:
				// Where most text is: no character here is escaped.
				n += copy(b[n:], s[i:i+size])
			case r == utf8.RuneError && size == 1:
				if strict {
					return b[:n], false
				}
				n += copy(b[n:], `\ufffd`)
			case safe && UnsafeRune(r) || r == 0x2028 || r == 0x2029:
				// C1 controls, bidi and other format characters, U+2028
				// and U+2029: escaped, so that no reader takes the last
				// two for line ends, and the file is as safe to cat or
				// grep on a terminal as rpctap's views.
				if r > 0xffff {
					r1, r2 := utf16.EncodeRune(r)
					n = putEscape(b, putEscape(b, n, r1), r2)
				} else {
					n = putEscape(b, n, r)
				}
			default:
				n += copy(b[n:], s[i:i+size])
			}
			i += size
		}
	}
	b[n] = '"'
	return b[:n+1], true
}

// putEscape writes the \u escape of u (below U+10000) at b[n:], and
// returns where it ends.
func putEscape(b []byte, n int, u rune) int {
	b[n], b[n+1], b[n+2], b[n+3] = '\\', 'u', hexDigits[u>>12], hexDigits[u>>8&0xf]
	b[n+4], b[n+5] = hexDigits[u>>4&0xf], hexDigits[u&0xf]
	return n + 6
}

// AppendString appends s as a JSON string, invalid UTF-8 replaced.
func AppendString[S ~string | ~[]byte](b []byte, s S) []byte {
	b, _ = AppendQuoted(b, s, false)
	return b
}

// Load64 reads s[i:i+8] as a little-endian word: its first byte is the
// lowest (the word the SWAR scans of JSON text look at).
func Load64[S ~string | ~[]byte](s S, i int) uint64 {
	w := s[i : i+8]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// room returns b with its length set to its capacity, and at least need
// bytes of it free from n on.
func room(b []byte, n, need int) []byte {
	if n+need > cap(b) {
		b = slices.Grow(b[:n], need)
	}
	return b[:cap(b)]
}
