package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
	"github.com/spf13/cobra"
)

func newSessionsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions ls|rm|prune",
		Short: "List, remove and prune recorded session files",
		Long: `Housekeeping of the session files rpctap run records: every one that
rpctap ls would list (the state directories, and the files live taps
registered wherever their environment put them).

  rpctap sessions ls [--json]                         list them all, oldest first
  rpctap sessions rm FILE...                          remove these session files
  rpctap sessions prune --older-than D [--dry-run] [--yes]
                                                      remove those last written more than D ago

rm and prune remove only files that begin with a session header, and
never the file of a tap that is still running.`,
		Args: takesArgs(0, 0, "", "rpctap sessions ls"),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newSessionsLsCmd(), newSessionsRmCmd(), newSessionsPruneCmd())
	return cmd
}

func newSessionsLsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls [--json]",
		Short: "List every recorded session, oldest first",
		Args:  takesArgs(0, 0, "", "rpctap sessions ls"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			live := liveSessionPaths()
			files := sessions.RecentSessions(0)
			var infos []sessions.SessionInfo
			for i := len(files) - 1; i >= 0; i-- {
				info, err := sessions.Describe(files[i])
				if err != nil {
					continue // not a session file: nothing of rpctap's
				}
				infos = append(infos, info)
			}
			if asJSON {
				return writeSessionsJSON(cmd.OutOrStdout(), infos, live)
			}
			writeSessionsText(cmd.OutOrStdout(), infos, live)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

// liveSessionPaths are the session files of the taps running now.
func liveSessionPaths() map[string]bool {
	live := map[string]bool{}
	taps, _ := tap.LiveTaps()
	for _, t := range taps {
		if t.Session != "" {
			live[realPath(t.Session)] = true
		}
	}
	return live
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// sessionState is what a listing says of a file: live (a running tap
// writes it), ended (it ends with the server's exit) or unfinished.
func sessionState(info sessions.SessionInfo, live map[string]bool) string {
	switch {
	case live[realPath(info.Path)]:
		return "live"
	case info.Ended:
		return "ended"
	}
	return "unfinished"
}

func writeSessionsText(w io.Writer, infos []sessions.SessionInfo, live map[string]bool) {
	if len(infos) == 0 {
		fmt.Fprintln(w, "No recorded sessions.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODIFIED\tSIZE\tSTATE\tNAME\tFILE")
	var total int64
	for _, s := range infos {
		total += s.Size
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Modified.Local().Format("2006-01-02 15:04"), humanSize(s.Size), sessionState(s, live),
			classify.EscapeString(s.Name, 40), classify.EscapeString(s.Path, 200))
	}
	tw.Flush()
	fmt.Fprintf(w, "%s, %s\n", plural(len(infos), "session"), humanSize(total))
}

func writeSessionsJSON(w io.Writer, infos []sessions.SessionInfo, live map[string]bool) error {
	type entry struct {
		Path     string    `json:"path"`
		Name     string    `json:"name"`
		ID       string    `json:"id"`
		Started  time.Time `json:"started"`
		Modified time.Time `json:"modified"`
		Size     int64     `json:"size"`
		State    string    `json:"state"`
		Version  int       `json:"version"`
	}
	out := []entry{}
	for _, s := range infos {
		out = append(out, entry{s.Path, s.Name, s.ID, s.Started, s.Modified, s.Size, sessionState(s, live), s.Version})
	}
	return sessions.PrintJSON(w, out, true)
}

func newSessionsRmCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rm FILE...",
		Short: "Remove session files",
		Args:  takesArgs(1, -1, "the session files to remove", "rpctap sessions rm ~/.local/state/rpctap/sessions/20261129T184200.123Z-server.jsonl (rpctap sessions ls lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			live := liveSessionPaths()
			failed := 0
			for _, p := range args {
				name := classify.EscapeString(p, 200)
				if live[realPath(p)] {
					fmt.Fprintf(cmd.ErrOrStderr(), "rpctap: kept %s: a tap is still recording it; stop its server first\n", name)
					failed++
					continue
				}
				if err := sessions.Remove(p); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "rpctap: cannot remove %s: %s\n", name, removeProblem(err))
					failed++
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", name)
			}
			if failed > 0 {
				return exitError{code: 2} // as for any file rpctap cannot act on (the exit-code table)
			}
			return nil
		},
	}
}

type pruneOptions struct {
	olderThan  string
	dryRun     bool
	yes        bool
	everywhere bool // files recorded outside the session directories (with --record) too
}

func newSessionsPruneCmd() *cobra.Command {
	var o pruneOptions
	cmd := &cobra.Command{
		Use:   "prune --older-than D [--dry-run] [--yes]",
		Short: "Remove the session files last written more than D ago",
		Long: `Removes every session file (as rpctap sessions ls lists them) last
written more than D ago: 30d, 2w, 12h, 90m or any Go duration. Without
--yes it asks first on a terminal, and refuses elsewhere; --dry-run lists
what would go and removes nothing. The file of a running tap is kept.

Only the session directories are pruned, where rpctap names the files: a
file recorded elsewhere with --record FILE (a fixture in a project's
testdata, say) is kept, and counted, unless --everywhere is given.`,
		Args: takesArgs(0, 0, "", "rpctap sessions prune --older-than 30d --dry-run"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.olderThan == "" {
				return usageError(errors.New("prune needs --older-than D, as in: rpctap sessions prune --older-than 30d --dry-run"))
			}
			age, err := parseAge(o.olderThan)
			if err != nil {
				return usageError(err)
			}
			return runPrune(cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr(), sessions.RecentSessions(0), liveSessionPaths(), age, time.Now(), o)
		},
	}
	cmd.Flags().StringVar(&o.olderThan, "older-than", "", "remove sessions last written more than this long ago: 30d, 2w, 12h, 90m")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "list what would be removed, and remove nothing")
	cmd.Flags().BoolVar(&o.yes, "yes", false, "remove without asking")
	cmd.Flags().BoolVar(&o.everywhere, "everywhere", false, "also remove old session files recorded outside the session directories, with --record FILE")
	return cmd
}

