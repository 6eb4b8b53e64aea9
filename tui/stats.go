package tui

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// statsPane shows, per method, how many calls, how many failed, latency
// percentiles and a latency histogram; it is fed incrementally. A multi
// round-trip call counts once, with its latency from the first request
// to the final answer.
type statsPane struct {
	c       *common
	scanned int
	methods map[string]*methodStats
	order   []string
	sel     int
	width   int
	height  int
	// frames per second of session time, for the header sparkline
	rate []float64
}

type methodStats struct {
	name     string
	calls    int
	errors   int
	lat      []time.Duration
	sorted   bool
	hist     [7]int
	p50, p95 time.Duration
	p99      time.Duration
}

// latencyBuckets are the histogram's upper bounds.
var latencyBuckets = []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second, 10 * time.Second, time.Minute}

func newStatsPane(c *common) *statsPane {
	return &statsPane{c: c, methods: map[string]*methodStats{}}
}

func (p *statsPane) SetSize(w, h int) { p.width, p.height = w, h }

func (p *statsPane) sync(x *sessions.Index) {
	n := x.Len()
	for ; p.scanned < n; p.scanned++ {
		e := x.At(p.scanned)
		if e.Event != "" {
			continue
		}
		sec := int(e.T / 1e6)
		for len(p.rate) <= sec && len(p.rate) < 1<<20 {
			p.rate = append(p.rate, 0)
		}
		if sec < len(p.rate) {
			p.rate[sec]++
		}
		if e.Kind != classify.KindResponse || e.Method == "" || e.Call.InputRequired {
			continue // an input_required answer: the call goes on in a retry, whose answer counts it once
		}
		m := p.methods[e.Method]
		if m == nil {
			m = &methodStats{name: e.Method}
			p.methods[e.Method] = m
			p.order = append(p.order, e.Method)
		}
		m.calls++
		if e.Status == sessions.StatusError {
			m.errors++
		}
		lat := e.Latency
		if e.Call.Origin != 0 && e.Call.CallLatency > 0 {
			lat = e.Call.CallLatency // a multi round-trip call's, from its first request
		}
		if lat > 0 {
			m.lat = append(m.lat, lat)
			m.sorted = false
			b := sort.Search(len(latencyBuckets), func(i int) bool { return lat <= latencyBuckets[i] })
			m.hist[b]++
		}
	}
	sort.Slice(p.order, func(i, j int) bool { return p.methods[p.order[i]].calls > p.methods[p.order[j]].calls })
}

func (m *methodStats) percentiles() {
	if m.sorted || len(m.lat) == 0 {
		return
	}
	slices.Sort(m.lat)
	pick := func(q float64) time.Duration { return m.lat[min(int(q*float64(len(m.lat))), len(m.lat)-1)] }
	m.p50, m.p95, m.p99 = pick(0.50), pick(0.95), pick(0.99)
	m.sorted = true
}

// Update takes the pane's messages: its keys while it has focus, and
// the view's tick.
func (p *statsPane) Update(msg tea.Msg) (intent, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return p.key(msg), nil
	case indexTickMsg:
		p.sync(msg.x)
	}
	return intent{}, nil
}

// key handles a key while the pane has focus.
func (p *statsPane) key(msg tea.KeyMsg) intent {
	k := p.c.keys
	switch {
	case key.Matches(msg, k.Up):
		p.sel = max(p.sel-1, 0)
	case key.Matches(msg, k.Down):
		p.sel = min(p.sel+1, max(len(p.order)-1, 0))
	}
	return intent{}
}

// ShortHelp is the footer while the stats show.
func (p *statsPane) ShortHelp() []key.Binding {
	k := p.c.keys
	return []key.Binding{k.Up, k.Down, k.LeaveStats, k.Help, k.Quit}
}

// FullHelp is the ? screen while the pane has focus: the view's keys.
func (p *statsPane) FullHelp() [][]key.Binding { return p.c.keys.FullHelp() }

// statsHist is the height of the latency histogram and its title.
const statsHist = 2 + 7

func (p *statsPane) View() string {
	s := p.c.styles
	if len(p.order) == 0 {
		return s.Dim.Render("no answered requests yet")
	}
	var b strings.Builder
	nameW := max(min(p.width-46, 60), 12)
	b.WriteString(s.Dim.Render(truncate(fmt.Sprintf("%-*s %7s %7s %9s %9s %9s", nameW, "method", "calls", "errors", "p50", "p95", "p99"), p.width)))
	// The table gets what the histogram leaves, and scrolls to keep the
	// selected method on screen.
	showHist := p.height >= 1+statsHist+2
	rows := p.height - 1
	if showHist {
		rows -= statsHist
	}
	if len(p.order) > rows {
		rows = max(rows-1, 1) // a line says how many more
	}
	top := min(max(p.sel-rows+1, 0), max(len(p.order)-rows, 0))
	for i := top; i < len(p.order) && i < top+rows; i++ {
		name := p.order[i]
		m := p.methods[name]
		m.percentiles()
		line := truncate(fmt.Sprintf("%-*s %7d %7d %9s %9s %9s", nameW, truncate(classify.EscapeString(name, 128), nameW), m.calls, m.errors,
			fmtLatency(m.p50), fmtLatency(m.p95), fmtLatency(m.p99)), p.width)
		if i == p.sel {
			line = s.Selected.Render(padRight(line, p.width))
		}
		b.WriteString("\n" + line)
	}
	if rest := len(p.order) - rows; rest > 0 {
		b.WriteString("\n" + s.Dim.Render(fmt.Sprintf("%d of %d methods; ↑/↓ scroll", rows, len(p.order))))
	}
	if p.sel < len(p.order) && showHist {
		m := p.methods[p.order[p.sel]]
		b.WriteString("\n\n" + truncate(s.Title.Render("Latency of "+classify.EscapeString(m.name, 128)), p.width) + "\n")
		maxN := 0
		for _, n := range m.hist {
			maxN = max(maxN, n)
		}
		labels := []string{"≤1ms", "≤10ms", "≤100ms", "≤1s", "≤10s", "≤1m", ">1m"}
		for i, n := range m.hist {
			b.WriteString(fmt.Sprintf("%7s %s %d\n", labels[i], s.Bar.Render(hbar(n, maxN, max(p.width-20, 10))), n))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
