package tui

import (
	"context"
	"testing"
	"time"
)

// A patient observer (tail) holds back while the tap is busy for far
// longer than a view's paceMaxWait at a time, up to patientWait; beside a
// tap that is not busy it goes on at once, and once the tap is no longer
// busy it goes on within a look or two; not patient, it is the view's
// pacer.
func TestAPatientObserverWaitsWhileTheTapIsBusy(t *testing.T) {
	took := func(ctx context.Context, busy func() bool, patient bool) time.Duration {
		start := time.Now()
		done := make(chan struct{})
		go func() {
			patientPacer(busy, func() bool { return patient })(ctx)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(patientWait + 5*time.Second):
		}
		return time.Since(start)
	}
	ctx := context.Background()
	always := func() bool { return true }
	if d := took(ctx, func() bool { return false }, true); d > 50*time.Millisecond {
		t.Errorf("beside an idle tap a patient observer was held %v", d)
	}
	if d := took(ctx, always, false); d < paceMaxWait || d > paceMaxWait+time.Second {
		t.Errorf("not patient, beside a busy tap it was held %v, want about %v", d, paceMaxWait)
	}
	busyUntil := time.Now().Add(3 * paceMaxWait)
	if d := took(ctx, func() bool { return time.Now().Before(busyUntil) }, true); d < 3*paceMaxWait || d > 3*paceMaxWait+3*patientStep {
		t.Errorf("beside a tap busy for %v a patient observer was held %v", 3*paceMaxWait, d)
	}
	ctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(30*time.Millisecond, cancel)
	if d := took(ctx, always, true); d > patientStep*2 {
		t.Errorf("a patient observer closed while it waited was held %v more", d)
	}
}
