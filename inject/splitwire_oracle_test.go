package inject

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

// The SplitWire that fed a Splitter by hand, and its own frameBody, kept
// as the oracle of the one built on classify.SplitOpen and
// FrameInfo.Body: for any bytes, both read the same frames, bodies and
// headers, and give the same reason for a partial frame. Run it with
//
//	go test -run XXX -fuzz FuzzSplitWireMatchesItsOracle -fuzztime 60s ./inject
func FuzzSplitWireMatchesItsOracle(f *testing.F) {
	for _, s := range []string{
		"", "{}", "{}\n", "{}\n{}", "\n\n", "a\r\nb\n",
		"Content-Length: 2\r\n\r\n{}", "Content-Length: 2\r\n\r\n{", "Content-Length: 0\r\n\r\n",
		"Content-Length: 2\r\n", "Content-Type: x\r\n\r\n", "\r\n\r\n{}", "garbage\r\nContent-Length: 2\r\n\r\n{}",
		"Content-Length: 2\r\n\r\n{}Content-Length: 1\n\nx", "Content-Length: x\r\n\r\n{}Content-Length: 2\r\n\r\n{}",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	files, _ := filepath.Glob(filepath.Join("..", "classify", "testdata", "frames", "*.txtar"))
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, lsp bool) {
		framing := classify.FramingNDJSON
		if lsp {
			framing = classify.FramingLSP
		}
		got, gotPartial := SplitWire(data, framing)
		want, wantPartial := oracleSplitWire(data, framing)
		if gotPartial != wantPartial {
			t.Fatalf("partial %q, oracle %q", gotPartial, wantPartial)
		}
		if len(got) != len(want) {
			t.Fatalf("%d pieces, oracle %d", len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			switch {
			case !bytes.Equal(g.Bytes, w.Bytes) || g.Info != w.Info || g.Open != w.Open:
				t.Fatalf("piece %d: %q %+v open %v, oracle %q %+v open %v", i, g.Bytes, g.Info, g.Open, w.Bytes, w.Info, w.Open)
			case !bytes.Equal(g.Body(), w.Body()):
				t.Fatalf("piece %d: body %q, oracle %q", i, g.Body(), w.Body())
			case !bytes.Equal(g.Header(), w.Header()) || (g.Header() == nil) != (w.Header() == nil):
				t.Fatalf("piece %d: header %q, oracle %q", i, g.Header(), w.Header())
			}
		}
	})
}

type oraclePiece struct {
	Bytes []byte
	Info  classify.FrameInfo
	Open  bool
}

func (w oraclePiece) Body() []byte { return oracleFrameBody(w.Bytes, w.Info) }

func (w oraclePiece) Header() []byte {
	if w.Info.HeaderLen == 0 {
		return nil
	}
	return w.Bytes[:min(w.Info.HeaderLen, len(w.Bytes))]
}

func oracleSplitWire(data []byte, framing classify.Framing) (pieces []oraclePiece, partial string) {
	if framing != classify.FramingLSP {
		framing = classify.FramingNDJSON
	}
	sp := classify.NewSplitter(framing)
	start := 0 // where the open frame starts in data
	for off := 0; ; {
		n, end := sp.Split(data[off:], false)
		off += n
		if end {
			pieces = append(pieces, oraclePiece{Bytes: data[start:off], Info: sp.Frame()})
			start = off
			continue
		}
		if off == len(data) && start == len(data) {
			return pieces, ""
		}
		if n == 0 || off == len(data) {
			rest := classify.NewSplitter(framing)
			rest.Split(data[start:], true)
			info := rest.Frame()
			pieces = append(pieces, oraclePiece{Bytes: data[start:], Info: info, Open: true})
			return pieces, partialReason(framing, info, len(data)-start)
		}
	}
}

func oracleFrameBody(frame []byte, info classify.FrameInfo) []byte {
	body := frame
	if info.HeaderLen > 0 {
		body = body[min(info.HeaderLen, len(body)):]
	}
	if int64(len(body)) > info.BodyLen {
		body = body[:info.BodyLen]
	}
	return body
}
