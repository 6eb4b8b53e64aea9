package check

import (
	"bufio"
	"fmt"
	"io"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// WriteJUnit writes rep as a JUnit XML report for CI test views: one test
// suite for the session file, and in it one test case per finding code
// (every code, so that a view shows which rules held), plus one for the
// file's header. A code with findings at or above f.FailOn fails, its
// failure listing each finding by line; findings below it are listed in
// the case's system-out and it passes. Peer text is escaped for a
// terminal, and escaped for XML (sessions.MarkupText, sessions.MarkupAttr).
func WriteJUnit(w io.Writer, f File, rep *Report) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	byCode := map[classify.Code][]int{}
	for i, cf := range rep.Findings {
		byCode[cf.Code] = append(byCode[cf.Code], i)
	}
	codes := classify.Codes()
	failing := func(idx []int) bool {
		for _, i := range idx {
			if f.fails(&rep.Findings[i]) {
				return true
			}
		}
		return false
	}
	failures := 0
	for _, c := range codes {
		if failing(byCode[c]) {
			failures++
		}
	}
	if len(rep.HeaderFaults) > 0 && f.FailOn != 0 {
		failures++
	}
	name := f.Name
	if name == "" || name == "-" {
		name = "stdin"
	}
	name = classify.EscapeString(name, 200)
	suite := "rpctap check " + name
	fmt.Fprintf(bw, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=%s tests=\"%d\" failures=\"%d\" errors=\"0\">\n",
		junitAttr(suite), len(codes)+1, failures)
	fmt.Fprintf(bw, "  <testsuite name=%s tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"0\">\n", junitAttr(suite), len(codes)+1, failures)
	fmt.Fprintf(bw, "    <properties>\n      <property name=\"file\" value=%s/>\n      <property name=\"profile\" value=%s/>\n      <property name=\"frames\" value=\"%d\"/>\n      <property name=\"skipped_lines\" value=\"%d\"/>\n    </properties>\n",
		junitAttr(name), junitAttr(rep.Profile.String()), rep.Frames, rep.Skipped)
	writeJUnitHeader(bw, f, rep, name)
	for _, c := range codes {
		writeJUnitCase(bw, c, byCode[c], failing(byCode[c]), rep, name)
	}
	bw.WriteString("  </testsuite>\n</testsuites>\n")
	return bw.Flush()
}

// junitClass is the classname of every test case.
const junitClass = "rpctap.check"

// junitAttr is s as a quoted XML attribute value.
func junitAttr(s string) string { return `"` + sessions.MarkupAttr(s) + `"` }

// Element text keeps its line breaks. Peer text in it went through
// classify's escaping, which leaves characters XML 1.0 refuses (U+FFFE,
// U+FFFF); sessions.MarkupText writes those as escapes.
var junitText = sessions.MarkupText

// writeJUnitHeader writes the test case of the file's header, named
// (escaped) name: its faults fail it unless f.FailOn is 0.
func writeJUnitHeader(bw *bufio.Writer, f File, rep *Report, name string) {
	fmt.Fprintf(bw, "    <testcase classname=%s name=\"header\">", junitAttr(junitClass))
	if len(rep.HeaderFaults) > 0 {
		tag := "system-out"
		if f.FailOn != 0 {
			tag = "failure"
			fmt.Fprintf(bw, "\n      <failure message=%s type=\"error\">", junitAttr(fmt.Sprintf("%d faults in the session header", len(rep.HeaderFaults))))
		} else {
			bw.WriteString("\n      <system-out>")
		}
		for _, h := range rep.HeaderFaults {
			bw.WriteString(junitText(name + ":1: " + classify.EscapeString(h, 400) + "\n"))
		}
		fmt.Fprintf(bw, "</%s>\n    ", tag)
	}
	bw.WriteString("</testcase>\n")
}

// writeJUnitCase writes the test case of the code c, whose findings are
// rep.Findings[idx...], each by line: a failure when failing, else the
// case's system-out.
func writeJUnitCase(bw *bufio.Writer, c classify.Code, idx []int, failing bool, rep *Report, name string) {
	fmt.Fprintf(bw, "    <testcase classname=%s name=%s>", junitAttr(junitClass), junitAttr(c.String()))
	if len(idx) == 0 {
		bw.WriteString("</testcase>\n")
		return
	}
	if failing {
		worst := classify.Severity(0)
		for _, i := range idx {
			worst = max(worst, rep.Findings[i].Severity)
		}
		fmt.Fprintf(bw, "\n      <failure message=%s type=%s>", junitAttr(fmt.Sprintf("%d %s findings", len(idx), c)), junitAttr(worst.String()))
	} else {
		bw.WriteString("\n      <system-out>")
	}
	for _, i := range idx {
		cf := &rep.Findings[i]
		line := fmt.Sprintf("%s:%d: %s: %s", name, cf.Line, cf.Severity, cf.Message)
		if cf.Method != "" {
			line += " [" + classify.EscapeString(cf.Method, 80) + "]"
		}
		if cf.Related != 0 {
			line += fmt.Sprintf(" (see line %d)", cf.Related)
		}
		if cf.ByUser {
			line += " (yours: about a frame you injected or edited)"
		}
		bw.WriteString(junitText(line + "\n"))
		if cf.Frame != "" {
			bw.WriteString(junitText("    " + cf.Frame + "\n"))
		}
		if !cf.Fate.IsZero() {
			bw.WriteString(junitText("    fate: " + cf.Fate.Text() + "\n"))
			if cf.Fate.Original != nil {
				bw.WriteString(junitText("    original: " + classify.Escape(cf.Fate.Original, 160) + "\n"))
			}
		}
	}
	if failing {
		bw.WriteString("</failure>\n    </testcase>\n")
	} else {
		bw.WriteString("</system-out>\n    </testcase>\n")
	}
}
