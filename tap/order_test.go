package tap

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/rpctap/rpctap/classify"
)

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Invariant 3's "in order" across directions: a frame is handed to the
// recorder before its receiver can read it, so the answer it brings about
// is never recorded before it (the tracker, live and in rpctap check,
// would call that answer unmatched). The receiver here answers the moment
// it reads, as a fast server on another core does.
func TestFrameIsRecordedBeforeItsReceiverCanAnswerIt(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(it item) {
		if it.eof {
			return
		}
		mu.Lock()
		order = append(order, fmt.Sprintf("%s %s", it.dir, strings.TrimSpace(string(it.data))))
		mu.Unlock()
	}
	server := writerFunc(func(p []byte) (int, error) {
		note(item{dir: classify.S2H, data: []byte("answer to " + strings.TrimSpace(string(p)))})
		return len(p), nil
	})
	d := &dest{dir: classify.H2S, w: server, note: note}
	inj := &injection{frame: []byte("injected\n"), body: []byte("injected"), done: make(chan error, 1)}
	d.inject(inj)
	if err := <-inj.done; err != nil {
		t.Fatal(err)
	}
	r := &relay{dir: classify.H2S, src: strings.NewReader("request\n"), dst: d, framing: classify.FramingNDJSON}
	if err := r.run(); err != nil {
		t.Fatal(err)
	}
	want := []string{"h2s injected", "s2h answer to injected", "h2s request", "s2h answer to request"}
	if strings.Join(order, "|") != strings.Join(want, "|") {
		t.Errorf("recorded in the order %q, want %q", order, want)
	}
}
