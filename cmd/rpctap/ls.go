package main

import (
	"encoding/json"
	"fmt"
	"io"
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
		Args:  cobra.NoArgs,
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
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
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
	var target, dir string
	var capture bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "inject [--tap NAME|PID] [--dir h2s|s2h] [--capture] FRAME",
		Short: "Insert a frame into a live session at the next frame boundary",
		Long: `Sends FRAME (its body: rpctap adds the framing the stream uses) to the
server (--dir h2s, the default) or to the host (--dir s2h) of a live tap.
Malformed frames are sent as they are. With --capture, FRAME must be a
request with an id: its answer is kept from the other side and printed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			info, err := tap.FindTap(target)
			if err != nil {
				return err
			}
			rep, err := tap.SendInject(info.Socket, dir, []byte(args[0]), capture, wait)
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
				fmt.Fprintln(out, string(rep.Reply))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&target, "tap", "", "which live tap (name or pid); needed when more than one runs")
	cmd.Flags().StringVar(&dir, "dir", "h2s", "h2s: to the server; s2h: to the host")
	cmd.Flags().BoolVar(&capture, "capture", false, "keep the answer from the other side and print it")
	cmd.Flags().DurationVar(&wait, "wait", 10*time.Second, "with --capture, how long to wait for the answer")
	return cmd
}
