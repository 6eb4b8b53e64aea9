package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
	"github.com/rpctap/rpctap/tui"
	"github.com/spf13/cobra"
)

func newLsCmd() *cobra.Command {
	var asJSON bool
	var recent int
	cmd := &cobra.Command{
		Use:   "ls [--json]",
		Short: "List live taps and recent sessions",
		Args:  takesArgs(0, 0, "", "rpctap ls (to open a session: rpctap ui FILE)"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			taps, err := tap.LiveTaps()
			if err != nil {
				return err
			}
			files := sessions.RecentSessions(recent)
			if asJSON {
				return writeLsJSON(cmd.OutOrStdout(), taps, files)
			}
			writeLsText(cmd.OutOrStdout(), taps, files)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	cmd.Flags().IntVar(&recent, "recent", 10, "how many recent session files to list")
	return cmd
}

func writeLsJSON(w io.Writer, taps []tap.Info, files []sessions.SessionFile) error {
	type file struct {
		Path     string    `json:"path"`
		Modified time.Time `json:"modified"`
		Size     int64     `json:"size"`
	}
	doc := struct {
		Live     []tap.Info `json:"live"`
		Sessions []file     `json:"sessions"`
	}{Live: taps, Sessions: []file{}}
	if doc.Live == nil {
		doc.Live = []tap.Info{}
	}
	for _, f := range files {
		doc.Sessions = append(doc.Sessions, file{f.Path, f.Modified, f.Size})
	}
	return printJSON(w, doc, true)
}

func writeLsText(w io.Writer, taps []tap.Info, files []sessions.SessionFile) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(taps) == 0 {
		fmt.Fprintln(tw, "No live taps.")
	} else {
		fmt.Fprintln(tw, "LIVE\tPID\tFRAMES\tERRORS\tPENDING\tUP\tCOMMAND")
		for _, t := range taps {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\n", classify.EscapeString(t.Name, 40), t.PID, t.Frames, t.Errors, t.Pending,
				time.Since(t.Started).Round(time.Second), classify.EscapeString(strings.Join(t.Argv, " "), 80))
		}
	}
	tw.Flush()
	fmt.Fprintln(w)
	if len(files) == 0 {
		fmt.Fprintln(w, "No recorded sessions.")
		return
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RECENT SESSIONS\tSIZE\tMODIFIED")
	for _, f := range files {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", classify.EscapeString(f.Path, 200), humanSize(f.Size), f.Modified.Local().Format("2006-01-02 15:04:05"))
	}
	tw.Flush()
}

// humanSize is a size as the UI writes it too.
func humanSize(n int64) string { return tui.FormatSize(n) }

func newInjectCmd() *cobra.Command {
	var target, dir, file string
	var capture bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "inject [--tap NAME|PID] [--dir h2s|s2h] [--capture] FRAME | --file F|-",
		Short: "Insert a frame into a live session at the next frame boundary",
		Long: `Sends FRAME (its body: rpctap adds the framing the stream uses) to the
server (--dir h2s, the default) or to the host (--dir s2h) of a live tap.
With --file, the frame is read from the file F (- for stdin) instead, for a
frame too large for the command line; one newline at its end is dropped.
Malformed frames are sent as they are. With --capture, FRAME must be a
request with an id: its answer is kept from the other side and printed.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if file != "" && len(args) > 0 {
				return usageError(errors.New("give the frame either as FRAME or with --file, not both"))
			}
			if file == "" && len(args) != 1 {
				return usageError(errors.New("give the frame to inject: rpctap inject FRAME, or rpctap inject --file F (- for stdin)"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var frame []byte
			if file != "" {
				var err error
				if frame, err = readFrameFile(file, cmd.InOrStdin()); err != nil {
					return err
				}
			} else {
				frame = []byte(args[0])
			}
			info, err := tap.FindTap(target)
			if err != nil {
				return err
			}
			rep, err := tap.SendInject(info.Socket, dir, frame, capture, wait)
			if err != nil {
				return err
			}
			if !rep.OK {
				return fmt.Errorf("the tap refused the frame: %s", rep.Error)
			}
			out := cmd.OutOrStdout()
			if capture {
				if rep.Reply == nil || string(rep.Reply) == "null" {
					return exitError{code: 1, msg: "no answer: " + rep.Error}
				}
				return printRawJSON(out, rep.Reply)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&target, "tap", "", "which live tap (name or pid); needed when more than one runs")
	cmd.Flags().StringVar(&dir, "dir", "h2s", "h2s: to the server; s2h: to the host")
	cmd.Flags().StringVar(&file, "file", "", "read the frame from this file (- for stdin) instead of the command line")
	cmd.Flags().BoolVar(&capture, "capture", false, "keep the answer from the other side and print it")
	cmd.Flags().DurationVar(&wait, "wait", 10*time.Second, "with --capture, how long to wait for the answer")
	return cmd
}

// readFrameFile reads a frame to inject from the file path (stdin for
// -), without the newline (or CRLF) an editor or echo ends a file with.
func readFrameFile(path string, stdin io.Reader) ([]byte, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the frame: %w", err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	return b, nil
}
