package sessions

// chunkShift sizes the chunks entries and findings are kept in: they never
// move once written, and growing costs no copy.
const chunkShift = 12

type chunks[T any] struct {
	c []*[1 << chunkShift]T
	n int
}

// push appends v and returns its position.
func (c *chunks[T]) push(v T) int {
	if c.n>>chunkShift == len(c.c) {
		c.c = append(c.c, new([1 << chunkShift]T))
	}
	c.c[c.n>>chunkShift][c.n&(1<<chunkShift-1)] = v
	c.n++
	return c.n - 1
}

func (c *chunks[T]) at(i int) *T { return &c.c[i>>chunkShift][i&(1<<chunkShift-1)] }

// An arena keeps ids' bytes in chunks that never move. An idRef names
// bytes in it: 0 for none, else chunk+1 in the high 32 bits, offset and
// length below; length 0 means the whole chunk (an id too long to share
// one).
type arena struct{ chunks [][]byte }

type idRef uint64

const (
	arenaChunk = 64 << 10
	arenaAlone = 4 << 10 // ids this long or longer get a chunk of their own
)

func (a *arena) add(b []byte) idRef {
	if len(b) == 0 {
		return 0
	}
	if len(b) >= arenaAlone {
		// Full to its capacity, so no other id is ever added to it.
		c := make([]byte, len(b))
		copy(c, b)
		a.chunks = append(a.chunks, c)
		return idRef(len(a.chunks)) << 32
	}
	k := len(a.chunks) - 1
	if k < 0 || len(a.chunks[k])+len(b) > cap(a.chunks[k]) {
		a.chunks = append(a.chunks, make([]byte, 0, arenaChunk))
		k++
	}
	off := len(a.chunks[k])
	a.chunks[k] = append(a.chunks[k], b...)
	return idRef(k+1)<<32 | idRef(off)<<16 | idRef(len(b))
}

func (a *arena) bytes(r idRef) []byte {
	if r == 0 {
		return nil
	}
	c := a.chunks[r>>32-1]
	n := int(r & 0xffff)
	if n == 0 {
		return c
	}
	off := int(r >> 16 & 0xffff)
	return c[off : off+n]
}
