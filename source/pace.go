package source

import (
	"context"
	"io"
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

// Yield is for an observer that works through the source's records as
// they come (rpctap tail does): while the live tap it follows says it is
// short of CPU, it waits, as the view's indexing does (see pacer), never
// long at a time; otherwise it returns at once.
func (s *Source) Yield(ctx context.Context) {
	if s.pace != nil {
		s.pace(ctx)
	}
}

// Background puts the calling goroutine on a thread of its own at the
// view's lower CPU priority, when the source follows a session that is
// still being written by a tap in another process: an observer's work
// then yields to the tap's. The thread ends with the goroutine.
func (s *Source) Background() {
	if s.lower != nil {
		s.lower()
	}
}

// patientWait is how long a patient observer (see Patient) waits at most
// at a time while the tap says it is busy, where a view waits
// paceMaxWait; it looks again every patientStep, not every paceWait: on
// a small machine each look wakes the observer's threads, twenty
// observers' a thousand times a second.
const (
	patientWait = 5 * time.Second
	patientStep = 100 * time.Millisecond
)

// patientPacer is pacer, or while patient says so, one that holds the
// caller back for up to patientWait while busy says the tap is; after is
// the clock both wait on (time.After).
func patientPacer(busy, patient func() bool, after func(time.Duration) <-chan time.Time) func(ctx context.Context) {
	pace := pacer(busy, after)
	return func(ctx context.Context) {
		if !patient() {
			pace(ctx)
			return
		}
		for waited := time.Duration(0); waited < patientWait && busy(); waited += patientStep {
			select {
			case <-ctx.Done():
				return
			case <-after(patientStep):
			}
		}
	}
}

// Patient has the source, when it follows a live tap, hold back for up
// to patientWait at a time while the tap says it is busy, not only the
// view's paceMaxWait: for an observer no one watches record by record
// (rpctap tail), whose every batch of records, indexed and printed, takes
// CPU from the tap on a small machine. It catches up once the tap is no
// longer busy.
func (s *Source) Patient() { s.patient.Store(true) }

// BackgroundProcess is Background for a process that does nothing but
// observe the source (rpctap tail): every thread of the process goes to
// the view's lower CPU priority, its garbage collection and its reading
// of the tap's notes too, so that all its work yields to the tap's.
func (s *Source) BackgroundProcess() {
	if s.lowerAll != nil {
		s.lowerAll()
	}
}

// patientReader reads a live tap's session file for a patient source
// (see Patient): before each read it waits while the tap says it is busy
// (pace). Pacing between batches alone would let such an observer read a
// whole batch (a MiB) each time the tap's traffic starts, twenty
// observers at once, when the tap needs the CPU most. A view that is not
// patient reads as the follower lets it.
type patientReader struct {
	followed
	ctx     context.Context
	patient func() bool
	pace    func(context.Context) // nil: never waits
}

// followed is what the index reads a live tap's file through: a
// tap.Follower.
type followed interface {
	io.Reader
	OnWait(func())
}

func (r *patientReader) Read(p []byte) (int, error) {
	if r.pace != nil && r.patient() {
		r.pace(r.ctx)
	}
	return r.followed.Read(p)
}
