package tui

import (
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// This file holds the traffic table's columns: their widths, fitted to
// the pane and to the ids and methods shown.

// Column widths.
const (
	colSeq       = 7
	colTime      = 10
	colWall      = 12
	colKind      = 12
	colIDMin     = 8  // an id cut to this keeps its end, where ids differ
	colIDMax     = 24 // the widest an id column grows with the ids it shows
	colLat       = 8
	colSize      = 8 // FormatSize is at most eight cells
	colFlags     = 24
	colFlagsMin  = 11 // "INVALID E", or in short words "UNM TMO W"
	colMethod    = 12 // the method gets at least this before the table drops columns
	colMethodMax = 48
)

// contentWidths are the widest id and method (escaped) the table has to
// show.
type contentWidths struct{ id, method int }

// measureNew takes the ids and methods of the entries indexed since the
// last call into the content widths, a few thousand entries a lock.
func (p *trafficPane) measureNew(x *sessions.Index) {
	for n := x.Len(); p.measured < n; {
		p.measure = x.Entries(p.measure[:0], p.measured, min(p.measured+4096, n))
		for i := range p.measure {
			e := &p.measure[i]
			p.content.id = max(p.content.id, shownWidth(e.ID, colIDMax))
			p.content.method = max(p.content.method, shownWidth(e.Method, colMethodMax))
		}
		p.measured += len(p.measure)
	}
}

// shownWidth is the cells s takes escaped, up to most: printable ASCII,
// as ids and methods nearly always are, is its length, and is not
// escaped to be measured.
func shownWidth(s string, most int) int {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e || s[i] == '\\' {
			return min(lipgloss.Width(classify.EscapeString(s, most*4)), most)
		}
	}
	return min(len(s), most)
}

// columns are the table's column widths at one width; a width of 0 drops
// the column.
type columns struct {
	time, kind, id, method, lat, size, flags int
}

// layoutColumns gives each column its width: the id and the method as
// wide as the widest the table shows (cw), within bounds. When the table
// is narrow the columns give way, in turn, until the method has room:
// the flags narrow (a row's badges go to short words when the long ones
// do not fit), the size drops, the id narrows (an id cut keeps its end),
// the latency drops, the kind narrows, the id and then the time drop;
// past that the method is cut short. What is left over goes to the
// flags, at the end of the row.
func layoutColumns(width int, wall bool, cw contentWidths) columns {
	id := min(max(cw.id, len("id")), colIDMax)
	method := min(max(cw.method, colMethod), colMethodMax)
	c := columns{time: colTime, kind: colKind, id: id, lat: colLat, size: colSize, flags: colFlags}
	if wall {
		c.time = colWall
	}
	giveWay := []func(){
		func() { c.flags = colFlagsMin },
		func() { c.size = 0 },
		func() { c.id = min(c.id, colIDMin) },
		func() { c.lat = 0 },
		func() { c.kind = 8 },
		func() { c.id = 0 },   // a pair shows in the detail pane
		func() { c.time = 0 }, // as does the time
	}
	for _, step := range giveWay {
		if c.room(width) >= colMethod {
			break
		}
		step()
	}
	// The method as wide as the widest, the flags giving way for it.
	c.flags = max(min(c.flags, width-c.used()-method), colFlagsMin)
	c.method = max(min(c.room(width), method), 4)
	// What the method does not take, the flags do.
	c.flags = max(width-c.used()-c.method, c.flags)
	return c
}

// used is the width of every column but the method (and their spaces).
func (c columns) used() int {
	n := colSeq + 1 + 1 + 1 + c.kind + 1 + 1
	for _, w := range []int{c.time, c.id, c.lat, c.size} {
		if w > 0 {
			n += w + 1
		}
	}
	return n
}

// column is text left-aligned in a column w wide and its space; nothing
// for a column dropped (w 0).
func column(w int, text string) string {
	if w == 0 {
		return ""
	}
	return fmt.Sprintf("%-*s ", w, text)
}

// room is the width left for the method, the flags having theirs.
func (c columns) room(width int) int { return width - c.used() - c.flags }

// cutID fits an id, escaped, in w cells: cut, it keeps its end, where
// the ids of one peer differ ("rpctap-host-12" and "rpctap-host-13").
// Only the id's last bytes are escaped (four a cell, more than any
// character takes), so a long id costs no more than a short one to
// draw, and its cut shows the id's own end.
func cutID(id string, w int) string {
	if w <= 0 {
		return ""
	}
	cut := false
	if from := len(id) - w*4; from > 0 {
		for n := 0; n < utf8.UTFMax-1 && !utf8.RuneStart(id[from]); n++ {
			from++
		}
		id, cut = id[from:], true
	}
	s := classify.EscapeString(id, 0)
	n := lipgloss.Width(s)
	if n > w || cut && n == w {
		return ansi.TruncateLeft(s, n-w+1, "…")
	}
	if cut {
		return "…" + s
	}
	return s
}

// latencyCell is what the latency column shows of an entry, at most
// colLat cells: a response's latency (an injected request's too: its
// answer is captured, so the pair is the whole story). The final answer
// of a multi round-trip call shows the call's, from its first request,
// marked with its rounds ("×2 3.1ms"); each input_required answer shows
// its own round's.
func latencyCell(e *sessions.Entry) string {
	if e.Kind != classify.KindResponse && (e.Src != sessions.SrcInject || e.Pair == 0) {
		return ""
	}
	if c := e.Call; c.Origin != 0 && !c.InputRequired && e.Kind == classify.KindResponse && c.CallLatency > 0 {
		mark := "×+" // past nine rounds: the detail pane says how many
		if c.Round >= 2 && c.Round <= 9 {
			mark = "×" + strconv.Itoa(c.Round)
		}
		return mark + " " + shortLatency(c.CallLatency)
	}
	return fmtLatency(e.Latency)
}

// shortLatency is a latency in at most five cells, beside a mark in the
// latency column: "850µs", "3.1ms", "120ms", "2.3s", "95s", "17m", "40h".
func shortLatency(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d/time.Microsecond)
	case d < 9950*time.Microsecond: // below what rounds to 10.0ms
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%dms", d/time.Millisecond)
	case d < 9950*time.Millisecond:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < 1000*time.Second:
		return fmt.Sprintf("%ds", d/time.Second)
	case d < 1000*time.Minute:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%dh", min(d/time.Hour, 9999))
}
