package tap

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// The recorder's parse limit counts a frame's body bytes, as a reader of
// the session file counts them (its header names the limit): an LSP frame
// whose body is within the limit is judged whole live and in the file,
// however long its header block, and one whose body is over it is judged
// oversize by both; whether it came in one read or in pieces.
func TestLiveAndFileJudgeFramesAtTheParseLimitAlike(t *testing.T) {
	const limit = 4096
	oversize := func(m classify.Message) bool {
		return slices.ContainsFunc(m.Findings, func(f classify.Finding) bool { return f.Code == classify.CodeOversize })
	}
	for _, framing := range []classify.Framing{classify.FramingLSP, classify.FramingNDJSON} {
		for _, size := range []int{limit - 30, limit - 1, limit, limit + 1, limit + 30} {
			for _, piece := range []int{0, 1000} {
				name := fmt.Sprintf("%s body %d in pieces of %d", framing, size, piece)
				body := []byte(`{"jsonrpc":"2.0","method":"n","params":{"x":"`)
				body = append(body, bytes.Repeat([]byte("x"), size-len(body)-3)...)
				body = append(body, `"}}`...)
				raw := append(slices.Clone(body), '\n')
				if framing == classify.FramingLSP {
					raw = append(fmt.Appendf(nil, "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n", len(body)), body...)
				}
				r := &recorder{limit: limit, hub: newHub(framing), free: make(chan *batch, 1)}
				r.free <- newBatch()
				for rest := raw; len(rest) > 0; {
					n := len(rest)
					if piece > 0 {
						n = min(piece, n)
					}
					r.wire(0, item{dir: classify.H2S, data: rest[:n]})
					rest = rest[n:]
				}
				if r.cur == nil || len(r.cur.jobs) == 0 {
					t.Fatalf("%s: the recorder made no job", name)
				}
				j := r.cur.jobs[len(r.cur.jobs)-1]
				held := r.cur.bytes(j.body)
				if j.kind == jobSpool {
					held = j.held
				}
				live := classify.ClassifyFramed(held, j.info, j.dir, classify.JSONRPC)
				file := sessions.Header{ParseLimit: limit}.Classify(body, classify.H2S, classify.JSONRPC)
				if oversize(live) != oversize(file) || oversize(file) != (size > limit) {
					t.Errorf("%s: oversize live %v, in the file %v; want %v", name, oversize(live), oversize(file), size > limit)
				}
			}
		}
	}
}
