package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
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
	return sessions.PrintJSON(w, doc, true)
}

func writeLsText(w io.Writer, taps []tap.Info, files []sessions.SessionFile) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(taps) == 0 {
		fmt.Fprintln(tw, "No live taps.")
	} else {
		fmt.Fprintln(tw, "LIVE\tPID\tFRAMES\tERRORS\tPENDING\tUP\tCOMMAND")
		for _, t := range taps {
			errs := strconv.FormatInt(t.Errors, 10)
			if t.UserErrors > 0 {
				errs += fmt.Sprintf(" (+%d yours)", t.UserErrors) // frames the user injected or edited, apart
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%d\t%s\t%s\n", classify.EscapeString(t.Name, 40), t.PID, t.Frames, errs, t.Pending,
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
func humanSize(n int64) string { return sessions.FormatSize(n) }

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
