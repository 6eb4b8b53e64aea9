package source

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/filter"
	"github.com/rpctap/rpctap/sessions"
)

// TailBatch is how many entries Tail prints between two looks at whether
// the tap is short of CPU.
const TailBatch = 1024

// TailOptions are how Tail prints and when it stops early.
type TailOptions struct {
	JSON bool // JSON lines with each frame's classification
	// Yield is called before each TailBatch entries (the source's Yield
	// for an observer of a busy tap); nil: never.
	Yield func(context.Context)
	// Gone reports whether the output's terminal went away, which ends
	// the tail though nothing comes to write; nil: never.
	Gone func() bool
}

// Tail prints entries of src that f matches as the source indexes them,
// until it ends: one line each (rpctap tail). It is an observer: all of
// it works at a lower priority, it waits while the tap says it is short
// of CPU (o.Yield, and the source's indexing, for seconds at a time),
// reads the records on in file order, and writes its lines in large
// writes.
func Tail(w io.Writer, src *Source, f *filter.Filter, o TailOptions) error {
	asJSON, yield, gone := o.JSON, o.Yield, o.Gone
	if yield == nil {
		yield = func(context.Context) {}
	}
	src.Background()
	src.BackgroundProcess()
	src.Patient()
	recs := src.Records()
	defer recs.Close()
	bw := bufio.NewWriterSize(w, 64<<10)
	x := src.Index
	next := 0
	for {
		ended := src.Ended()
		n := x.Len()
		for ; next < n; next++ {
			if next%TailBatch == 0 {
				if err := bw.Flush(); err != nil {
					return err
				}
				yield(context.Background())
			}
			e := x.At(next)
			if e.Event != "" {
				if err := tailEvent(bw, recs, next, e, asJSON); err != nil {
					return err
				}
				continue
			}
			if !e.IsFrame() {
				continue
			}
			var ev *sessions.Event
			var evErr error
			read := false
			record := func() (*sessions.Event, error) {
				if !read {
					ev, evErr = recs.At(next)
					read = true
				}
				return ev, evErr
			}
			fr := FilterFrame(&e, func() []byte {
				if ev, err := record(); err == nil {
					return ev.Frame
				}
				return nil
			})
			if !f.Match(fr) {
				continue
			}
			rec, _ := record()
			if err := tailLine(bw, src, next, e, rec, asJSON); err != nil {
				return err
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if ended && next >= x.Len() {
			if st := src.State(); strings.HasPrefix(st, "error") {
				return errors.New(strings.TrimPrefix(st, "error: "))
			}
			return nil
		}
		if gone != nil && gone() {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tailEvent prints an event of the session: a note of rpctap's own (a
// demo's caption), escaped as peer text is (the session file may come
// from anywhere), and the frames a gap says are missing. (How the server
// ended is tail's end, not a line.)
func tailEvent(w io.Writer, recs *Records, pos int, e sessions.Entry, asJSON bool) error {
	ev, err := recs.At(pos)
	if err != nil || ev.Gap {
		return nil
	}
	var text string
	out := map[string]any{"seq": e.Seq, "t": e.T}
	switch ev.Kind {
	case sessions.EventNote:
		if ev.Text == "" {
			return nil
		}
		text, out["note"] = classify.EscapeString(ev.Text, 0), ev.Text
	case sessions.EventGap:
		what := "frames"
		if ev.Dir == classify.Err {
			what = "lines"
		}
		text = fmt.Sprintf("%d %s %s missing: the tap could not record them", ev.Missing, what, ev.Dir.Toward())
		out["gap"] = map[string]any{"dir": ev.Dir.String(), "missing": ev.Missing}
	default:
		return nil
	}
	if asJSON {
		return sessions.PrintJSON(w, out, false)
	}
	_, err = fmt.Fprintf(w, "%6d %10s # %s\n", e.Seq, fmt.Sprintf("%d.%03d", e.T/1e6, (e.T/1e3)%1000), text)
	return err
}

// tailLine prints one frame: its entry e at position pos, and its record
// ev (nil when it could not be read back), with what became of it in the
// tap.
func tailLine(w io.Writer, src *Source, pos int, e sessions.Entry, ev *sessions.Event, asJSON bool) error {
	var frame []byte
	fate := e.Fate()
	if ev != nil {
		frame, fate = ev.Frame, sessions.FateOf(ev)
	}
	if asJSON {
		out := map[string]any{"seq": e.Seq, "t": e.T, "dir": e.Dir.String(), "size": e.Size}
		if e.Dir != classify.Err {
			out["kind"] = e.Kind.String()
		}
		if e.ID != "" {
			out["id"] = json.RawMessage(e.ID)
			if !json.Valid([]byte(e.ID)) {
				out["id"] = e.ID
			}
		}
		if e.Method != "" && e.Kind != classify.KindHTTP { // a frame of kind http has no method: its http object says what HTTP did
			out["method"] = e.Method
		}
		if e.Pair != 0 {
			out["pair"] = e.Pair
			out["latency_us"] = e.Latency.Microseconds()
		}
		if e.Status.String() != "" {
			out["status"] = e.Status.String()
		}
		var fs []map[string]any
		for _, f := range src.Index.Findings(pos) {
			fm := map[string]any{"code": f.Code.String(), "severity": f.Severity.String(), "message": f.Message}
			if f.Related != 0 {
				fm["related"] = f.Related
			}
			fs = append(fs, fm)
		}
		if fs != nil {
			out["findings"] = fs
		}
		if !fate.IsZero() {
			out["fate"] = json.RawMessage(fate.AppendJSON(nil))
		}
		if ev != nil {
			if h := sessions.HTTPObject(ev.HTTP); h != nil {
				out["http"] = h
			}
		}
		if frame != nil {
			// frame is the frame's JSON; frame_text the frame as text,
			// with frame_b64 its exact bytes when they are not UTF-8 (the
			// text then has U+FFFD for them).
			switch valid := utf8.Valid(frame); {
			case valid && json.Valid(frame):
				out["frame"] = json.RawMessage(frame)
			case valid:
				out["frame_text"] = string(frame)
			default:
				out["frame_text"] = string(frame)
				out["frame_b64"] = frame
			}
		}
		return sessions.PrintJSON(w, out, false)
	}
	dir := map[classify.Direction]string{classify.H2S: "→", classify.S2H: "←", classify.Err: "!"}[e.Dir]
	kind := e.Kind.String()
	if e.Dir == classify.Err {
		kind = "stderr"
	}
	var flags []string
	for _, c := range e.Codes.Codes() {
		flags = append(flags, c.String())
	}
	line := fmt.Sprintf("%6d %10s %s %-12s", e.Seq, fmt.Sprintf("%d.%03d", e.T/1e6, (e.T/1e3)%1000), dir, kind)
	if e.ID != "" {
		line += " id=" + classify.EscapeString(e.ID, 40)
	}
	if e.Method != "" && (e.Kind != classify.KindHTTP || ev == nil || ev.HTTP == nil) { // a frame of kind http says it in its http= words, which say more
		line += " " + classify.EscapeString(e.Method, 80)
	}
	if e.Latency > 0 && e.Kind == classify.KindResponse {
		line += fmt.Sprintf(" (%s)", e.Latency.Round(time.Microsecond))
	}
	if len(flags) > 0 {
		line += " [" + strings.Join(flags, " ") + "]"
	}
	if words := fate.Words(); len(words) > 0 {
		line += " fate=" + strings.Join(words, ",")
	}
	if ev != nil {
		if h := sessions.HTTPSummary(ev.HTTP); h != "" {
			line += " http=" + classify.EscapeString(h, 200)
		}
	}
	line += "  " + classify.Escape(frame, 160)
	if fate.Original != nil {
		line += "  original: " + classify.Escape(fate.Original, 160)
	}
	_, err := fmt.Fprintln(w, line)
	return err
}
