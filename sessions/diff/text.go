package diff

import (
	"bufio"
	"fmt"
	"io"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// WriteText writes rep as rpctap diff's text report on the sessions a
// and b: each difference with its lines, its changes and whether it is a
// regression, then how many there are.
func WriteText(out io.Writer, a, b string, rep *Report) {
	w := bufio.NewWriter(out)
	defer w.Flush()
	fmt.Fprintf(w, "A %s (%d frames)\nB %s (%d frames)\n", classify.EscapeString(a, 200), rep.FramesA, classify.EscapeString(b, 200), rep.FramesB)
	for _, d := range rep.Differences {
		fmt.Fprintf(w, "  %s: %s", d.Kind, classify.EscapeString(d.Name, 200))
		var where []string
		if d.LineA > 0 {
			where = append(where, fmt.Sprintf("A line %d", d.LineA))
		}
		if d.LineB > 0 {
			where = append(where, fmt.Sprintf("B line %d", d.LineB))
		}
		if len(where) > 0 {
			fmt.Fprintf(w, " (%s)", joinWords(where))
		}
		if d.Regression {
			fmt.Fprint(w, "  REGRESSION")
		}
		fmt.Fprintln(w)
		if d.Detail != "" {
			fmt.Fprintf(w, "      %s\n", classify.EscapeString(d.Detail, 400))
		}
		for _, c := range d.Changes {
			fmt.Fprintf(w, "      %s\n", sessions.DescribeChange(c, "in A", "in B"))
		}
	}
	fmt.Fprintf(w, "%s, %s\n", sessions.Count(len(rep.Differences), "difference"), sessions.Count(rep.Regressions(), "regression"))
}

// joinWords joins s with commas.
func joinWords(s []string) string {
	out := s[0]
	for _, x := range s[1:] {
		out += ", " + x
	}
	return out
}
