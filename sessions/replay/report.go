package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// A HostRun is what a host report says of the run besides its calls: the
// recording played (File), the server's command line as shown (masked as
// the session's header masks it), where the run's session was recorded
// ("" when it was not), and the server's exit status. The command fills
// it from the tap's Result.
type HostRun struct {
	File     string
	Argv     []string
	Session  string
	ExitCode int
}

// WriteHostText writes rep as rpctap replay --as-host's text report on
// run: a line a request with its outcome and times, and what changed in
// its answer; the notifications; the counts; and how the server ended.
func WriteHostText(out io.Writer, run HostRun, rep *HostReport) {
	w := bufio.NewWriter(out)
	defer w.Flush()
	fmt.Fprintf(w, "replay of %s against %s\n", classify.EscapeString(run.File, 200), classify.EscapeString(strings.Join(run.Argv, " "), 200))
	// One line a request, of a report that may have a line for each of
	// 100,000 requests: written with appends, not fmt.
	name := func(c *CallResult) string {
		if c.Name != "" {
			return classify.EscapeString(c.Method, 60) + " " + classify.EscapeString(c.Name, 80)
		}
		return classify.EscapeString(c.Method, 60)
	}
	width := 0
	for i := range rep.Calls {
		width = max(width, len(name(&rep.Calls[i])))
	}
	var b []byte
	for i := range rep.Calls {
		c := &rep.Calls[i]
		what := "(the server's request)"
		if !c.Server {
			what = "id " + classify.EscapeString(c.ID, 40)
		}
		b = append(b[:0], "  line "...)
		b = appendField(b, strconv.AppendInt(nil, c.Line, 10), 5)
		b = append(b, ' ')
		b = appendField(b, []byte(name(c)), width)
		b = append(b, "  "...)
		b = appendField(b, []byte(what), 8)
		b = append(b, ' ')
		b = appendField(b, []byte(c.Outcome), 9)
		if c.Outcome != OutcomeMissing && !c.Server {
			b = append(b, "  ("...)
			b = append(b, roundDur(c.Now).String()...)
			b = append(b, ", recorded "...)
			b = append(b, roundDur(c.Recorded).String()...)
			b = appendRounds(b, c)
			b = append(b, ')')
		}
		w.Write(append(b, '\n'))
		for _, ch := range c.Changes {
			fmt.Fprintf(w, "      %s\n", sessions.DescribeChange(ch, "recorded", "now"))
		}
	}
	if rep.SameNotListed > 0 {
		fmt.Fprintf(w, "  (and %s answered the same, not listed)\n", sessions.Count(rep.SameNotListed, "more request"))
	}
	if n := rep.Notifications; n != nil {
		if n.Same {
			fmt.Fprintf(w, "  notifications: the same %d, in the same order\n", n.Now)
		} else {
			fmt.Fprintf(w, "  notifications: %d recorded, %d now; the first difference is at #%d: %s recorded, %s now\n",
				n.Recorded, n.Now, n.At+1, orNone(n.Was), orNone(n.Is))
		}
	}
	fmt.Fprintf(w, "%s: %d same, %d changed, %d missing, %d new %s\n", rep.counted(), rep.Same, rep.Changed, rep.Missing, rep.NewErrors,
		map[bool]string{true: "error", false: "errors"}[rep.NewErrors == 1])
	if run.ExitCode != 0 {
		fmt.Fprintf(w, "the server exited with status %d\n", run.ExitCode)
	}
	if run.Session != "" {
		fmt.Fprintf(w, "session recorded in %s\n", classify.EscapeString(run.Session, 300))
	}
}

