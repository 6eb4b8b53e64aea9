package tap

import (
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// The kernel kills the server when the tap dies (dieWithTap), and when
// the thread that started the server ends: threads of the tap's process
// that end while the server runs (a goroutine that locked its thread
// and returned, as a view's indexing in the same process does) leave the
// server running.
func TestThreadsThatEndLeaveTheServerRunning(t *testing.T) {
	s := startSession(t, Options{Argv: []string{"sleep", "1000"}, NoRedact: true})
	var pid int
	for deadline := time.Now().Add(generous); pid == 0; time.Sleep(time.Millisecond) {
		s.tap.mu.Lock()
		if s.tap.relays[classify.H2S] != nil && s.tap.cmd != nil {
			pid = s.tap.cmd.Process.Pid
		}
		s.tap.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("the server did not start")
		}
	}
	// Many threads end, among them, by and by, the ones the runtime had
	// before (each goroutine gets a thread, locks it and returns).
	for range 20 {
		var wg sync.WaitGroup
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				time.Sleep(time.Millisecond)
			}()
		}
		wg.Wait()
	}
	time.Sleep(50 * time.Millisecond)
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the server is gone (%v) after threads of the tap's process ended", err)
	}
	syscall.Kill(-pid, syscall.SIGTERM)
}
