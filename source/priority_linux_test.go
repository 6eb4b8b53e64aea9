package source

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// backgroundThreads counts this process's threads at the live view's background
// priority (nice backgroundNice). The main thread is left out:
// when a goroutine locked to it ends, Go parks the thread for good rather
// than end it, and it runs nothing again.
func backgroundThreads(t *testing.T) int {
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
		// at field 3: nice is field 19.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 16 && f[16] == fmt.Sprint(backgroundNice) {
			n++
		}
	}
	return n
}

// A live view yields the CPU to the tap it shows: it indexes the tap's
// session file on threads of lower priority. (The test's tap runs in this
// process; the view is told otherwise.)
func TestLiveViewIndexesAtTheLowestCPUPriority(t *testing.T) {
	// Views other tests opened let go of their threads when closed.
	for deadline := time.Now().Add(10 * time.Second); backgroundThreads(t) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d threads of closed views still run at background priority", backgroundThreads(t))
		}
	}
	info, host := startLiveTap(t)
	info.PID = 1 // as if the tap ran in a process of its own
	src, err := OpenLive(info, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	io.WriteString(host, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	deadline := time.Now().Add(10 * time.Second)
	for src.Index.Len() < 2 || backgroundThreads(t) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the view indexed %d records with %d threads at background priority; want its reader and classifier there (its indexer too, unless on the main thread)", src.Index.Len(), backgroundThreads(t))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A tap in the view's own process (rpctap watch) would share the lowered
// threads' pauses: its view keeps its threads' priority.
func TestLiveViewOfATapInItsOwnProcessKeepsItsPriority(t *testing.T) {
	for deadline := time.Now().Add(10 * time.Second); backgroundThreads(t) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d threads of closed views still run at background priority", backgroundThreads(t))
		}
	}
	info, host := startLiveTap(t)
	src, err := OpenLive(info, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	io.WriteString(host, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	for deadline := time.Now().Add(10 * time.Second); src.Index.Len() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the view indexed %d records", src.Index.Len())
		}
	}
	if n := backgroundThreads(t); n > 0 {
		t.Errorf("%d threads run at background priority in the tap's own process", n)
	}
}
