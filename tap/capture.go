package tap

import (
	"sync"
	"sync/atomic"

	"github.com/rpctap/rpctap/classify"
)

// A captureSet holds the ids of injected requests whose answers must not
// reach the other side: the answer is recorded and given to whoever
// injected the request instead. It is safe for concurrent use: injectors
// add ids, the relay of the answering direction takes them.
type captureSet struct {
	n   atomic.Int32 // ids waiting; the relay's fast path reads only this
	mu  sync.Mutex
	ids map[string]chan []byte
}

func newCaptureSet() *captureSet { return &captureSet{ids: map[string]chan []byte{}} }

func (c *captureSet) active() bool { return c.n.Load() > 0 }

// add registers an id (as classify.ID.Key) and returns the channel its
// answer's body will arrive on.
func (c *captureSet) add(key string) chan []byte {
	ch := make(chan []byte, 1)
	c.mu.Lock()
	c.ids[key] = ch
	c.n.Store(int32(len(c.ids)))
	c.mu.Unlock()
	return ch
}

// drop forgets an id whose answer is no longer wanted.
func (c *captureSet) drop(key string) {
	c.mu.Lock()
	delete(c.ids, key)
	c.n.Store(int32(len(c.ids)))
	c.mu.Unlock()
}

// take reports whether body is the answer to a captured request, and if so
// hands a copy of it over.
func (c *captureSet) take(body []byte) bool {
	m := classify.Classify(body, classify.S2H, classify.JSONRPC)
	if m.Kind != classify.KindResponse || !m.HasID() {
		return false
	}
	key := m.ID().Key()
	c.mu.Lock()
	ch, ok := c.ids[key]
	if ok {
		delete(c.ids, key)
		c.n.Store(int32(len(c.ids)))
	}
	c.mu.Unlock()
	if ok {
		ch <- append([]byte(nil), body...)
	}
	return ok
}
