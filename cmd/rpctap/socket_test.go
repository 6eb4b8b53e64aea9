package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/filter"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/source"
)

// startListening starts `rpctap run --name NAME --record FILE -- cat`
// listening on its socket, and waits until the socket is there.
func startListening(t *testing.T) (r *tapRun, name, socket string) {
	t.Helper()
	dir := t.TempDir()
	name = "sock-" + filepath.Base(dir)
	path := filepath.Join(dir, "session.jsonl")
	r, socket = startCat(t, dir, "--name", name, "--record", path)
	r.path = path
	return r, name, socket
}

// startCat starts `rpctap run ARGS -- cat` with its state in dir,
// listening on its socket, and waits until the socket is there.
func startCat(t *testing.T, dir string, args ...string) (r *tapRun, socket string) {
	t.Helper()
	r = &tapRun{stderr: new(bytes.Buffer)}
	r.cmd = exec.Command(rpctapBinary(t), append(append([]string{"run"}, args...), "--", "cat")...)
	r.cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+dir)
	r.cmd.Stderr = &lockedBuffer{b: r.stderr}
	var err error
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.stdout = bufio.NewReaderSize(out, 1<<20)
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		r.cmd.Wait()
	})
	live, err := sessions.LiveDir()
	if err != nil {
		t.Fatal(err)
	}
	socket = filepath.Join(live, strconv.Itoa(r.cmd.Process.Pid)+".sock")
	waitFile(t, socket, 10*time.Second)
	return r, socket
}

func waitFile(t *testing.T, path string, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %v", path, d)
		}
	}
}

// lockedBuffer lets a test read the tap's stderr while the tap writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// echo sends a frame through the tap (cat sends it back) and checks that
// it comes back.
func (r *tapRun) echo(t *testing.T, frame string) {
	t.Helper()
	if _, err := fmt.Fprintln(r.stdin, frame); err != nil {
		t.Fatal(err)
	}
	if got := r.line(t, 10*time.Second); got != frame+"\n" {
		t.Fatalf("the host got %.100q, want %.100q", got, frame)
	}
}

// A socket client that sends a line with no end (1 GB of it) is answered
// with an error and cut off at the request bound; the tap's memory stays
// small and traffic flows before, during and after. A malformed request
// gets an error and a closed connection too.
func TestSocketClientSendingALineWithNoEndLeavesTheTapsMemoryBounded(t *testing.T) {
	r, _, socket := startListening(t)
	r.echo(t, `{"jsonrpc":"2.0","id":1,"method":"before"}`)
	c, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sent := make(chan int64, 1)
	go func() {
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		var n int64
		for n < 1<<30 {
			m, err := c.Write(chunk)
			n += int64(m)
			if err != nil {
				break
			}
		}
		sent <- n
	}()
	r.echo(t, `{"jsonrpc":"2.0","id":2,"method":"during"}`)
	var n int64
	select {
	case n = <-sent:
	case <-time.After(60 * time.Second):
		t.Fatal("the tap was still taking the endless line after 60 s")
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	rep, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.Contains(rep, `"ok":false`) || !strings.Contains(rep, "longer than 64 KiB") {
		t.Errorf("the tap answered the endless line with %q (after %d bytes sent)", rep, n)
	}
	r.echo(t, `{"jsonrpc":"2.0","id":3,"method":"after"}`)
	if hwm := vmHWM(t, r.cmd.Process.Pid); hwm > 100<<20 {
		t.Errorf("the tap's peak RSS is %d MiB after a client sent %d MiB with no newline, want at most 100 MiB", hwm>>20, n>>20)
	}

	for _, req := range []string{"not json\n", `{"op":"inject","dir":"h2s","size":1000000000}` + "\n"} {
		c, err := net.Dial("unix", socket)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte(req))
		br := bufio.NewReader(c)
		rep, _ := br.ReadString('\n')
		if !strings.Contains(rep, `"ok":false`) {
			t.Errorf("the tap answered %q with %q, want an error", req, rep)
		}
		if rest, err := br.ReadString('\n'); err == nil {
			t.Errorf("after refusing %q the tap sent %q and kept the connection open", req, rest)
		}
		c.Close()
	}
	r.echo(t, `{"jsonrpc":"2.0","id":4,"method":"last"}`)
}