// appendRounds appends, for a multi round-trip call, its rounds: ", 2
// rounds", or ", 1 round, recorded 2" when they differ.
func appendRounds(b []byte, c *CallResult) []byte {
	if c.Rounds == 0 && c.RecordedRounds == 0 {
		return b
	}
	b = append(b, ", "...)
	b = append(b, sessions.Count(c.Rounds, "round")...)
	if c.Rounds != c.RecordedRounds {
		b = append(b, ", recorded "...)
		b = strconv.AppendInt(b, int64(c.RecordedRounds), 10)
	}
	return b
}

// counted says how many requests the report is of: as calls when a multi
// round-trip call made several requests one ("3 calls, 4 requests").
func (r *HostReport) counted() string {
	calls := len(r.Calls) + r.SameNotListed
	if r.Retries == 0 {
		return sessions.Count(calls, "request")
	}
	return sessions.Count(calls, "call") + ", " + sessions.Count(calls+r.Retries, "request")
}

// appendField appends field padded with spaces to width runes, as fmt's
// %-*s does.
func appendField(b, field []byte, width int) []byte {
	b = append(b, field...)
	for n := utf8.RuneCount(field); n < width; n++ {
		b = append(b, ' ')
	}
	return b
}

// orNone is a notification's method for the report, "nothing" for none.
func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return classify.EscapeString(s, 80)
}

// roundDur rounds a call's time for the text report: to 10 ms from a
// second, to 0.1 ms from a millisecond, else to the microsecond.
func roundDur(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// A HostJSONCall is a CallResult in the JSON report.
type HostJSONCall struct {
	Line       int64                 `json:"line"`
	Method     string                `json:"method"`
	Name       string                `json:"name,omitempty"`
	ID         json.RawMessage       `json:"id,omitempty"`
	Server     bool                  `json:"server_request,omitempty"`
	Outcome    string                `json:"outcome"`
	Changes    []sessions.ChangeJSON `json:"changes,omitempty"`
	RecordedMS float64               `json:"recorded_ms"`
	NowMS      float64               `json:"now_ms"`
	// The rounds of a multi round-trip call.
	Rounds         int `json:"rounds,omitempty"`
	RecordedRounds int `json:"recorded_rounds,omitempty"`
}

// HostJSON is the document WriteHostJSON writes.
type HostJSON struct {
	Recording     string             `json:"recording"`
	Argv          []string           `json:"argv"`
	Session       string             `json:"session,omitempty"`
	ExitCode      int                `json:"exit_code"`
	Differs       bool               `json:"differs"`
	Counts        map[string]int     `json:"counts"`
	Calls         []HostJSONCall     `json:"calls"`
	SameNotListed int                `json:"same_not_listed,omitempty"`
	Notifications *NotificationOrder `json:"notifications,omitempty"`
}

// WriteHostJSON writes rep as rpctap replay --as-host's JSON report on
// run: one indented document, through sessions.PrintJSON.
func WriteHostJSON(w io.Writer, run HostRun, rep *HostReport) {
	doc := HostJSON{Recording: run.File, Argv: run.Argv, Session: run.Session, ExitCode: run.ExitCode, Differs: rep.Differs(), Calls: []HostJSONCall{}, SameNotListed: rep.SameNotListed,
		Counts:        map[string]int{"same": rep.Same, "changed": rep.Changed, "missing": rep.Missing, "new_error": rep.NewErrors},
		Notifications: rep.Notifications}
	for _, c := range rep.Calls {
		jc := HostJSONCall{Line: c.Line, Method: c.Method, Name: c.Name, Server: c.Server, Outcome: c.Outcome,
			RecordedMS: float64(c.Recorded.Microseconds()) / 1000, NowMS: float64(c.Now.Microseconds()) / 1000, Rounds: c.Rounds, RecordedRounds: c.RecordedRounds}
		if c.ID != "" && json.Valid([]byte(c.ID)) {
			jc.ID = json.RawMessage(c.ID)
		}
		jc.Changes = sessions.ChangesJSON(c.Changes)
		doc.Calls = append(doc.Calls, jc)
	}
	sessions.PrintJSON(w, doc, true)
}
