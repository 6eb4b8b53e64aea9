package source

import (
	"context"
	"testing"
)

// A patient observer (tail) holds back while the tap is busy for far
// longer than a view's paceMaxWait at a time, up to patientWait, looking
// every patientStep; beside a tap that is not busy it goes on at once,
// and once the tap is no longer busy it goes on at the next look; not
// patient, it is the view's pacer.
func TestAPatientObserverWaitsWhileTheTapIsBusy(t *testing.T) {
	ctx := context.Background()
	always := 1 << 30
	for _, c := range []struct {
		name    string
		busy    int // looks for which the tap is busy
		patient bool
		want    looks
	}{
		{"beside an idle tap a patient observer", 0, true, looks{}},
		{"beside a busy tap an observer that is not patient", always, false, looks{paceWait: int(paceMaxWait / paceWait)}},
		{"beside a busy tap a patient observer", always, true, looks{patientStep: int(patientWait / patientStep)}},
		{"beside a tap busy for three looks a patient observer", 3, true, looks{patientStep: 3}},
	} {
		l := looks{}
		patientPacer(busyFor(c.busy), func() bool { return c.patient }, l.after)(ctx)
		if len(l) != len(c.want) || l[patientStep] != c.want[patientStep] || l[paceWait] != c.want[paceWait] {
			t.Errorf("%s waited %v, want %v", c.name, l, c.want)
		}
	}
	l := looks{}
	ctx, cancel := context.WithCancel(ctx)
	patientPacer(busyFor(always), func() bool { return true }, closedWhileWaiting(cancel, l))(ctx)
	if l[patientStep] != 1 || len(l) != 1 {
		t.Errorf("a patient observer closed while it waited waited %v, want one wait of %v", l, patientStep)
	}
}

// readsOf is a followed file whose every read gives one byte, counting
// the reads.
type readsOf struct{ reads *int }

func (r readsOf) Read(p []byte) (int, error) { *r.reads++; p[0] = 'x'; return 1, nil }
func (readsOf) OnWait(func())                {}

// A patient observer asks its pacer before every read of the tap's file,
// not only between batches of records: it reads nothing while the tap is
// busy. An observer that is not patient reads as the follower lets it.
func TestAPatientObserverIsPacedBeforeEachRead(t *testing.T) {
	for _, patient := range []bool{true, false} {
		reads, paced := 0, 0
		r := &patientReader{followed: readsOf{&reads}, ctx: context.Background(),
			patient: func() bool { return patient },
			pace: func(context.Context) {
				if paced != reads {
					t.Fatalf("paced after %d of the reads, want before each", reads)
				}
				paced++
			}}
		buf := make([]byte, 8)
		for range 3 {
			r.Read(buf)
		}
		want := 0
		if patient {
			want = 3
		}
		if paced != want {
			t.Errorf("patient %v: paced %d times for 3 reads, want %d", patient, paced, want)
		}
	}
}
