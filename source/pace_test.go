package source

import (
	"context"
	"testing"
	"time"
)

// looks is a clock for a pacer: it counts the waits the pacer asks for,
// by length, and lets each end at once, so a test counts the pacer's
// looks at the tap and never waits for them.
type looks map[time.Duration]int

func (l looks) after(d time.Duration) <-chan time.Time {
	l[d]++
	c := make(chan time.Time, 1)
	c <- time.Time{}
	return c
}

// busyFor says the tap is busy for its first n looks.
func busyFor(n int) func() bool {
	return func() bool {
		n--
		return n >= 0
	}
}

// closedWhileWaiting is a clock whose first wait never ends on its own:
// the observer is closed (cancel) while it waits.
func closedWhileWaiting(cancel context.CancelFunc, l looks) func(time.Duration) <-chan time.Time {
	return func(d time.Duration) <-chan time.Time {
		l[d]++
		cancel()
		return nil
	}
}

// A view's indexing goes on at once beside a tap that is not busy, waits
// a look at a time while it is, never waits more than paceMaxWait at a
// time, and goes on once the view is closed.
func TestPacerHoldsIndexingBackOnlyWhileTheTapIsBusy(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		busy  func() bool
		looks int
	}{
		{"beside an idle tap", busyFor(0), 0},
		{"beside a tap busy for two looks", busyFor(2), 2},
		{"beside a tap busy throughout", busyFor(1 << 30), int(paceMaxWait / paceWait)},
	} {
		l := looks{}
		pacer(c.busy, l.after)(ctx)
		if l[paceWait] != c.looks || len(l) > 1 {
			t.Errorf("%s the pacer waited %v, want %d waits of %v", c.name, l, c.looks, paceWait)
		}
	}
	l := looks{}
	ctx, cancel := context.WithCancel(ctx)
	pacer(busyFor(1<<30), closedWhileWaiting(cancel, l))(ctx)
	if l[paceWait] != 1 {
		t.Errorf("a view closed while its pacer waited looked %d times, want 1", l[paceWait])
	}
}
