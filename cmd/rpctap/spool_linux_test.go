package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// A frame over the 16 MiB a tap holds goes to a spool file until it
// ends; when the spool cannot be written (here a file size limit, as a
// full disk would), exactly that frame is missing from the session file,
// where it was: the frames after it are recorded (the next one was
// counted missing too, "missing 2"), and the records keep time order (the
// gap record came after the exit, stamped later than it).
func TestAFrameThatCannotBeSpooledIsTheOnlyOneMissing(t *testing.T) {
	big := `{"jsonrpc":"2.0","method":"big","params":{"p":"` + strings.Repeat("x", 17<<20) + `"}}` + "\n"
	small := `{"jsonrpc":"2.0","method":"small"}` + "\n"
	for _, c := range []struct {
		name string
		sent string
	}{
		{"a frame after it", big + small},
		{"the last frame", big},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A limit of 4096 blocks (2 or 4 MiB) fits the session file,
			// not the spool.
			r := startRunWrapped(t, []string{"/bin/sh", "-c", `ulimit -S -f 4096 && exec "$0" "$@"`}, nil, []string{"/bin/sh", "-c", "exec cat >/dev/null"})
			go func() { io.WriteString(r.stdin, c.sent); r.stdin.Close() }()
			if code := r.wait(t, 60*time.Second); code != 0 {
				t.Fatalf("exit status %d; stderr: %s", code, r.stderr)
			}
			f, err := os.Open(r.path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rd := sessions.NewReader(f)
			var got []string
			var last int64
			for {
				e, err := rd.Next()
				if err != nil {
					break
				}
				switch {
				case e.Kind == sessions.EventGap:
					got = append(got, fmt.Sprintf("gap %s %d", e.Dir, e.Missing))
				case e.IsFrame() && e.Dir == classify.H2S:
					got = append(got, "frame "+string(e.Frame))
				case e.Kind != "":
					got = append(got, e.Kind)
				}
				if e.T < last {
					t.Errorf("line %d (%s) at %d µs comes after a record at %d µs", e.Line, got[len(got)-1], e.T, last)
				}
				last = max(last, e.T)
			}
			want := []string{"gap h2s 1"}
			if strings.Contains(c.sent, small) {
				want = append(want, "frame "+strings.TrimSuffix(small, "\n"))
			}
			want = append(want, "exit")
			if strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("the session file holds %q; want %q", got, want)
			}
			said := rpctapLines(r.stderr.String())
			if len(said) != 2 || !strings.Contains(said[0], "could not be kept to be recorded") || !strings.Contains(said[1], "is missing 1 frame host→server and 0 server→host") {
				t.Errorf("rpctap said %q; want that the frame could not be kept, then that the file misses that one frame", said)
			}
		})
	}
}
