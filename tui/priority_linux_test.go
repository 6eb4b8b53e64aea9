package tui

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// idleThreads counts this process's threads that run only on idle CPU
// time (policy SCHED_IDLE) or at nice 19. The main thread is left out:
// when a goroutine locked to it ends, Go parks the thread for good rather
// than end it, and it runs nothing again.
func idleThreads(t *testing.T) int {
	t.Helper()
	stats, err := filepath.Glob("/proc/self/task/*/stat")
	main := fmt.Sprintf("/proc/self/task/%d/stat", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range stats {
		if p == main {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended
		}
		// The fields after the command (which may hold spaces) start
		// at field 3: nice is field 19, the policy field 41.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 38 && (f[16] == "19" || f[38] == "5") {
			n++
		}
	}
	return n
}

// A live view must never take CPU the tap needs: it indexes the tap's
// session file on threads that get only CPU time nothing else wants.
func TestLiveViewIndexesAtTheLowestCPUPriority(t *testing.T) {
	// Views other tests opened let go of their threads when closed.
	for deadline := time.Now().Add(10 * time.Second); idleThreads(t) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d threads of closed views still run at idle priority", idleThreads(t))
		}
	}
	info, host := startLiveTap(t)
	src, err := OpenLive(info, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	io.WriteString(host, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	deadline := time.Now().Add(10 * time.Second)
	for src.Index.Len() < 2 || idleThreads(t) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the view indexed %d records with %d threads at idle priority; want its reader and classifier there (its indexer too, unless on the main thread)", src.Index.Len(), idleThreads(t))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
