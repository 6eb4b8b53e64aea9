package classify

import (
	"bytes"
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

// quoteText fills b with printable ASCII dense in quotes and backslashes,
// now and then a control byte, DEL or a byte that is not ASCII; with
// dense, only quotes and backslashes (the most quoteRun ever writes).
func quoteText(r *rand.Rand, b []byte, dense bool) {
	for i := range b {
		switch x := r.IntN(40); {
		case dense || x < 14:
			b[i] = `"\`[r.IntN(2)]
		case x == 14:
			b[i] = byte(r.IntN(0x20))
		case x == 15:
			b[i] = 0x7f + byte(r.IntN(0x81))
		default:
			b[i] = 0x20 + byte(r.IntN(0x5f))
		}
	}
}

// quoteRun reads and writes nothing outside the slices it is given, for
// every pair of lengths, with a page it may not touch right after or right
// before each; what it wrote is the quoting of what it read; and it stops
// only where it must.
func TestQuoteRunStaysInsideItsSlices(t *testing.T) {
	srcs, dsts := memguard.Region(t, 1), memguard.Region(t, 1)
	r := rand.New(rand.NewPCG(7, 8))
	for round := range 6 {
		for size := 0; size <= 150; size++ {
			src := srcs[len(srcs)-size:]
			if round%2 == 1 {
				src = srcs[:size:size]
			}
			quoteText(r, src, round >= 4)
			for room := 0; room <= 150; room++ {
				for _, dst := range [][]byte{dsts[len(dsts)-room:], dsts[:room:room]} {
					nd, ns := quoteRun(dst, src)
					var want []byte
					for _, c := range src[:ns] {
						if c == '"' || c == '\\' {
							want = append(want, '\\')
						}
						want = append(want, c)
					}
					if ns%16 != 0 || !quotable(src[:ns]) || !bytes.Equal(dst[:nd], want) {
						t.Fatalf("%q into %d bytes: read %d, wrote %q", src, room, ns, dst[:nd])
					}
					if ns+32 <= size && nd+48 <= room && quotable(src[ns:ns+16]) {
						t.Fatalf("%q into %d bytes: stopped at %d with room and a block it could quote", src, room, ns)
					}
				}
			}
		}
	}
}

// quotable reports whether quoteRun takes every byte of b.
func quotable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x80 {
			return false
		}
	}
	return true
}
