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
// percentiles and a latency histogram; it is fed incrementally.
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
		if e.Kind != classify.KindResponse || e.Method == "" {
			continue
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
		if e.Latency > 0 {
			m.lat = append(m.lat, e.Latency)
			m.sorted = false
			b := sort.Search(len(latencyBuckets), func(i int) bool { return e.Latency <= latencyBuckets[i] })
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

func (p *statsPane) Update(msg tea.KeyMsg) intent {
	k := p.c.keys
	switch {
	case key.Matches(msg, k.Up):
		p.sel = max(p.sel-1, 0)
	case key.Matches(msg, k.Down):
		p.sel = min(p.sel+1, max(len(p.order)-1, 0))
	}
	return intent{}
}

func (p *statsPane) View() string {
	s := p.c.styles
	if len(p.order) == 0 {
		return s.Dim.Render("no answered requests yet")
	}
	var b strings.Builder
	b.WriteString(s.Dim.Render(fmt.Sprintf("%-32s %7s %7s %9s %9s %9s", "method", "calls", "errors", "p50", "p95", "p99")))
	rows := max(p.height-10, 3)
	for i, name := range p.order {
		if i >= rows {
			b.WriteString("\n" + s.Dim.Render(fmt.Sprintf("… %d more", len(p.order)-rows)))
			break
		}
		m := p.methods[name]
		m.percentiles()
		line := fmt.Sprintf("%-32s %7d %7d %9s %9s %9s", truncate(classify.EscapeString(name, 128), 32), m.calls, m.errors,
			fmtLatency(m.p50), fmtLatency(m.p95), fmtLatency(m.p99))
		if i == p.sel {
			line = s.Selected.Render(padRight(line, min(p.width, 80)))
		}
		b.WriteString("\n" + line)
	}
	if p.sel < len(p.order) {
		m := p.methods[p.order[p.sel]]
		b.WriteString("\n\n" + s.Title.Render("Latency of "+classify.EscapeString(m.name, 128)) + "\n")
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
