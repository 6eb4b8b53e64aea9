package sessions

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/rpctap/rpctap/internal/memguard"
)

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
