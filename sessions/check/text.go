package check

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// LineList names line numbers for people: "line 4", "lines 4, 7–9 and 12",
// at most 20 runs of them, then how many more there are of total.
func LineList(lines []int, total int) string {
	var runs []string
	shown := 0
	for i := 0; i < len(lines) && len(runs) < 20; {
		j := i
		for j+1 < len(lines) && lines[j+1] == lines[j]+1 {
			j++
		}
		switch {
		case j == i:
			runs = append(runs, strconv.Itoa(lines[i]))
		case j == i+1:
			runs = append(runs, strconv.Itoa(lines[i]), strconv.Itoa(lines[j]))
		default:
			runs = append(runs, fmt.Sprintf("%d–%d", lines[i], lines[j]))
		}
		shown += j - i + 1
		i = j + 1
	}
	word := "lines "
	if total == 1 {
		word = "line "
	}
	if more := total - shown; more > 0 {
		return word + strings.Join(runs, ", ") + fmt.Sprintf(" and %d more", more)
	}
	if len(runs) == 1 {
		return word + runs[0]
	}
	return word + strings.Join(runs[:len(runs)-1], ", ") + " and " + runs[len(runs)-1]
}

// WriteText writes rep as rpctap check's text report on the session
// called name: a summary line, then the peers' findings by severity, each
// with its line, and the user's own apart (failOnUser says whether they
// count toward --fail-on). Errors of w are w's to keep (rpctap check
// writes through a bufio.Writer and reports its Flush).
func WriteText(w io.Writer, name string, rep *Report, failOnUser bool) {
	c, mine := counts(rep, false), counts(rep, true)
	fmt.Fprintf(w, "%s: %s judged as %s: %s, %s, %s", classify.EscapeString(name, 200), sessions.Count(rep.Frames, "frame"), rep.Profile,
		sessions.Count(c.Error, "error"), sessions.Count(c.Warn, "warning"), sessions.Count(c.Info, "note"))
	if n := mine.Error + mine.Warn + mine.Info; n > 0 {
		fmt.Fprintf(w, "; %s about frames you injected or edited, apart", sessions.Count(n, "finding"))
	}
	if len(rep.HeaderFaults) > 0 {
		fmt.Fprintf(w, "; %s in the header", sessions.Count(len(rep.HeaderFaults), "fault"))
	}
	if rep.Skipped > 0 {
		fmt.Fprintf(w, "; skipped %s it could not read: %s (%s)", sessions.Count(rep.Skipped, "line"), LineList(rep.SkippedLines, rep.Skipped), sessions.FormatSize(rep.SkippedBytes))
	}
	fmt.Fprintln(w)
	if len(rep.HeaderFaults) > 0 {
		fmt.Fprintf(w, "\nHEADER (%d)\n", len(rep.HeaderFaults))
		for _, f := range rep.HeaderFaults {
			fmt.Fprintf(w, "  line 1  %s\n", f)
		}
	}
	for _, sev := range []classify.Severity{classify.Error, classify.Warn, classify.Info} {
		var group []Finding
		for _, f := range rep.Findings {
			if f.Severity == sev && !f.ByUser {
				group = append(group, f)
			}
		}
		if len(group) == 0 {
			continue
		}
		sort.SliceStable(group, func(i, j int) bool { return group[i].Line < group[j].Line })
		fmt.Fprintf(w, "\n%s (%d)\n", strings.ToUpper(sev.String()), len(group))
		writeFindings(w, group, false)
	}
	var yours []Finding
	for _, f := range rep.Findings {
		if f.ByUser {
			yours = append(yours, f)
		}
	}
	if len(yours) > 0 {
		fails := "they do not fail the check (--fail-on-injected makes them)"
		if failOnUser {
			fails = "they count toward --fail-on (--fail-on-injected)"
		}
		fmt.Fprintf(w, "\nYOURS (%d): about frames you injected or edited, or their answers; %s\n", len(yours), fails)
		writeFindings(w, yours, true)
	}
}

// writeFindings lists findings for the text report, each with where
// it is, its message, its frame and what became of the frame in the tap;
// withSeverity names each one's severity (a group of mixed ones).
func writeFindings(w io.Writer, group []Finding, withSeverity bool) {
	for _, f := range group {
		var where []string
		if f.Dir != 0 {
			where = append(where, f.Dir.String())
		}
		if f.Kind != 0 {
			where = append(where, f.Kind.String())
		}
		if f.Member >= 0 {
			where = append(where, fmt.Sprintf("member %d", f.Member))
		}
		if f.ID != "" {
			where = append(where, "id "+classify.EscapeString(f.ID, 60))
		}
		if f.Method != "" {
			where = append(where, classify.EscapeString(f.Method, 80))
		}
		code := f.Code.String()
		if withSeverity {
			code = f.Severity.String() + " " + code
		}
		fmt.Fprintf(w, "  line %d  %s  [%s]\n", f.Line, code, strings.Join(where, " "))
		fmt.Fprintf(w, "      %s", f.Message)
		if f.Related != 0 {
			fmt.Fprintf(w, " (see line %d)", f.Related)
		}
		fmt.Fprintln(w)
		if f.Frame != "" {
			fmt.Fprintf(w, "      %s\n", f.Frame)
		}
		if !f.Fate.IsZero() {
			fmt.Fprintf(w, "      fate: %s\n", f.Fate.Text())
			if f.Fate.Original != nil {
				fmt.Fprintf(w, "      original: %s\n", classify.Escape(f.Fate.Original, 160))
			}
		}
	}
}
