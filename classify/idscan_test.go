package classify

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// scanInPieces reads body through an IDScanner in pieces of random sizes,
// checking on the way that no early verdict is taken back: once the bytes
// rule out a response, or once the id is read, the end says the same.
func scanInPieces(t *testing.T, body []byte, rnd *rand.Rand) (id []byte, response, request bool) {
	t.Helper()
	var s IDScanner
	ruledOut := false
	var early []byte
	earlyRead := false
	for rest := body; len(rest) > 0; {
		n := min(len(rest), 1+rnd.IntN(8))
		s.Write(rest[:n])
		rest = rest[n:]
		if s.NotResponse() {
			ruledOut = true
		} else if ruledOut {
			t.Fatalf("%q: ruled out a response, then took it back", body)
		}
		if id, read := s.ID(); read && !earlyRead {
			early, earlyRead = bytes.Clone(id), true
		}
	}
	s.End()
	id, ok := s.Response()
	if ruledOut && ok {
		t.Fatalf("%q: ruled out a response early, then judged one at the end", body)
	}
	if earlyRead && ok && !bytes.Equal(early, id) {
		t.Fatalf("%q: read id %s early, %s at the end", body, early, id)
	}
	reqID, req := s.Request()
	if req && ok {
		t.Fatalf("%q: judged both a request and a response", body)
	}
	if req && earlyRead && !bytes.Equal(early, reqID) {
		t.Fatalf("%q: read id %s early, request id %s at the end", body, early, reqID)
	}
	return id, ok, req
}

// checkAgrees checks that an IDScanner, fed body in pieces, judges it as
// Classify judges it whole: a response with an id, and the same id.
func checkAgrees(t *testing.T, body []byte, rnd *rand.Rand) {
	t.Helper()
	m := Classify(body, S2H, JSONRPC)
	want := m.Kind == KindResponse && m.HasID()
	id, ok, req := scanInPieces(t, body, rnd)
	if isReq := m.Kind == KindRequest || (m.Kind == KindInvalid && m.HasID() && m.Method() != ""); isReq && !req {
		t.Fatalf("%q: Classify says %s with an id, the scanner says no request", body, m.Kind)
	} else if req && m.Kind != KindRequest && m.Kind != KindInvalid {
		t.Fatalf("%q: the scanner says request, Classify %s", body, m.Kind)
	}
	if ok != want {
		t.Fatalf("%q: the scanner says response with an id = %v, Classify says %s (id %v)", body, ok, m.Kind, m.HasID())
	}
	if ok && !bytes.Equal(id, m.ID().Raw) {
		t.Fatalf("%q: the scanner read id %s, Classify %s", body, id, m.ID().Raw)
	}
}

var idScanCases = []string{
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":"rpctap-1","result":{"content":[{"type":"text","text":"a\"b\\c\u001b"}]}}`,
	`{"result":{"x":[1,2,{"id":7}]},"jsonrpc":"2.0","id":"late"}`,
	`  {"id" : -12.5e+3 , "error":{"code":-32601,"message":"no"}}  ` + "\r",
	`{"id":0,"result":null}`,
	`{"id":true,"result":1}`,
	`{"id":null,"error":{}}`,
	`{"id":{"a":[1,{"b":"}"}]},"result":1}`,
	`{"id":[1,2],"result":1}`,
	`{"\u0069d":"esc","result":1}`,
	`{"id":"first","id":"second","result":1}`,
	`{"id":"x","method":"ping"}`,
	`{"method":"ping","id":"x"}`,
	`{"id":1,"method":5}`,
	`{"jsonrpc":"1.0","id":1,"method":"x","params":3}`,
	`{"method":"note"}`,
	`{"result":1,"id":"x","\u006dethod":"m"}`,
	`{"result":1}`,
	`{}`,
	`[{"id":1,"result":1}]`,
	`"id"`,
	`12`,
	`{"id":1,"result":1} {}`,
	`{"id":1,"result":1}x`,
	`{"id":1,"result":`,
	`{"id":01,"result":1}`,
	`{"id":1.,"result":1}`,
	`{"id":1e,"result":1}`,
	`{"id":-,"result":1}`,
	`{"id":tru,"result":1}`,
	`{"id":"a` + "\x01" + `b","result":1}`,
	`{"id":"\x","result":1}`,
	`{"id":"\u12g4","result":1}`,
	`{"id":1,"result":1,}`,
	`{"id":1 "result":1}`,
	`{"id":1,"result":[1,]}`,
	`{"id":1,"result":{"a" 1}}`,
	`{"id":1,"result":{"a":1]}`,
	"{\"id\":\"\xff\xfe\",\"result\":\"\xc3\"}",
	`{"params":{"id":1},"result":2}`,
	`{"idx":1,"result":2}`,
	`{"i\"d":1,"result":2}`,
	`{"id":1,"result":"` + strings.Repeat("é✓", 50) + `"}`,
	``,
	`   `,
}

// An IDScanner judges a body read in pieces as Classify judges it whole:
// whether it is a response with an id (a valid object with no method and
// an id member, wherever among its members), and which id; and whether it
// is a request with an id (valid or not by its members' types).
func TestIDScannerJudgesAResponsesIDAsClassifyDoes(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 9))
	for _, c := range idScanCases {
		for range 20 {
			checkAgrees(t, []byte(c), rnd)
		}
	}
	// Mutants: a byte changed, dropped or doubled.
	for _, c := range idScanCases {
		for range 200 {
			b := []byte(c)
			if len(b) == 0 {
				continue
			}
			i := rnd.IntN(len(b))
			switch rnd.IntN(3) {
			case 0:
				b[i] = `{}[]":,\ 0-1e.tnu"`[rnd.IntN(18)]
			case 1:
				b = append(b[:i:i], b[i+1:]...)
			default:
				b = append(b[:i+1:i+1], b[i:]...)
			}
			checkAgrees(t, b, rnd)
		}
	}
}

// Nesting past encoding/json's limit is not JSON, to the scanner as to
// Classify.
func TestIDScannerRefusesNestingAsDeepAsClassifyDoes(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	for _, depth := range []int{maxDepth - 1, maxDepth, maxDepth + 1} {
		body := `{"id":1,"result":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
		checkAgrees(t, []byte(body), rnd)
	}
}

// An id longer than MaxScannedID is read as one that no capture can be
// for: nil, yet read.
func TestIDScannerReadsAnOverlongIDAsNone(t *testing.T) {
	var s IDScanner
	s.Write([]byte(`{"id":"` + strings.Repeat("x", MaxScannedID) + `","result":1}`))
	if id, read := s.ID(); !read || id != nil {
		t.Fatalf("ID() = %d bytes, read %v; want nil, read", len(id), read)
	}
	s.End()
	if id, ok := s.Response(); !ok || id != nil {
		t.Fatalf("Response() = %d bytes, %v; want nil, true", len(id), ok)
	}
}

// FuzzIDScanner: any body read in pieces is judged as Classify judges it
// whole.
func FuzzIDScanner(f *testing.F) {
	for _, c := range idScanCases {
		f.Add([]byte(c), uint64(1))
	}
	f.Fuzz(func(t *testing.T, body []byte, seed uint64) {
		checkAgrees(t, body, rand.New(rand.NewPCG(seed, seed)))
	})
}
