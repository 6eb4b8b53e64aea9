package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/filter"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/source"
	"github.com/spf13/cobra"
)

func newTailCmd() *cobra.Command {
	var asJSON, follow bool
	var expr string
	cmd := &cobra.Command{
		Use:   "tail [TARGET] [-f] [--json] [--filter EXPR]",
		Short: "Print a session frame by frame, following a live tap or a growing file",
		Long: `Prints one line per frame of a live tap or a session file (the only live
tap when TARGET is left out), with the same escaping and filter language as
the live view. --json prints each frame with its classification.

A session file is printed and tail exits, unless a live tap still writes
it: then tail follows it up to its exit record. -f follows the file
whatever writes it, until its exit record or Ctrl-C. A live tap that
records no file (--no-record) keeps no frame for a tail that falls
behind it, nor any frame over the 16 MiB it holds of one: tail then says
how many frames it missed, where they were and at its end, and exits
with status 1.`,
		Args: takesArgs(0, 1, "one session file or live tap", "rpctap tail SESSION.jsonl, or rpctap tail PID (rpctap ls lists both)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := filter.Parse(expr)
			if err != nil {
				return usageError(fmt.Errorf("--filter: %w", err))
			}
			target := ""
			if len(args) == 1 {
				target = args[0]
			}
			open := source.Open
			if follow {
				open = source.OpenFollowing
			}
			src, err := open(target)
			if err != nil {
				return err
			}
			defer src.Close()
			if err := runTail(cmd.OutOrStdout(), src, f, asJSON, src.Yield); err != nil {
				return err
			}
			return tailEnd(cmd.ErrOrStderr(), src)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON lines with each frame's classification")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow a session file until its exit record, whatever writes it")
	cmd.Flags().StringVar(&expr, "filter", "", "show only frames that match, e.g. 'method:tools/* !dir:err'")
	return cmd
}

// tailEnd says how a session file that tail printed to its end was
// damaged: no session record at all (exit status 2, as check), lines it
// could not read, or no exit record; and what tail did not get of a live
// tap that records no file (exit status 1).
func tailEnd(stderr io.Writer, src *source.Source) error {
	if missed, cut := src.Missed(); missed > 0 || cut {
		// A tap with no file keeps no frame for a view that falls behind.
		const record = "to see every frame, record the session (rpctap run without --no-record) and tail that"
		if missed == 0 {
			return exitError{code: 1, msg: "tail missed the end of the session: the stream of the tap, which records no file (--no-record), ended with no exit record (the tap was killed, or cut tail off when it did not read); " + record}
		}
		msg := fmt.Sprintf("tail missed %s of the session", plural(int(missed), "frame"))
		if cut {
			msg += ", and its end"
		}
		return exitError{code: 1, msg: msg + " (its notes say where): a tap that records no file (--no-record) keeps no frame for a view that falls behind, nor any frame larger than it holds; " + record}
	}
	name := classify.EscapeString(src.Path, 200)
	n := src.Index.Counts().Skipped
	switch {
	case src.NoRecord() && n == 0:
		return exitError{code: 2, msg: fmt.Sprintf("cannot tail %s: it is empty, so it is no session file; give the path of one that rpctap run recorded (rpctap ls lists them)", name)}
	case src.NoRecord():
		return exitError{code: 2, msg: fmt.Sprintf("cannot tail %s: it is not a session file rpctap recorded (none of its %s is a session header or record); give the path of one (rpctap ls lists them)", name, plural(n, "line")) + frameLogHint(src.Path)}
	case n > 0 && src.Path != "":
		fmt.Fprintf(stderr, "rpctap: %s of %s could not be read (%s); rpctap check %s names them\n", plural(n, "line"), name, humanSize(src.Index.Counts().SkippedBytes), name)
	}
	if src.EndedWithoutExit() {
		fmt.Fprintf(stderr, "rpctap: %s ends without an exit record: its tap was killed, or the file was cut\n", name)
	}
	return nil
}

// tailBatch is how many entries tail prints between two looks at whether
// the tap is short of CPU.
const tailBatch = 1024

// runTail prints entries as the source indexes them, until it ends. It is
// an observer: all of it works at a lower priority, it waits while the
// tap says it is short of CPU (yield, the source's Yield, and the
// source's indexing, for seconds at a time), reads the records on in
// file order, and writes its lines in large writes.
func runTail(w io.Writer, src *source.Source, f *filter.Filter, asJSON bool, yield func(context.Context)) error {
	src.Background()
	src.BackgroundProcess()
	src.Patient()
	recs := src.Records()
	defer recs.Close()
	bw := bufio.NewWriterSize(w, 64<<10)
	// On a terminal, tail ends when the terminal goes away, though
	// nothing comes to write (a process that ignores SIGHUP lives on).
	tty, _ := w.(*os.File)
	if tty != nil && terminalGone(tty) {
		tty = nil // not a terminal (a file, a pipe, /dev/null) from the start
	}
	x := src.Index
	next := 0
	for {
		ended := src.Ended()
		n := x.Len()
		for ; next < n; next++ {
			if next%tailBatch == 0 {
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
			fr := source.FilterFrame(&e, func() []byte {
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
		if tty != nil && terminalGone(tty) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tailEvent prints an event of the session: a note of rpctap's own (a
// demo's caption), escaped as peer text is (the session file may come
// from anywhere), and the frames a gap says are missing. (How the server
// ended is tail's end, not a line.)
func tailEvent(w io.Writer, recs *source.Records, pos int, e sessions.Entry, asJSON bool) error {
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
func tailLine(w io.Writer, src *source.Source, pos int, e sessions.Entry, ev *sessions.Event, asJSON bool) error {
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
		if e.Method != "" {
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
	if e.Method != "" {
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
	line += "  " + classify.Escape(frame, 160)
	if fate.Original != nil {
		line += "  original: " + classify.Escape(fate.Original, 160)
	}
	_, err := fmt.Fprintln(w, line)
	return err
}
