package tap

import (
	"context"
	"io"
	"os"
	"syscall"
	"testing"
)

func pipeCapacity(t *testing.T, f *os.File) int {
	t.Helper()
	n, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), fGetPipeSize, 0)
	if errno != 0 {
		t.Fatalf("F_GETPIPE_SZ: %v", errno)
	}
	return int(n)
}

// TestHostPipesAreGrownLikeTheServers: when the host's stdin and stdout
// are pipes, the tap asks for the same capacity as its pipes to the
// server, so a burst costs the host and the tap fewer wake-ups.
func TestHostPipesAreGrownLikeTheServers(t *testing.T) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	defer outR.Close()
	probe, probeW, _ := os.Pipe()
	growPipe(probe)
	want := pipeCapacity(t, probe)
	probe.Close()
	probeW.Close()
	if want != pipeSize {
		t.Skipf("this user may not have pipes of %d bytes (got %d)", pipeSize, want)
	}
	tp, err := New(Options{Argv: []string{"/bin/cat"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := tp.Run(context.Background(), inR, outW, io.Discard)
		done <- err
	}()
	if _, err := inW.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 3)
	if _, err := io.ReadFull(outR, buf); err != nil {
		t.Fatal(err)
	}
	if got := pipeCapacity(t, inW); got != pipeSize {
		t.Errorf("the host's stdin pipe holds %d bytes, want %d", got, pipeSize)
	}
	if got := pipeCapacity(t, outR); got != pipeSize {
		t.Errorf("the host's stdout pipe holds %d bytes, want %d", got, pipeSize)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A host pipe already larger than the size the tap asks for keeps its
// size (the tap's own size is the most an unprivileged user may ask, so
// the test asks for less).
func TestGrowPipeNeverShrinksAPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	growPipeTo(w, pipeSize)
	if got := pipeCapacity(t, w); got != pipeSize {
		t.Skipf("this user may not have pipes of %d bytes (got %d)", pipeSize, got)
	}
	growPipeTo(w, pipeSize/4)
	if got := pipeCapacity(t, w); got != pipeSize {
		t.Errorf("a pipe of %d bytes holds %d after asking for %d", pipeSize, got, pipeSize/4)
	}
}