// With --file, inject takes a frame too large for the command line (20 MB),
// from a file or from stdin, and it arrives whole.
func TestInjectFileSendsATwentyMegabyteFrameWhole(t *testing.T) {
	r, name, _ := startListening(t)
	r.echo(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	frame := `{"jsonrpc":"2.0","method":"notifications/big","params":{"text":"` + strings.Repeat("x", 20<<20) + `"}}`
	path := filepath.Join(t.TempDir(), "frame.json")
	if err := os.WriteFile(path, []byte(frame+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"file", "stdin"} {
		cmd := exec.Command(rpctapBinary(t), "inject", "--tap", name, "--file", path)
		if how == "stdin" {
			cmd = exec.Command(rpctapBinary(t), "inject", "--tap", name, "--file", "-")
			cmd.Stdin = strings.NewReader(frame)
		}
		got := make(chan string, 1)
		go func() { got <- r.line(t, 60*time.Second) }() // cat sends it back
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("inject --file (%s): %v\n%s", how, err, out)
		}
		if got := <-got; got != frame+"\n" {
			t.Fatalf("the server got %d bytes from inject --file (%s), want the %d-byte frame", len(got), how, len(frame)+1)
		}
	}
}

// A tap whose socket file is deleted says so on its stderr and listens
// there again, so that views find it.
func TestTapWhoseSocketIsDeletedSaysSoAndListensAgain(t *testing.T) {
	r, name, socket := startListening(t)
	if err := os.Remove(socket); err != nil {
		t.Fatal(err)
	}
	waitFile(t, socket, 10*time.Second)
	stderr := r.cmd.Stderr.(*lockedBuffer)
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(stderr.String(), "was deleted"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the tap said nothing about its deleted socket: %q", stderr.String())
		}
	}
	if lines := rpctapLines(stderr.String()); len(lines) != 1 || !strings.Contains(lines[0], socket) {
		t.Errorf("the tap said %q, want one line naming %s", lines, socket)
	}
	out, err := exec.Command(rpctapBinary(t), "ls", "--json").Output()
	if err != nil || framesOf(out, name) < 0 {
		t.Fatalf("rpctap ls does not list the tap after its socket was made again: %v\n%s", err, out)
	}
	r.echo(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
}

// Twenty tails attached to one tap each print every frame.
func TestTwentyTailsEachGetEveryFrame(t *testing.T) {
	r, name, _ := startListening(t)
	const tails, frames = 20, 2000
	outs := make([]*lockedBuffer, tails)
	cmds := make([]*exec.Cmd, tails)
	for i := range cmds {
		outs[i] = &lockedBuffer{b: new(bytes.Buffer)}
		cmds[i] = exec.Command(rpctapBinary(t), "tail", name)
		cmds[i].Stdout = outs[i]
		cmds[i].Stderr = outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
		defer cmds[i].Process.Kill()
	}
	lines := func(i int) int { return strings.Count(outs[i].String(), "\n") }
	// The session stays open until every tail has attached and printed
	// the first frame, both ways.
	r.echo(t, `{"jsonrpc":"2.0","id":"first","method":"ping"}`)
	for i := range outs {
		for deadline := time.Now().Add(30 * time.Second); lines(i) < 2; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("tail %d printed %q in 30 s", i, outs[i])
			}
		}
	}
	var all bytes.Buffer
	for i := range frames/2 - 1 {
		fmt.Fprintf(&all, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"n":%d}}`+"\n", i, i)
	}
	go func() {
		r.stdin.Write(all.Bytes())
		r.stdin.Close()
	}()
	if code := r.wait(t, 60*time.Second); code != 0 {
		t.Fatalf("the tap exited %d: %s", code, r.stderr)
	}
	for i, c := range cmds {
		done := make(chan error, 1)
		go func() { done <- c.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("tail %d: %v\n%s", i, err, outs[i])
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("tail %d did not end within 60 s of the session's end", i)
		}
		// Each frame crosses twice: to cat and back.
		if n := lines(i); n != frames {
			t.Errorf("tail %d printed %d lines, want %d", i, n, frames)
		}
	}
}

// Like every observer, tail yields: it asks its source to yield before it
// works through each batch of records, and prints nothing while the source
// holds it back.
func TestTailYieldsBeforeEachBatchOfRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	var b bytes.Buffer
	w, err := sessions.NewWriter(&b, sessions.Header{ID: "x", Started: time.Now(), Framing: "ndjson"})
	if err != nil {
		t.Fatal(err)
	}
	const frames = 3*tailBatch + 10
	for i := range frames {
		w.WriteFrame(sessions.FrameRecord{T: int64(i), Dir: classify.H2S, Frame: []byte(`{"jsonrpc":"2.0","method":"n"}`)})
	}
	w.WriteEvent(sessions.EventRecord{T: frames, Kind: sessions.EventExit})
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := source.OpenFile(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	for deadline := time.Now().Add(10 * time.Second); !src.Ended(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the session file was not indexed within 10 s")
		}
	}
	gate := make(chan struct{})
	asked := make(chan int, 10)
	var out lockedBuffer
	out.b = new(bytes.Buffer)
	yield := func(context.Context) {
		asked <- bytes.Count([]byte(out.String()), []byte("\n"))
		<-gate
	}
	f, _ := filter.Parse("")
	done := make(chan error, 1)
	go func() { done <- runTail(&out, src, f, false, yield) }()
	for i := range 4 {
		select {
		case printed := <-asked:
			if printed != i*tailBatch {
				t.Fatalf("tail asked to yield for batch %d with %d lines printed, want %d", i, printed, i*tailBatch)
			}
		case err := <-done:
			t.Fatalf("tail ended (%v) having asked to yield %d times, want once before each of the 4 batches", err, i)
		case <-time.After(30 * time.Second):
			t.Fatalf("tail did not ask to yield before batch %d within 30 s", i)
		}
		gate <- struct{}{}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count([]byte(out.String()), []byte("\n")); n != frames {
		t.Errorf("tail printed %d lines, want %d", n, frames)
	}
}

// A client that announces a frame and sends it a byte now and then holds
// the injection for at most the request timeout: another inject then goes
// through, instead of waiting for the slow one to finish.
func TestASlowInjectionDoesNotHoldTheOthersBack(t *testing.T) {
	r, name, socket := startListening(t)
	r.echo(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	var c net.Conn
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err = net.Dial("unix", socket); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, `{"op":"inject","dir":"h2s","size":1000}`+"\n")
	stop := make(chan struct{})
	defer close(stop)
	go func() { // a byte a second: 1000 s for the frame
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	time.Sleep(500 * time.Millisecond) // the slow one takes its turn first
	frame := `{"jsonrpc":"2.0","method":"notifications/after"}`
	got := make(chan string, 1)
	go func() { got <- r.line(t, 60*time.Second) }()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, rpctapBinary(t), "inject", "--tap", name, frame).CombinedOutput(); err != nil {
		t.Fatalf("inject behind a slow one: %v\n%s", err, out)
	}
	if g := <-got; g != frame+"\n" {
		t.Errorf("the server got %q, want %q", g, frame)
	}
	t.Logf("the inject behind a slow one took %v", time.Since(start))
}
