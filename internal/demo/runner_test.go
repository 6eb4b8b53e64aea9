package demo

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"
)

// A runner whose pace never comes plays its first step at once, then
// only what the keys ask: step runs the next, replay the last again, and
// a paused scenario stays paused after a step.
func TestRunnerStepsReplaysAndPausesOnKeys(t *testing.T) {
	r, _ := io.Pipe()
	h := NewHost(r, io.Discard, false)
	var mu sync.Mutex
	var ran []string
	ranCh := make(chan struct{}, 10)
	step := func(name string) Step {
		return Step{Name: name, Caption: "caption of " + name, run: func(context.Context, *Host) {
			mu.Lock()
			ran = append(ran, name)
			mu.Unlock()
			ranCh <- struct{}{}
		}}
	}
	run := NewRunner([]Step{step("one"), step("two"), step("three")}, h)
	run.Pace = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run.Run(ctx) }()
	waitRan := func(want int) {
		t.Helper()
		for {
			mu.Lock()
			n := len(ran)
			mu.Unlock()
			if n >= want {
				return
			}
			select {
			case <-ranCh:
			case <-time.After(10 * time.Second):
				t.Fatalf("only %v ran; want %d steps", ran, want)
			}
		}
	}
	waitRan(1)
	run.Step()
	waitRan(2)
	run.Replay()
	waitRan(3)
	run.TogglePause()
	run.Step()
	waitRan(4)
	if err := <-done; err != nil {
		t.Fatalf("the scenario ended with %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"one", "two", "two", "three"}; len(ran) != len(want) || ran[0] != want[0] || ran[1] != want[1] || ran[2] != want[2] || ran[3] != want[3] {
		t.Errorf("steps ran %v; want %v", ran, want)
	}
	var last State
	for {
		select {
		case last = <-run.States():
			continue
		default:
		}
		break
	}
	if !last.Done || !last.Paused || last.Step != 3 || last.Caption != "caption of three" {
		t.Errorf("the last state is %+v; want done, paused, at step 3 with its caption", last)
	}
}

// A paused scenario does not move on by itself, however fast its pace.
func TestRunnerHoldsWhilePaused(t *testing.T) {
	r, _ := io.Pipe()
	h := NewHost(r, io.Discard, false)
	ran := make(chan string, 10)
	var run *Runner
	mk := func(name string) Step {
		return Step{Name: name, run: func(context.Context, *Host) {
			if name == "one" {
				run.TogglePause() // the key comes while the first step runs
			}
			ran <- name
		}}
	}
	run = NewRunner([]Step{mk("one"), mk("two")}, h)
	run.Pace = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go run.Run(ctx)
	<-ran // the first step runs at once
	select {
	case name := <-ran:
		t.Fatalf("step %s ran while the scenario was paused", name)
	case <-time.After(300 * time.Millisecond):
	}
	run.TogglePause()
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the scenario did not go on once resumed")
	}
}
