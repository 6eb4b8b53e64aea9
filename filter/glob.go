package filter

import (
	"strings"
	"unicode/utf8"
)

// globShape picks the cheapest way to match a glob.
type globShape uint8

const (
	globExact    globShape = iota // no wildcard
	globAll                       // only stars
	globPrefix                    // lit*
	globSuffix                    // *lit
	globContains                  // *lit*
	globGeneral                   // anything else
)

// glob is a compiled method pattern: `*` matches any run of characters
// (slashes included), `?` exactly one character. Matching is
// case-sensitive, as JSON-RPC method names are.
type glob struct {
	shape globShape
	lit   string // the literal part, for the simple shapes
	pat   string // the whole pattern, for globGeneral
}

func compileGlob(pat string) glob {
	if strings.IndexByte(pat, '?') < 0 {
		stars := strings.Count(pat, "*")
		inner := strings.Trim(pat, "*")
		switch {
		case stars == 0:
			return glob{shape: globExact, lit: pat}
		case inner == "":
			return glob{shape: globAll}
		case strings.IndexByte(inner, '*') < 0:
			lead, trail := pat[0] == '*', pat[len(pat)-1] == '*'
			if stars == 1 || (stars == 2 && lead && trail) {
				switch {
				case lead && trail:
					return glob{shape: globContains, lit: inner}
				case lead:
					return glob{shape: globSuffix, lit: inner}
				default:
					return glob{shape: globPrefix, lit: inner}
				}
			}
		}
	}
	return glob{shape: globGeneral, pat: pat}
}

func (g *glob) match(s string) bool {
	switch g.shape {
	case globExact:
		return s == g.lit
	case globAll:
		return true
	case globPrefix:
		return strings.HasPrefix(s, g.lit)
	case globSuffix:
		return strings.HasSuffix(s, g.lit)
	case globContains:
		return strings.Contains(s, g.lit)
	}
	return globMatch(g.pat, s)
}

// globMatch matches s against pat, backtracking only to the last star
// (which is enough: a later star can absorb whatever an earlier one would).
func globMatch(pat, s string) bool {
	px, sx := 0, 0
	nextPx, nextSx := 0, -1
	for px < len(pat) || sx < len(s) {
		if px < len(pat) {
			switch c := pat[px]; c {
			case '*':
				nextPx, nextSx = px, sx
				px++
				continue
			case '?':
				if sx < len(s) {
					_, w := utf8.DecodeRuneInString(s[sx:])
					px++
					sx += w
					continue
				}
			default:
				if sx < len(s) && s[sx] == c {
					px++
					sx++
					continue
				}
			}
		}
		// Mismatch: let the last star absorb one more character.
		if nextSx >= 0 && nextSx < len(s) {
			_, w := utf8.DecodeRuneInString(s[nextSx:])
			nextSx += w
			px, sx = nextPx+1, nextSx
			continue
		}
		return false
	}
	return true
}
