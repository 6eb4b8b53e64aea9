package tui

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// paceTook runs a pacer once and says how long it held the caller, giving
// up after 5 s (a pacer that never lets go).
func paceTook(ctx context.Context, busy func() bool) time.Duration {
	start := time.Now()
	done := make(chan struct{})
	go func() {
		pacer(busy)(ctx)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	return time.Since(start)
}

// A view's indexing goes on at once beside a tap that is not busy, waits
// while it is, and never waits more than paceMaxWait at a time (nor once
// the view is closed).
func TestPacerHoldsIndexingBackOnlyWhileTheTapIsBusy(t *testing.T) {
	ctx := context.Background()
	if d := paceTook(ctx, func() bool { return false }); d > 50*time.Millisecond {
		t.Errorf("beside an idle tap the pacer held indexing for %v", d)
	}
	if d := paceTook(ctx, func() bool { return true }); d < paceMaxWait || d > paceMaxWait+time.Second {
		t.Errorf("beside a tap busy throughout the pacer held indexing for %v, want about %v", d, paceMaxWait)
	}
	var calls atomic.Int32
	busyTwice := func() bool { return calls.Add(1) <= 2 }
	if d := paceTook(ctx, busyTwice); d < 2*paceWait || d > paceMaxWait {
		t.Errorf("beside a tap busy for two looks the pacer held indexing for %v, want about %v", d, 2*paceWait)
	}
	ctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(30*time.Millisecond, cancel)
	if d := paceTook(ctx, func() bool { return true }); d > paceMaxWait/2 {
		t.Errorf("a view closed while its pacer waited was held %v more", d)
	}
}
