package export

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// The Markdown export: a transcript for issues and PRs.

func (s *exporter) markdown(out io.Writer) error {
	stats, err := s.stats()
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 64<<10)
	fmt.Fprintf(w, "# rpctap session %s\n\n", mdCode(s.sessionName(), false))
	s.mdSummary(w, stats)
	fmt.Fprintf(w, "\n## Transcript\n")
	var b []byte
	err = s.walk(func(pos int, e *sessions.Entry, ev *sessions.Event) error {
		b = s.mdRecord(b[:0], pos, e, ev)
		_, err := w.Write(b)
		if cap(b) > sessions.MaxKeptLine { // a huge frame's buffers are not kept
			b, s.body, s.buf = nil, nil, nil
		}
		return err
	}, func() error {
		frames, from, to := s.leftOut()
		_, err := fmt.Fprintf(w, "\n> **%s left out here** (lines %d–%d of %d records): `rpctap export --max-frames N` shows more.\n",
			sessions.Count(frames, "frame"), from, to, s.counts.Entries)
		return err
	})
	if err != nil {
		return err
	}
	return w.Flush()
}

func (s *exporter) mdSummary(w io.Writer, stats []MethodStats) {
	c := s.counts
	fmt.Fprintf(w, "| | |\n|---|---|\n")
	if s.opts.Source != "" {
		fmt.Fprintf(w, "| file | %s |\n", mdCode(s.opts.Source, true))
	}
	if s.hasHdr {
		fmt.Fprintf(w, "| session | %s |\n", mdCode(s.red.MaskString(s.hdr.ID), true))
		fmt.Fprintf(w, "| command | %s |\n", mdCode(s.command(), true))
		fmt.Fprintf(w, "| started | %s |\n", s.hdr.Started.UTC().Format("2006-01-02 15:04:05.000 UTC"))
	}
	fmt.Fprintf(w, "| profile | %s, framing %s |\n", s.x.Profile(), mdText(classify.EscapeString(s.hdr.FramingOrDefault(), 20)))
	fmt.Fprintf(w, "| records | %d: %d host → server, %d server → host, %d stderr, %s |\n", c.Entries, c.H2S, c.S2H, c.Err, sessions.Count(c.Events, "event"))
	fmt.Fprintf(w, "| findings | %s |\n", findingsSummary(c))
	if s.res.Folded() {
		fmt.Fprintf(w, "| shown | %d of %d records (`--max-frames`) |\n", s.res.Shown, s.res.Records)
	}
	if len(stats) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Methods\n\n| method | requests | notifications | answered | errors | p50 | p95 | p99 |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, m := range stats {
		lat := "– | – | –"
		if m.Answered > 0 {
			lat = fmt.Sprintf("%s | %s | %s", ms(m.P50), ms(m.P95), ms(m.P99))
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %s |\n", mdCode(s.red.MaskString(m.Method), true), m.requests(), m.Notifications, m.Answered, m.Errors, lat)
	}
}

// mdRecord appends one record of the transcript.
func (s *exporter) mdRecord(b []byte, pos int, e *sessions.Entry, ev *sessions.Event) []byte {
	b = strconv.AppendInt(append(b, "\n**line "...), e.Seq, 10)
	b = appendMS(append(b, "** · +"...), time.Duration(e.T)*time.Microsecond)
	b = append(b, " · "...)
	if !e.IsFrame() {
		return append(append(b, mdText(s.eventText(ev))...), '\n')
	}
	b = s.appendFrameTitle(b, e, ev, appendMdCode)
	b = append(b, "\n\n"...)
	// The body is built in s.body, reused from record to record.
	lang := "json"
	body, ok := []byte(nil), false
	if e.Dir != classify.Err {
		body, ok = s.prettyFrame(s.body[:0], e, ev.Frame)
	}
	if !ok {
		lang = "text"
		body = classify.AppendEscaped(s.body[:0], ev.Frame, 4*s.cuts.String)
	}
	s.body = body
	b = appendFence(b, lang, body)
	if ev.Original != nil {
		// An edit: what came in, before the user's bytes went out.
		orig, isJSON := s.original(nil, ev.Original)
		lang = "text"
		if isJSON {
			lang = "json"
		}
		b = appendFence(append(b, "\nThe original, as it came in before the user's edit:\n\n"...), lang, orig)
	}
	if e.Codes != 0 {
		b = append(b, '\n')
		for _, f := range s.findings(pos) {
			b = fmt.Appendf(b, "> **%s** `%s`: %s", f.Severity, f.Code, mdText(classify.EscapeString(f.Message, 0)))
			if f.Member >= 0 {
				b = fmt.Appendf(b, " (batch member %d)", f.Member)
			}
			if f.Related != 0 {
				b = fmt.Appendf(b, " (see line %d)", f.Related)
			}
			b = append(b, "\n>\n"...)
		}
		b = b[:len(b)-2]
	}
	return b
}

// appendFence appends body as a fenced Markdown code block in lang.
func appendFence(b []byte, lang string, body []byte) []byte {
	fence := strings.Repeat("`", max(3, longestRun(body, '`')+1))
	b = append(b, fence...)
	b = append(b, lang...)
	b = append(b, '\n')
	b = append(b, body...)
	b = append(b, '\n')
	b = append(b, fence...)
	return append(b, '\n')
}

// appendFrameTitle appends what a frame is: its direction, kind, method
// and id, its pair; code appends peer text quoted for the format.
func (s *exporter) appendFrameTitle(t []byte, e *sessions.Entry, ev *sessions.Event, code func([]byte, string) []byte) []byte {
	t = append(t, dirText(e.Dir)...)
	if e.Dir == classify.Err {
		return t
	}
	t = append(t, " · "...)
	t = append(t, e.Kind.String()...)
	if e.Method != "" {
		t = code(append(t, ' '), s.red.MaskString(e.Method))
	}
	if e.ID != "" {
		t = code(append(t, " · id "...), s.red.MaskString(e.ID))
	}
	switch {
	case e.Pair != 0 && e.Kind == classify.KindResponse:
		t = strconv.AppendInt(append(t, " · answers line "...), e.Pair, 10)
		t = appendMS(append(t, " after "...), e.Latency)
	case e.Pair != 0:
		t = strconv.AppendInt(append(t, " · answered on line "...), e.Pair, 10)
		t = appendMS(append(t, " after "...), e.Latency)
	case e.Kind == classify.KindRequest && e.Status != sessions.StatusOK && e.Status != sessions.StatusError:
		t = append(append(t, " · "...), e.Status.String()...)
	}
	if h := sessions.HTTPSummary(ev.HTTP); h != "" {
		t = code(append(t, " · HTTP "...), s.red.MaskString(h))
	}
	if fate := sessions.FateOf(ev).Text(); fate != "" {
		t = append(append(t, " · "...), fate...)
	}
	if ev.Redacted {
		t = append(t, " · redacted"...)
	}
	return t
}

// eventText says what an event record is, for people.
func (s *exporter) eventText(ev *sessions.Event) string {
	switch ev.Kind {
	case sessions.EventExit:
		switch {
		case ev.Signal != "":
			return "the server was killed by " + classify.EscapeString(ev.Signal, 40)
		case ev.Code != nil:
			return fmt.Sprintf("the server exited with status %d", *ev.Code)
		}
		return "the server exited"
	case sessions.EventStart:
		return "the server started"
	case sessions.EventGap:
		return fmt.Sprintf("%s %s could not be recorded", sessions.Count(int(ev.Missing), "frame"), dirText(ev.Dir))
	case sessions.EventNote:
		return "note: " + s.text(ev.Text, 400)
	}
	return "event " + classify.EscapeString(ev.Kind, 40)
}

func dirText(d classify.Direction) string {
	switch d {
	case classify.H2S:
		return "host → server"
	case classify.S2H:
		return "server → host"
	case classify.Err:
		return "server stderr"
	}
	return d.String()
}

// appendMdCode appends mdCode(s, false).
func appendMdCode(dst []byte, s string) []byte {
	plain := s != ""
	for i := 0; i < len(s) && plain; i++ {
		plain = s[i] > 0x20 && s[i] < 0x7f && s[i] != '`' && s[i] != '\\'
	}
	if plain && len(s) <= 120 {
		return append(append(append(dst, '`'), s...), '`')
	}
	return append(dst, mdCode(s, false)...)
}

// mdCode quotes peer text as Markdown inline code, escaped for a
// terminal; in a table cell, pipes are escaped too.
func mdCode(s string, cell bool) string {
	s = classify.EscapeString(s, 120)
	if cell {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	fence := strings.Repeat("`", longestRun([]byte(s), '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || s == "" {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdText escapes text (already escaped for a terminal) for Markdown
// prose: what could start emphasis, a link, code, HTML or a table cell is
// backslash-escaped.
func mdText(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch c {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '~', '#', '!':
			b.WriteByte('\\')
		case '&':
			b.WriteString("&amp;")
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

func longestRun(b []byte, c byte) int {
	if bytes.IndexByte(b, c) < 0 {
		return 0
	}
	best, n := 0, 0
	for _, x := range b {
		if x == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// ms writes a duration in milliseconds, to the microsecond.
func ms(d time.Duration) string { return string(appendMS(nil, d)) }

func appendMS(b []byte, d time.Duration) []byte {
	return append(strconv.AppendFloat(b, float64(d.Microseconds())/1000, 'f', -1, 64), " ms"...)
}

// findingsSummary counts the records by their worst finding, for an
// export's summary: the peers', then the user's own, apart.
func findingsSummary(c sessions.Counts) string {
	out := fmt.Sprintf("%s, %s, %s (records by their worst)", sessions.Count(c.Errors, "error"), sessions.Count(c.Warnings, "warning"), sessions.Count(c.Infos, "note"))
	if n := c.UserErrors + c.UserWarnings + c.UserInfos; n > 0 {
		out += fmt.Sprintf("; apart, %s about frames the user injected or edited", sessions.Count(n, "record"))
	}
	return out
}

// The Mermaid export: a sequenceDiagram, one arrow per frame.

func (s *exporter) mermaid(out io.Writer) error {
	w := bufio.NewWriterSize(out, 64<<10)
	fmt.Fprintf(w, "sequenceDiagram\n    participant H as Host\n")
	if s.tapActs() {
		// Frames the user wrote, and frames that went no further than
		// the tap, start or end at rpctap, between the peers.
		fmt.Fprintf(w, "    participant R as rpctap\n")
	}
	fmt.Fprintf(w, "    participant S as %s\n", mmdText("Server "+classify.EscapeString(s.sessionName(), 60), 60))
	err := s.walk(func(pos int, e *sessions.Entry, ev *sessions.Event) error {
		s.mermaidRecord(w, pos, e, ev)
		return nil
	}, func() error {
		frames, from, to := s.leftOut()
		fmt.Fprintf(w, "    Note over H,S: %s\n", mmdText(fmt.Sprintf("%s left out (lines %d to %d); rpctap export --max-frames N shows more", sessions.Count(frames, "frame"), from, to), 0))
		return nil
	})
	if err != nil {
		return err
	}
	return w.Flush()
}

func (s *exporter) mermaidRecord(w io.Writer, pos int, e *sessions.Entry, ev *sessions.Event) {
	if !e.IsFrame() {
		fmt.Fprintf(w, "    Note over H,S: %s\n", mmdText(fmt.Sprintf("line %d: %s", e.Seq, s.eventText(ev)), 120))
		return
	}
	if e.Dir == classify.Err {
		fmt.Fprintf(w, "    Note right of S: %s\n", mmdText(fmt.Sprintf("line %d stderr: %s", e.Seq, classify.Escape(ev.Frame, 80)), 0))
		return
	}
	from, to := "H", "S"
	if e.Dir == classify.S2H {
		from, to = "S", "H"
	}
	fate := sessions.FateOf(ev)
	switch {
	case fate.Src == sessions.SrcInject:
		from = "R" // the user wrote it: it comes from rpctap
	case !fate.Delivered():
		to = "R" // dropped, answered in place, captured: it went no further
	}
	arrow := "->>"
	label := fmt.Sprintf("%d %s", e.Seq, e.Kind)
	switch e.Kind {
	case classify.KindResponse:
		arrow = "-->>"
		if e.Status == sessions.StatusError {
			arrow = "--x"
			label = fmt.Sprintf("%d error", e.Seq)
		} else {
			label = fmt.Sprintf("%d result", e.Seq)
		}
	case classify.KindNotification:
		arrow = "-)"
	case classify.KindRequest, classify.KindBatch:
	default:
		arrow = "-x"
	}
	if e.Method != "" {
		label += " " + classify.EscapeString(s.red.MaskString(e.Method), 60)
	}
	if e.ID != "" {
		label += " id " + classify.EscapeString(s.red.MaskString(e.ID), 30)
	}
	if e.Kind == classify.KindResponse && e.Pair != 0 {
		label += " (" + ms(e.Latency) + ")"
	}
	if words := fate.Words(); len(words) > 0 {
		label += " [" + strings.Join(words, ", ")
		if fate.HeldFor > 0 {
			label += " " + fate.HeldFor.Round(time.Millisecond).String()
		}
		label += "]"
	}
	if fate.Held == sessions.HeldDropped || fate.Held == sessions.HeldAnswered {
		arrow = "-x" // its receiver never read it
		if e.Kind == classify.KindResponse {
			arrow = "--x"
		}
	}
	fmt.Fprintf(w, "    %s%s%s: %s\n", from, arrow, to, mmdText(label, 0))
	if fate.Held != "" || fate.Captured || fate.Partial {
		// What the label's words stand for, and how long it was held.
		fmt.Fprintf(w, "    Note over %s: %s\n", noteOver(from, to), mmdText(fmt.Sprintf("line %d %s", e.Seq, fate.Text()), 120))
	}
	if ev.Original != nil {
		fmt.Fprintf(w, "    Note over %s: %s\n", noteOver(from, to), mmdText(fmt.Sprintf("line %d before the edit: %s", e.Seq, classify.Escape(ev.Original, 100)), 140))
	}
	if e.Codes != 0 {
		for _, f := range s.findings(pos) {
			fmt.Fprintf(w, "    Note over H,S: %s\n", mmdText(fmt.Sprintf("%s %s: %s", f.Severity, f.Code, classify.EscapeString(f.Message, 0)), 120))
		}
	}
}

// noteOver names the participants a note about an arrow from one to the
// other spans, left to right.
func noteOver(from, to string) string {
	order := map[string]int{"H": 0, "R": 1, "S": 2}
	if order[from] > order[to] {
		from, to = to, from
	}
	return from + "," + to
}

// tapActs reports whether a frame of the session starts or ends at the
// tap: one the user injected, or one that never reached its receiver.
func (s *exporter) tapActs() bool {
	var chunk []sessions.Entry
	for pos := 0; pos < s.counts.Entries; pos += len(chunk) {
		chunk = s.x.Entries(chunk[:0], pos, pos+4096)
		for i := range chunk {
			if f := chunk[i].Fate(); f.Src == sessions.SrcInject || !f.Delivered() {
				return true
			}
		}
	}
	return false
}

// mmdText makes text (already escaped for a terminal) safe in a Mermaid
// label: letters, digits, spaces and
// a few marks stay; every other character is written as Mermaid's entity
// code (#35; for #), so that nothing in it is read as syntax. It is cut at
// max characters (max > 0).
func mmdText(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, c := range s {
		if max > 0 && n >= max {
			b.WriteString("…")
			break
		}
		n++
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == ' ', c == '.', c == '/', c == '_', c == '(', c == ')', c == ',', c == '\'', c == '-', c == ':', c == '+', c == '=':
			b.WriteRune(c)
		default:
			fmt.Fprintf(&b, "#%d;", c)
		}
	}
	return b.String()
}
