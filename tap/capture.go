package tap

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// A captureSet holds the ids of injected requests whose answers must not
// reach the other side: the answer is recorded and given to whoever
// injected the request instead. An id stays in the set until its answer
// comes or the session ends, whether or not anyone still waits for the
// answer (an injector that gave up, or went away): the side that never
// sent the request never reads its answer, however late it comes. Unless
// that side sends a request with the same id itself (see release). It is
// safe for concurrent use: injectors add ids, the relay of the answering
// direction takes them, the other relay gives them back.
type captureSet struct {
	n   atomic.Int32 // ids waiting; the relay's fast path reads only this
	mu  sync.Mutex
	ids map[string]chan Captured
}

// Captured is the answer to an injected request, kept from the side that
// never sent the request.
type Captured struct {
	// Body is the answer's body; nil for one larger than a relay holds
	// (holdLimit), which only the session file keeps.
	Body []byte
	Size int64 // the body's length
	// At is when the tap read the answer's last byte, on the session's
	// monotonic clock (see InjectResult.Sent).
	At time.Duration
}

func newCaptureSet() *captureSet { return &captureSet{ids: map[string]chan Captured{}} }

func (c *captureSet) active() bool { return c.n.Load() > 0 }

// add registers an id (as classify.ID.Key) and returns the channel its
// answer's body will arrive on (buffered: no one need read it). At most
// maxKept ids wait at once: a peer that never answers does not grow the
// tap's memory past it.
func (c *captureSet) add(key string) (chan Captured, error) {
	if len(key) > maxCapturedID {
		return nil, fmt.Errorf("the request's id is %d bytes long; the tap keeps the answers of requests with ids of up to %d KiB (an answer too large to hold is told by its id as it passes): give it a shorter id, or send it with --forward, and its answer goes on to the other side", len(key)-1, maxCapturedID>>10)
	}
	ch := make(chan Captured, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, again := c.ids[key]; !again && len(c.ids) >= maxKept {
		return nil, fmt.Errorf("%d injected requests are waiting for their captured answers already; the tap keeps no more until some are answered (rpctap inject --forward, or ctrl+o in the composer, sends one whose answer goes on to the other side)", maxKept)
	}
	c.ids[key] = ch
	c.n.Store(int32(len(c.ids)))
	return ch, nil
}

// forget drops key from the ids; the caller holds mu.
func (c *captureSet) forget(key string) {
	delete(c.ids, key)
	c.n.Store(int32(len(c.ids)))
}

// drop forgets the id of a request that was never sent.
func (c *captureSet) drop(key string) {
	c.mu.Lock()
	c.forget(key)
	c.mu.Unlock()
}

// take reports whether body, read at at, is the answer to a captured
// request, and if so hands a copy of it over. A frame whose id no capture
// waits for costs only a look at that id (see waiting): the relay of the
// answering side calls take for each frame while any capture waits,
// which, captures lasting as long as they do, may be for the rest of the
// session.
func (c *captureSet) take(body []byte, at time.Duration) bool {
	key, ok := c.waiting(body)
	if !ok {
		return false
	}
	m := classify.Classify(body, classify.S2H, classify.JSONRPC)
	if m.Kind != classify.KindResponse || !m.HasID() || m.ID().Key() != key {
		return false
	}
	return c.hand(key, Captured{Body: append([]byte(nil), body...), Size: int64(len(body)), At: at})
}

// hand gives ans to the capture that waits for key, and reports whether
// one still did.
func (c *captureSet) hand(key string, ans Captured) bool {
	ch, ok := c.claim(key)
	if ok {
		ch <- ans
	}
	return ok
}

// release gives a capture back to the side whose relay reads body: when
// body is a request of that side's own, sent (toward dir's receiver) with
// the id an injected request waits for its answer by, that answer is the
// request's sender's now (its receiver answers the two alike), and goes
// on to it. Else a request the receiver never answers, with an id the
// user typed, would keep the sender's own answer from it for the rest
// of the session. Whoever waits for the injected request's answer is
// told, by its channel closing. release reports whether it gave one back.
func (c *captureSet) release(body []byte, dir classify.Direction) bool {
	key, ok := c.waiting(body)
	if !ok {
		return false
	}
	m := classify.Classify(body, dir, classify.JSONRPC)
	if m.Kind != classify.KindRequest || m.ID().Key() != key {
		return false
	}
	return c.giveBack(key)
}

// giveBack forgets the capture that waits for key, telling whoever waits
// for it, and reports whether one still did.
func (c *captureSet) giveBack(key string) bool {
	ch, ok := c.claim(key)
	if ok {
		close(ch)
	}
	return ok
}

// waiting reads body's id, without judging the rest of it, and reports
// whether a capture waits for that id, with its key.
func (c *captureSet) waiting(body []byte) (string, bool) {
	return c.waitingID(classify.Member(body, "id"))
}

// waitingID reports whether a capture waits for the id whose raw JSON is
// raw (nil: none), with its key.
func (c *captureSet) waitingID(raw []byte) (string, bool) {
	if raw == nil {
		return "", false
	}
	var buf [64]byte
	key := classify.RawID(raw).AppendKey(buf[:0])
	c.mu.Lock()
	_, ok := c.ids[string(key)]
	c.mu.Unlock()
	if !ok {
		return "", false
	}
	return string(key), true
}

// maxCapturedID bounds the key of a captured request's id: the answer's
// id, however it is escaped, is then within what a relay reads of the id
// of a frame too large to hold (at most six bytes for each of the key's,
// and the quotes).
const maxCapturedID = (classify.MaxScannedID - 2) / 6

// claim forgets key and returns the channel its answer was to go on,
// if a capture still waits for it.
func (c *captureSet) claim(key string) (chan Captured, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := c.ids[key]
	if ok {
		c.forget(key)
	}
	return ch, ok
}
