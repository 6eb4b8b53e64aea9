package tap

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"strings"
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
	// before (each goroutine gets a thread, locks it and returns, and Go
	// ends the thread).
	var tids []int
	var mu sync.Mutex
	for range 20 {
		var wg sync.WaitGroup
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread()
				mu.Lock()
				tids = append(tids, syscall.Gettid())
				mu.Unlock()
				time.Sleep(time.Millisecond)
			}()
		}
		wg.Wait()
	}
	// Once a thread is gone from /proc, the kernel has sent the signal
	// its end sends its children, if any: the server is then dying
	// (SIGKILL pending), dead or alive for good.
	for _, tid := range tids {
		if tid == os.Getpid() {
			continue // the main thread: Go never ends it, it parks it for good
		}
		for deadline := time.Now().Add(generous); ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); errors.Is(err, fs.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("thread %d has not ended within %v of its goroutine", tid, generous)
			}
		}
	}
	if err := living(pid); err != nil {
		t.Fatalf("the server is %v after threads of the tap's process ended", err)
	}
	syscall.Kill(-pid, syscall.SIGTERM)
}

// living says, from /proc, why the process pid is not alive (gone, a
// zombie, or killed: SIGKILL pending), or nil when it is.
func living(pid int) error {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return fmt.Errorf("gone (%v)", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		name, v, _ := strings.Cut(l, ":")
		v = strings.TrimSpace(v)
		switch name {
		case "State":
			if strings.HasPrefix(v, "Z") || strings.HasPrefix(v, "X") {
				return fmt.Errorf("dead (state %s)", v)
			}
		case "SigPnd", "ShdPnd":
			if mask, err := strconv.ParseUint(v, 16, 64); err == nil && mask&(1<<(syscall.SIGKILL-1)) != 0 {
				return errors.New("killed (SIGKILL pending)")
			}
		}
	}
	return nil
}
