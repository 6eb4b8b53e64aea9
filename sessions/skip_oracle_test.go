package sessions

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

// The skipValue the session reader had of its own, kept as the oracle of
// classify.SkipValue, which the reader, the writer and the hasher use
// now: for any bytes and any start, both find the same value end, or
// both find none. Run it with
//
//	go test -run XXX -fuzz FuzzSkipValueMatchesItsOracle -fuzztime 60s ./sessions
func FuzzSkipValueMatchesItsOracle(f *testing.F) {
	for _, s := range []string{"", "{}", "[]", `{"a":1}`, `[1,-2.5e+3,"x",true,false,null,{"b":[]}]`, ` {}`, "\"\\u00e9\\n\"", "\"\xff\x7f\"",
		"\"\x01\"", "01", "-", "1.", "1e", "tru", "nul", `{"a" : [ 1 , 2 ] }`, `{"a":1,}`, `[1 2]`, "\"\\ud800\"", "\"\\uD83D\\uDE00\"", "\"\\x\""} {
		f.Add([]byte(s), uint(0))
	}
	deep := make([]byte, 0, 20002)
	for range 10001 {
		deep = append(deep, '[')
	}
	for range 10001 {
		deep = append(deep, ']')
	}
	f.Add(deep, uint(0))
	f.Add(deep, uint(1))
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "sessions", "*", "*.jsonl"))
	for _, file := range files {
		fh, err := os.Open(file)
		if err != nil {
			f.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for n := 0; sc.Scan() && n < 20; n++ {
			f.Add(append([]byte(nil), sc.Bytes()...), uint(n))
		}
		fh.Close()
	}
	f.Fuzz(func(t *testing.T, data []byte, at uint) {
		i := int(at % uint(len(data)+1))
		gotEnd, gotOK := classify.SkipValue(data, i)
		wantEnd, wantOK := oracleSkipValue(data, i, 0)
		if gotEnd != wantEnd || gotOK != wantOK {
			t.Fatalf("%q at %d: %d, %v; oracle %d, %v", data, i, gotEnd, gotOK, wantEnd, wantOK)
		}
	})
}

// skipValue checks that one JSON value starts at s[i] and returns the
// index after it. It does not change s.
func oracleSkipValue(s []byte, i, depth int) (next int, ok bool) {
	if i >= len(s) {
		return 0, false
	}
	switch c := s[i]; {
	case c == '"':
		return oracleSkipString(s, i+1)
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return 0, false
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		i = skipSpace(s, i+1)
		if i < len(s) && s[i] == end {
			return i + 1, true
		}
		for {
			if end == '}' {
				if i >= len(s) || s[i] != '"' {
					return 0, false
				}
				if i, ok = oracleSkipString(s, i+1); !ok {
					return 0, false
				}
				i = skipSpace(s, i)
				if i >= len(s) || s[i] != ':' {
					return 0, false
				}
				i = skipSpace(s, i+1)
			}
			if i, ok = oracleSkipValue(s, i, depth+1); !ok {
				return 0, false
			}
			i = skipSpace(s, i)
			if i >= len(s) {
				return 0, false
			}
			if s[i] == end {
				return i + 1, true
			}
			if s[i] != ',' {
				return 0, false
			}
			i = skipSpace(s, i+1)
		}
	case c == '-' || '0' <= c && c <= '9':
		return oracleSkipNumber(s, i)
	case hasLiteral(s, i, "true"), hasLiteral(s, i, "null"):
		return i + 4, true
	case hasLiteral(s, i, "false"):
		return i + 5, true
	}
	return 0, false
}

// skipString checks the JSON string whose opening quote is at s[i-1].
func oracleSkipString(s []byte, i int) (next int, ok bool) {
	for {
		for i < len(s) && !unquoteStop[s[i]] {
			i++
		}
		if i >= len(s) {
			return 0, false
		}
		switch s[i] {
		case '"':
			return i + 1, true
		case '\\':
		default:
			return 0, false
		}
		_, n, ok := classify.DecodeEscape(s[i:])
		if !ok {
			return 0, false
		}
		i += n
	}
}

// skipNumber checks a JSON number at s[i].
func oracleSkipNumber(s []byte, i int) (next int, ok bool) {
	digits := func(i int) int {
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = digits(i)
	default:
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}
