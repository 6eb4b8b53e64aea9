package classify

import (
	"math/rand/v2"
	"testing"

	"github.com/rpctap/rpctap/internal/memguard"
)

// plainRunByBytes is plainRun's contract, a byte at a time: whole blocks
// of sixteen plain bytes, and the plain escapes, up to the first byte that
// needs more thought or the last whole block.
func plainRunByBytes(p []byte) (n int, escaped bool) {
	for n+16 <= len(p) {
		j := 0
		for j < 16 && !isStringStop(p[n+j]) {
			j++
		}
		if j == 16 {
			n += 16
			continue
		}
		n += j
		if p[n] != '\\' || n+1 >= len(p) || !plainEscape[p[n+1]] {
			return n, escaped
		}
		escaped = true
		n += 2
	}
	return n, escaped
}

func isStringStop(c byte) bool { return c == '"' || c == '\\' || c < 0x20 || c >= 0x7f }

// stringText fills b with text dense in what ends plainRun's blocks:
// backslashes, the letters after them, quotes, control bytes, DEL and
// bytes that are not ASCII.
func stringText(r *rand.Rand, b []byte) {
	const special = "\\\\\\\"/ntbu0\x00\x1f\x7f\x80\xc3\xa9\xff"
	for i := range b {
		if r.IntN(3) == 0 {
			b[i] = special[r.IntN(len(special))]
		} else {
			b[i] = 'a' + byte(r.IntN(26))
		}
	}
}

// plainRun reads and writes nothing outside the slice it is given, at
// every length, with a page it may not touch right after or right before
// it, and follows its contract.
func TestPlainRunStaysInsideItsSlice(t *testing.T) {
	region := memguard.Region(t, 1)
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 100 {
		for size := 0; size <= 200; size++ {
			for _, p := range [][]byte{region[len(region)-size:], region[:size:size]} {
				stringText(r, p)
				if round < 2 && size > 0 {
					// Plain text, or plain escapes, to a last backslash.
					for i := range p {
						p[i] = `aa\n`[round*2+i%2]
					}
					p[size-1] = '\\'
				}
				n, esc := plainRun(p)
				if wn, we := plainRunByBytes(p); n != wn || esc != we {
					t.Fatalf("%q: plainRun gives %d, %v; want %d, %v", p, n, esc, wn, we)
				}
			}
		}
	}
}

// Classify reads nothing past the frame, wherever it is cut: a frame cut
// inside a long string, right after a backslash or mid-escape, sits
// against a page it may not touch, and is judged as a copy elsewhere is.
func TestClassifyReadsNothingPastTheFrame(t *testing.T) {
	region := memguard.Region(t, 1)
	r := rand.New(rand.NewPCG(3, 4))
	for range 40 {
		text := make([]byte, 100)
		stringText(r, text)
		frame := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"text":"`), text...)
		frame = append(frame, `"}}`...)
		for cut := 0; cut <= len(frame); cut++ {
			f := region[len(region)-cut:]
			copy(f, frame)
			got := ClassifyPrefix(f, int64(len(frame)), H2S, MCP)
			want := ClassifyPrefix(append([]byte(nil), frame[:cut]...), int64(len(frame)), H2S, MCP)
			if summary(&got) != summary(&want) {
				t.Fatalf("%q: %s against a guard page, %s elsewhere", frame[:cut], summary(&got), summary(&want))
			}
		}
	}
}
