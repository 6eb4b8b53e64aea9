package source

import (
	"context"
	"time"
)

// A view of a live tap indexes the session file as the tap writes it. On
// a small machine a tap running flat out needs every core, and CPU the
// view takes then is taken from the tap: a lower priority does not stop
// that (the view's threads run whenever a core is free for a moment, and
// the tap's threads then wait for it). The tap knows when it is short:
// its traffic waits for its recorder, and it says so to the views that
// follow it. While it says so, the view reads no more of the file and
// falls behind, to catch up when the burst is over; it never waits long at
// a time, so that it still moves on beside a tap that stays short.

// Pacing's timing: how long the view waits before it asks again, and how
// long it waits at most before it reads one more batch (about a MiB)
// anyway.
const (
	paceWait    = 10 * time.Millisecond
	paceMaxWait = 500 * time.Millisecond
)

// pacer holds back a view's indexing while busy says the tap is short of
// CPU; after is the clock it waits on (time.After).
func pacer(busy func() bool, after func(time.Duration) <-chan time.Time) func(ctx context.Context) {
	return func(ctx context.Context) {
		for waited := time.Duration(0); waited < paceMaxWait && busy(); waited += paceWait {
			select {
			case <-ctx.Done():
				return
			case <-after(paceWait):
			}
		}
	}
}
