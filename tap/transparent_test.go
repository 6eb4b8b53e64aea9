package tap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// The tap is transparent and loses nothing, as a property: random byte
// streams, written into the tap in random pieces, come out of both directions
// byte for byte, plus whole injected frames at frame boundaries only; and the
// session file holds every frame of each direction, in order and exact.
//
// The server is /bin/cat, so a stream crosses the tap twice: host → server
// as written, then back server → host. What the host reads is the stream,
// plus the frames injected towards the server, plus those injected towards
// the host.

// randBody returns n random bytes of one of several kinds: JSON text,
// arbitrary bytes (NUL, invalid UTF-8, CR, LF), or UTF-8 text with bad
// sequences. With noLF the bytes hold no '\n'.
func randBody(rng *rand.Rand, n int, noLF bool) []byte {
	b := make([]byte, 0, n)
	switch rng.IntN(4) {
	case 0: // JSON-RPC-looking text
		for len(b) < n {
			b = fmt.Appendf(b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"x":"é\u00ff"}}`, rng.IntN(1000))
		}
		b = b[:n]
	case 1: // any byte
		for len(b) < n {
			b = append(b, byte(rng.UintN(256)))
		}
	case 2: // text with NULs, CRs, lone continuation bytes and cut runes
		pieces := []string{"abc", " ", "\x00", "\r", "\r\n", "\xff", "\xc3", "é", "😀"[:2], "Content-Length: 12\r\n", "\t", "\"", "\\"}
		for len(b) < n {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		b = b[:n]
	default: // long runs of one byte
		c := byte(rng.UintN(256))
		for len(b) < n {
			b = append(b, c)
		}
	}
	if noLF {
		for i, c := range b {
			if c == '\n' {
				b[i] = '\r'
			}
		}
	}
	return b
}

// randSize is a frame size: mostly small, sometimes past a read (64 KiB),
// and with big set, past the relay's hold limit (1 MiB) up to 4 MiB, so
// that the frame is streamed: frames from a byte to several MiB.
func randSize(rng *rand.Rand, big bool) int {
	switch r := rng.IntN(100); {
	case big:
		return holdLimit + rng.IntN(3*holdLimit)
	case r < 75:
		return rng.IntN(120)
	case r < 96:
		return rng.IntN(4096)
	default:
		return rng.IntN(2 * readSize)
	}
}

// genNDJSON makes a newline-framed stream; with big, one of its frames is
// larger than the relay holds.
func genNDJSON(rng *rand.Rand, big bool) []byte {
	var b []byte
	n := rng.IntN(25)
	bigAt := -1
	if big {
		bigAt = rng.IntN(n + 1)
	}
	for i := range n {
		b = append(b, randBody(rng, randSize(rng, i == bigAt), true)...)
		if rng.IntN(5) == 0 {
			b = append(b, '\r') // CRLF: the CR stays in the frame
		}
		b = append(b, '\n')
	}
	if rng.IntN(3) == 0 || bigAt == n { // a last line with no newline
		b = append(b, randBody(rng, 1+randSize(rng, bigAt == n), true)...)
	}
	return b
}

// genLSP makes a Content-Length-framed stream with malformed header
// blocks among the frames; with big, one of its frames is larger than the
// relay holds.
func genLSP(rng *rand.Rand, big bool) []byte {
	var b []byte
	n := rng.IntN(20)
	bigAt := -1
	if big {
		n++
		bigAt = rng.IntN(n)
	}
	for i := range n {
		body := randBody(rng, randSize(rng, i == bigAt), false)
		kind := rng.IntN(14)
		if i == bigAt {
			kind = rng.IntN(3) // a frame with a body
		}
		switch kind {
		case 0:
			b = fmt.Appendf(b, "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d\r\n\r\n", len(body))
		case 1:
			b = fmt.Appendf(b, "content-length: %d\n\n", len(body)) // bare LF, lower case
		case 2:
			b = fmt.Appendf(b, "Content-Length: 000%d\r\n\r\n", len(body)) // not canonical
		case 3:
			b = append(b, "this is not a header\r\n"...) // malformed blocks from here on
			continue
		case 4:
			b = append(b, "\r\n"...)
			continue
		case 5:
			b = append(b, "Content-Type: x\r\n\r\n"...)
			continue
		case 6:
			b = append(b, "Content-Length: lots\r\n\r\n"...)
			continue
		case 7:
			b = fmt.Appendf(b, "Content-Length: %d\r\nContent-Length: %d\r\n\r\n", len(body), len(body)+1)
			continue
		case 8: // a body glued to the garbage before it
			b = append(b, "garbage"...)
			b = fmt.Appendf(b, "Content-Length: %d\r\n\r\n", len(body))
		case 9:
			if rng.IntN(10) == 0 { // a header line past 64 KiB
				b = append(b, bytes.Repeat([]byte("X-Long: y"), 8000)...)
				b = append(b, "\r\n\r\n"...)
				continue
			}
			fallthrough
		default:
			b = fmt.Appendf(b, "Content-Length: %d\r\n\r\n", len(body))
		}
		b = append(b, body...)
	}
	switch rng.IntN(6) { // how the stream ends
	case 0: // inside a body
		body := randBody(rng, 1+randSize(rng, false), false)
		b = fmt.Appendf(b, "Content-Length: %d\r\n\r\n", len(body)+10)
		b = append(b, body...)
	case 1: // inside a header block
		b = append(b, "Content-Length: 12\r\nContent-Ty"...)
	case 2: // a stray trailing newline
		b = append(b, '\n')
	}
	return b
}

// writeInPieces writes data to w in random pieces: single bytes, a read's
// worth, and everything between.
func writeInPieces(rng *rand.Rand, w io.Writer, data []byte) error {
	for len(data) > 0 {
		n := 1 + rng.IntN(1<<rng.IntN(19))
		n = min(n, len(data))
		if _, err := w.Write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
		if rng.IntN(8) == 0 {
			runtime.Gosched()
		}
	}
	return nil
}

// injector injects frames into one direction of a tap until the stream
// closes or stop is closed, and keeps the frames that went in.
//
// Its frames are of random size (an injection is never interleaved inside a
// relayed frame, whatever the sizes): mostly small, some past a read, and a
// few past the relay's hold limit, up to 3 MiB; with bigFirst, the first
// one is.
type injector struct {
	dir      classify.Direction
	framing  classify.Framing
	stream   int
	bigFirst bool
	frames   [][]byte // the frames written, with their framing, in order
	bodies   [][]byte
	err      error
	largest  int
}

// padSize is how much an injected frame is padded: see injector.
func (in *injector) padSize(rng *rand.Rand, n int) int {
	switch r := rng.IntN(300); {
	case n == 0 && in.bigFirst, r == 0 && n < 50:
		return holdLimit + rng.IntN(2*holdLimit)
	case r < 30:
		return rng.IntN(2 * readSize)
	default:
		return rng.IntN(40)
	}
}

func (in *injector) run(tp *Tap, rng *rand.Rand, stop <-chan struct{}) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		if rng.IntN(3) == 0 {
			time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
		} else {
			runtime.Gosched()
		}
		body := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"rpctap/test","params":{"stream":%d,"dir":"%s","n":%d,"pad":"%s"}}`,
			in.stream, in.dir, n, strings.Repeat("p", in.padSize(rng, n)))
		// One injection in five is raw: two frames in one write, the
		// first with a hand-made lsp header; they too must land whole,
		// between relayed frames.
		raw := rng.IntN(5) == 0
		bodies, frames := [][]byte{body}, [][]byte{in.framed(body, false)}
		var err error
		if raw {
			second := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"rpctap/raw","params":{"stream":%d,"n":%d}}`, in.stream, n)
			bodies, frames = append(bodies, second), [][]byte{in.framed(body, true), in.framed(second, false)}
			_, err = tp.Inject(in.dir, bytes.Join(frames, nil), InjectOptions{Raw: true})
		} else {
			_, err = tp.Inject(in.dir, body, InjectOptions{})
		}
		switch {
		case err == nil:
			in.largest = max(in.largest, len(body))
			in.bodies = append(in.bodies, bodies...)
			in.frames = append(in.frames, frames...)
		case errors.Is(err, errClosed):
			return
		case strings.Contains(err.Error(), "has not started"):
			n--
		default:
			in.err = err
			return
		}
	}
}

// framed is body with the stream's framing; hand adds a header of the
// injector's own on lsp.
func (in *injector) framed(body []byte, hand bool) []byte {
	switch {
	case in.framing == classify.FramingLSP && hand:
		return fmt.Appendf(nil, "Content-Length: %d\r\nX-Rpctap-Test: raw\r\n\r\n%s", len(body), body)
	case in.framing == classify.FramingLSP:
		return fmt.Appendf(nil, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	return append(bytes.Clone(body), '\n')
}

// storeMax makes a at least v.
func storeMax(a *atomic.Int64, v int64) {
	for old := a.Load(); v > old && !a.CompareAndSwap(old, v); old = a.Load() {
	}
}

// largestInjected is the largest frame the injectors got in, for the log.
var largestInjected atomic.Int64

// transparencyCase is one random stream and what to do with it.
type transparencyCase struct {
	id        int
	framing   classify.Framing
	input     []byte
	inject    bool
	bigInject bool // the first injected frame each way is past the hold limit
	seed      uint64
}

func TestTapIsTransparentForRandomStreamsAndRecordsEveryFrameExactly(t *testing.T) {
	n := 2000
	if testing.Short() || raceEnabled {
		n = 300
	}
	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	seed := rng.Uint64()
	t.Logf("seed %d (set RPCTAP_SEED to repeat)", seed)
	if s := envSeed(); s != 0 {
		seed = s
	}
	only := -1 // RPCTAP_CASE runs one stream of the seed's
	if s, err := strconv.Atoi(os.Getenv("RPCTAP_CASE")); err == nil {
		only = s
	}
	cases := make(chan transparencyCase)
	go func() {
		defer close(cases)
		rng := rand.New(rand.NewPCG(seed, 7))
		for i := range n {
			c := transparencyCase{id: i, seed: rng.Uint64(), inject: rng.IntN(2) == 0}
			big := rng.IntN(40) == 0
			pick := rng.IntN(5)
			if i < 2 {
				// Every run has a stream of each framing with a frame
				// larger than the relay holds, and a large injection in
				// each direction while it flows.
				big, c.inject, c.bigInject, pick = true, true, true, 2*i
			}
			switch pick {
			case 0, 1:
				c.framing, c.input = classify.FramingNDJSON, genNDJSON(rng, big)
			case 2, 3:
				c.framing, c.input = classify.FramingLSP, genLSP(rng, big)
			default: // auto decides per direction; no injections (their framing would be a guess)
				c.framing, c.inject = classify.FramingAuto, false
				if rng.IntN(2) == 0 {
					c.input = genLSP(rng, big)
				} else {
					c.input = genNDJSON(rng, big)
				}
			}
			cases <- c
		}
	}()
	dir := t.TempDir()
	var wg sync.WaitGroup
	var failed atomic.Int32
	var bytesIn, injected, streamed, largest atomic.Int64
	start := time.Now()
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range cases {
				if failed.Load() > 3 || only >= 0 && c.id != only {
					continue
				}
				if msg := runTransparencyCase(c, filepath.Join(dir, fmt.Sprintf("s%d-%d.jsonl", w, c.id)), &injected); msg != "" {
					failed.Add(1)
					t.Errorf("stream %d (%s, %d bytes, inject %v, seed %d): %s", c.id, c.framing, len(c.input), c.inject, seed, msg)
					if only >= 0 {
						t.Logf("input: %q", clip(c.input, 4000))
					}
				}
				bytesIn.Add(int64(len(c.input)))
				for _, sp := range classify.SplitAll(c.input, c.framing) {
					if sp.Size > holdLimit {
						streamed.Add(1)
					}
					storeMax(&largest, sp.Size)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d streams, %d bytes, %d frames larger than the relay holds (the largest %d bytes), %d frames injected (the largest %d bytes), in %v",
		n, bytesIn.Load(), streamed.Load(), largest.Load(), injected.Load(), largestInjected.Load(), time.Since(start).Round(time.Millisecond))
}

// runTransparencyCase runs one stream through a tap and returns what went
// wrong, or "".
func runTransparencyCase(c transparencyCase, path string, injected *atomic.Int64) string {
	rng := rand.New(rand.NewPCG(c.seed, 1))
	tp, err := New(Options{Argv: []string{"/bin/cat"}, Framing: c.framing, Record: true, Path: path, NoRedact: true})
	if err != nil {
		return err.Error()
	}
	pr, pw := io.Pipe()
	out := newSink(true)
	errOut := newSink(true)
	done := make(chan struct{})
	var res Result
	var runErr error
	go func() {
		defer close(done)
		res, runErr = tp.Run(t0ctx, pr, out, errOut)
	}()
	stop := make(chan struct{})
	var inj [3]*injector
	var iwg sync.WaitGroup
	if c.inject {
		for _, d := range []classify.Direction{classify.H2S, classify.S2H} {
			in := &injector{dir: d, framing: c.framing, stream: c.id, bigFirst: c.bigInject}
			inj[d] = in
			irng := rand.New(rand.NewPCG(c.seed, uint64(d)+10))
			iwg.Add(1)
			go func() { defer iwg.Done(); in.run(tp, irng, stop) }()
		}
	}
	werr := writeInPieces(rng, pw, c.input)
	pw.Close()
	select {
	case <-done:
	case <-time.After(generous):
		close(stop)
		return "Run did not return"
	}
	close(stop)
	iwg.Wait()
	if werr != nil {
		return "host write: " + werr.Error()
	}
	if runErr != nil || res.ExitCode != 0 {
		return fmt.Sprintf("Run = %+v, %v; stderr %q", res, runErr, errOut.bytes())
	}
	got := out.bytes()
	if !out.isClosed() {
		return "the host's stdout was not closed"
	}

	// What the host read, less the injected frames, is the input.
	var framing classify.Framing = c.framing
	var want [3][][]byte
	if c.inject {
		for _, d := range []classify.Direction{classify.H2S, classify.S2H} {
			if inj[d].err != nil {
				return "Inject: " + inj[d].err.Error()
			}
			want[d] = inj[d].frames
			injected.Add(int64(len(inj[d].frames)))
			storeMax(&largestInjected, int64(inj[d].largest))
		}
	}
	wire, catRead, msg := removeInjected(got, framing, want)
	if msg != "" {
		return msg
	}
	if !bytes.Equal(wire, c.input) {
		return "output differs from input: " + firstDiff(wire, c.input)
	}

	// The session file: h2s frames replay what cat read (the host's
	// stream less what was injected towards the host), s2h frames what
	// the host read; injected frames are marked, in order.
	f, err := openFile(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	rd := sessions.NewReader(f)
	var evs []sessions.Event
	sawLSPNote := false
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "reading the session: " + err.Error()
		}
		if ev.Kind == sessions.EventNote && ev.Text == sessions.NoteFramingLSP {
			sawLSPNote = true
		}
		e := *ev
		e.Frame, e.Header = bytes.Clone(ev.Frame), bytes.Clone(ev.Header)
		evs = append(evs, e)
	}
	if rd.Skipped() != 0 {
		return fmt.Sprintf("the reader skipped %d lines of the session file", rd.Skipped())
	}
	recFraming := framing
	if framing == classify.FramingAuto {
		recFraming = classify.FramingNDJSON
		if sawLSPNote {
			recFraming = classify.FramingLSP
		}
	}
	if r := replay(evs, classify.H2S, recFraming); !bytes.Equal(r, catRead) {
		return "replayed h2s frames differ from what the server read: " + firstDiff(r, catRead)
	}
	if r := replay(evs, classify.S2H, recFraming); !bytes.Equal(r, got) {
		return "replayed s2h frames differ from what the host read: " + firstDiff(r, got)
	}
	for _, d := range []classify.Direction{classify.H2S, classify.S2H} {
		var bodies [][]byte
		for _, e := range evs {
			if e.IsFrame() && e.Dir == d && e.Src == sessions.SrcInject {
				bodies = append(bodies, e.Frame)
			}
		}
		var wantBodies [][]byte
		if inj[d] != nil {
			wantBodies = inj[d].bodies
		}
		if len(bodies) != len(wantBodies) {
			return fmt.Sprintf("%s: %d frames recorded with src inject, %d injected", d, len(bodies), len(wantBodies))
		}
		for i := range bodies {
			if !bytes.Equal(bodies[i], wantBodies[i]) {
				return fmt.Sprintf("%s: injected frame %d recorded as %q, want %q", d, i, bodies[i], wantBodies[i])
			}
		}
	}
	if last := evs[len(evs)-1]; last.Kind != sessions.EventExit || last.Code == nil || *last.Code != 0 {
		return fmt.Sprintf("the last record is %+v, want the exit record", last)
	}
	return ""
}

// removeInjected splits what the host read into frames and takes out, at
// frame boundaries, the frames injected towards the server (want[H2S]) and
// towards the host (want[S2H]), each in the order they were injected. It
// returns the rest (the host's own stream), and the rest with the frames
// injected towards the server kept (what the server read).
func removeInjected(got []byte, framing classify.Framing, want [3][][]byte) (wire, serverRead []byte, msg string) {
	var next [3]int
	for _, sp := range classify.SplitAll(got, framing) {
		frame := got[sp.Start : sp.Start+sp.Size]
		matched := false
		for _, d := range []classify.Direction{classify.H2S, classify.S2H} {
			if next[d] < len(want[d]) && bytes.Equal(frame, want[d][next[d]]) {
				next[d]++
				matched = true
				if d == classify.H2S {
					serverRead = append(serverRead, frame...)
				}
				break
			}
		}
		if !matched {
			wire = append(wire, frame...)
			serverRead = append(serverRead, frame...)
		}
	}
	for _, d := range []classify.Direction{classify.H2S, classify.S2H} {
		if next[d] != len(want[d]) {
			frame := want[d][next[d]]
			where := ""
			if i := bytes.Index(got, frame); i >= 0 {
				where = fmt.Sprintf("; it is at byte %d of %d, after %q", i, len(got), clip(got[max(0, i-60):i], 60))
			}
			return nil, nil, fmt.Sprintf("%s: only %d of %d injected frames are whole frames of the output; frame %d: %q%s", d, next[d], len(want[d]), next[d], frame, where)
		}
	}
	return wire, serverRead, ""
}

func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-40)
	return fmt.Sprintf("%d bytes, want %d; first difference at byte %d: got %q, want %q", len(got), len(want), i,
		clip(got[from:], 120), clip(want[from:], 120))
}
