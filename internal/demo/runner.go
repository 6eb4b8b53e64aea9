package demo

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// State is where a running scenario is, for the view.
type State struct {
	Step, Steps int    // the step shown (1-based; 0 before the first)
	Name        string // its name
	Caption     string // what it does and what the specs require
	Outcome     string // what came back, once it ran
	Paused      bool
	Done        bool
}

// A Runner plays a scenario's steps on a host, one every Pace, and takes
// the view's keys: pause, step, replay.
type Runner struct {
	Steps []Step
	Host  *Host
	// Pace is the time between two steps at speed 1.
	Pace time.Duration

	ctl    chan control
	states chan State
	state  State
}

type control int

const (
	ctlToggle control = iota
	ctlStep
	ctlReplay
)

// NewRunner makes a runner of steps on h.
func NewRunner(steps []Step, h *Host) *Runner {
	return &Runner{Steps: steps, Host: h, Pace: 2 * time.Second, ctl: make(chan control, 8), states: make(chan State, 1),
		state: State{Steps: len(steps)}}
}

// States delivers the runner's state each time it changes (the latest
// only, when the reader is slow).
func (r *Runner) States() <-chan State { return r.states }

// TogglePause pauses the scenario, or resumes it.
func (r *Runner) TogglePause() { r.send(ctlToggle) }

// Step runs the next step now; a paused scenario stays paused.
func (r *Runner) Step() { r.send(ctlStep) }

// Replay runs the step just shown again.
func (r *Runner) Replay() { r.send(ctlReplay) }

func (r *Runner) send(c control) {
	select {
	case r.ctl <- c:
	default: // keys faster than steps: the extra ones are dropped
	}
}

func (r *Runner) publish() {
	select {
	case <-r.states:
	default:
	}
	r.states <- r.state
}

// Run plays the scenario until its last step has run or ctx ends; each
// step's caption is noted in the session as it starts.
func (r *Runner) Run(ctx context.Context) error {
	r.publish()
	next := 0
	for next < len(r.Steps) {
		i, ok := r.wait(ctx, next)
		if !ok {
			return ctx.Err()
		}
		r.run(ctx, i)
		next = i + 1
	}
	r.state.Done = true
	r.publish()
	return nil
}

// wait returns the step to run next: next after the pace, at once on a
// step key, the last one again on replay; it holds while paused.
func (r *Runner) wait(ctx context.Context, next int) (int, bool) {
	delay := time.Duration(float64(r.Pace) / r.Host.Speed)
	if next == 0 {
		delay = 0
	}
	var pace <-chan time.Time // nil while paused: it never fires
	for {
		if pace == nil && !r.state.Paused {
			pace = time.After(delay)
		}
		select {
		case <-ctx.Done():
			return 0, false
		case <-pace:
			return next, true
		case c := <-r.ctl:
			switch c {
			case ctlToggle:
				r.state.Paused = !r.state.Paused
				pace = nil
				r.publish()
			case ctlStep:
				return next, true
			case ctlReplay:
				if next > 0 {
					return next - 1, true
				}
			}
		}
	}
}

// run plays step i.
func (r *Runner) run(ctx context.Context, i int) {
	s := r.Steps[i]
	r.state.Step, r.state.Name, r.state.Caption, r.state.Outcome = i+1, s.Name, s.Caption, "running…"
	r.publish()
	r.Host.takeGot()
	r.Host.Note(s.Name + ": " + s.Caption)
	s.run(ctx, r.Host)
	r.state.Outcome = outcome(r.Host.takeGot())
	r.Host.Note(s.Name + ": " + r.state.Outcome)
	r.publish()
}

// outcome says what came from the server during a step.
func outcome(got []string) string {
	if len(got) == 0 {
		return "Nothing came back."
	}
	const most = 4
	more := ""
	if len(got) > most {
		more = " and " + strconv.Itoa(len(got)-most) + " more"
		got = got[:most]
	}
	text := "Came back: " + strings.Join(got, "; ") + more
	if !strings.HasSuffix(text, "…") {
		text += "."
	}
	return text
}