func runPrune(stdin io.Reader, stdout, stderr io.Writer, files []sessions.SessionFile, live map[string]bool, age time.Duration, now time.Time, o pruneOptions) error {
	var doomed []sessions.SessionInfo
	var size int64
	elsewhere := 0 // old session files recorded outside the session directories, kept
	for _, f := range sessions.OlderThan(files, now.Add(-age)) {
		info, err := sessions.Describe(f)
		if err != nil {
			continue // not a session file: never touched
		}
		if !o.everywhere && !sessions.InSessionDir(f.Path) {
			elsewhere++
			continue
		}
		if live[realPath(f.Path)] {
			fmt.Fprintf(stderr, "rpctap: keeping %s: a tap is still recording it\n", classify.EscapeString(f.Path, 200))
			continue
		}
		doomed = append(doomed, info)
		size += f.Size
	}
	if elsewhere > 0 {
		them := "them"
		if elsewhere == 1 {
			them = "it"
		}
		fmt.Fprintf(stderr, "rpctap: keeping %s as old, recorded outside the session directories with --record; add --everywhere to remove %s too\n",
			plural(elsewhere, "session file"), them)
	}
	what := fmt.Sprintf("%s (%s) last written more than %s ago", plural(len(doomed), "session file"), humanSize(size), formatAge(age))
	if len(doomed) == 0 {
		where := " in the session directories"
		if o.everywhere {
			where = ""
		}
		fmt.Fprintf(stdout, "No session file%s was last written more than %s ago.\n", where, formatAge(age))
		return nil
	}
	if o.dryRun {
		for _, s := range doomed {
			fmt.Fprintf(stdout, "would remove %s  %s  %s\n", classify.EscapeString(s.Path, 200), humanSize(s.Size), s.Modified.Local().Format("2006-01-02 15:04"))
		}
		fmt.Fprintf(stdout, "would remove %s; nothing removed (--dry-run)\n", what)
		return nil
	}
	if !o.yes {
		if !readsTerminal(stdin) {
			return usageError(fmt.Errorf("prune would remove %s: give --yes to remove them, or --dry-run to list them", what))
		}
		fmt.Fprintf(stdout, "Remove %s? [y/N] ", what)
		answer, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(stdout, "Nothing removed.")
			return nil
		}
	}
	removed, failed := 0, 0
	for _, s := range doomed {
		if err := sessions.Remove(s.Path); err != nil {
			fmt.Fprintf(stderr, "rpctap: cannot remove %s: %v\n", classify.EscapeString(s.Path, 200), err)
			failed++
			continue
		}
		removed++
		fmt.Fprintf(stdout, "removed %s\n", classify.EscapeString(s.Path, 200))
	}
	fmt.Fprintf(stdout, "removed %s of %s\n", plural(removed, "session file"), what)
	if failed > 0 {
		return exitError{code: 2}
	}
	return nil
}

// readsTerminal reports whether r is a terminal the user types at (not
// /dev/null, which is a character device too).
func readsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(f.Fd())
}

// parseAge reads an age: a Go duration (12h, 90m), or a whole number of
// days (30d) or weeks (2w).
func parseAge(s string) (time.Duration, error) {
	bad := fmt.Errorf("--older-than %q is not an age: give one as 30d, 2w, 12h or 90m", s)
	if n, unit := strings.TrimRight(s, "dw"), strings.TrimLeft(s, "0123456789"); n != s && (unit == "d" || unit == "w") {
		v, err := strconv.Atoi(n)
		if err != nil || v <= 0 {
			return 0, bad
		}
		day := 24 * time.Hour
		if unit == "w" {
			day *= 7
		}
		return time.Duration(v) * day, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, bad
	}
	return d, nil
}

// formatAge writes an age as people say it: whole days as days.
func formatAge(d time.Duration) string {
	if day := 24 * time.Hour; d >= day && d%day == 0 {
		return plural(int(d/day), "day")
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// removeProblem says why a session file could not be removed, the file
// named already.
func removeProblem(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "there is no such file (rpctap sessions ls lists them)"
	}
	return plainFileError(err)
}

// checkRecordPath is what a command run at a terminal (watch, demo,
// replay --as-host) does with its --record FILE before it starts
// anything: someone is there to read a refusal and type again, so a FILE
// it could not record to, or one that is there already (without force),
// is refused with what to type. rpctap run, which hosts start with no one
// to read it, records beside such a file instead (sessions.CreateRecording).
func checkRecordPath(path string, force bool) error {
	if path == "" {
		return nil
	}
	if err := sessions.CheckRecordPath(path, force); err != nil {
		return usageError(err)
	}
	return nil
}

// checkReplayRecord is checkRecordPath for replay, which never records
// over the recording it plays, even with --force. atTerminal is true for
// --as-host, run at a terminal; --as-server, which a host starts, is
// refused nothing else (it records beside a file that is there).
func checkReplayRecord(record, recording string, force, atTerminal bool) error {
	if record == "" || recording == "" {
		return nil
	}
	a, _ := filepath.Abs(record)
	b, _ := filepath.Abs(recording)
	if (force || atTerminal) && realPath(a) == realPath(b) {
		return usageError(fmt.Errorf("--record %s names the recording being replayed; give --record another name", classify.EscapeString(record, 200)))
	}
	if atTerminal {
		return checkRecordPath(record, force)
	}
	return nil
}
