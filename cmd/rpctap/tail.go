package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/filter"
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

// tailBatch is source.TailBatch, for the tests.
const tailBatch = source.TailBatch

// runTail is source.Tail for w: on a terminal, tail ends when the
// terminal goes away, though nothing comes to write (a process that
// ignores SIGHUP lives on).
func runTail(w io.Writer, src *source.Source, f *filter.Filter, asJSON bool, yield func(context.Context)) error {
	o := source.TailOptions{JSON: asJSON, Yield: yield}
	if tty, ok := w.(*os.File); ok && !terminalGone(tty) { // a file, a pipe, /dev/null: never a terminal
		o.Gone = func() bool { return terminalGone(tty) }
	}
	return source.Tail(w, src, f, o)
}
