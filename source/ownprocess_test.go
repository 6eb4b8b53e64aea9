package source

import (
	"io"
	"testing"
	"time"
)

// A view of a tap in its own process (rpctap watch, demo) does not wait
// while the tap says it is busy: the tap measures the CPU of its whole
// process, the view's own indexing and drawing in it, so the view would
// hold itself back. A view of a tap in another process waits.
func TestALiveViewOfATapInItsOwnProcessDoesNotWaitOnItsBusyMeter(t *testing.T) {
	info, host := startLiveTap(t)
	own, err := OpenLive(info, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(own.Close)
	info.PID = 1 // as if the tap ran in a process of its own
	other, err := OpenLive(info, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	io.WriteString(host, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	for deadline := time.Now().Add(10 * time.Second); own.Index.Len() < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the view indexed %d records", own.Index.Len())
		}
	}
	if own.pace != nil {
		t.Error("the view of a tap in its own process waits while the tap says it is busy")
	}
	if other.pace == nil {
		t.Error("the view of a tap in another process does not wait while the tap says it is busy")
	}
}
