// Command liveview is the live view of .ci/bench/live: it attaches to a
// live tap with source.OpenLive, as "rpctap ui" does, and runs the real
// terminal UI (tui.New, a lipgloss renderer with true colour on io.Discard)
// in a Bubble Tea program fed by that source, so that the program's own
// tick picks up the index as in the real UI. While frames pour in it sends a
// key (j and k in turn) every -keys and times, per key, from handing the key
// to the program until View returns the screen the key changed; it times
// every tick (the program's sync of the index plus the View after it). The
// program's tick and detail messages are unexported: the probe knows them by
// their type names (tui.tickMsg, tui.detailLoadedMsg), and fails when it
// sees no tick, so a rename shows.
//
//	liveview -name NAME [-start-file FILE] [-frames N] [-cpuprofile FILE]
//
// It finds the tap by its --name, attaches, starts the program, then creates
// -start-file (the generator waits for it) and runs until the session ends.
// Then it compares the frames the index holds with -frames (what the
// generator sent) and with the session file (read with sessions.NewReader),
// and prints lines of key=value figures:
//
//	live     index_s2h= file_s2h= ui_s2h= fell_behind= lag_p99_ms= ...
//	keys     n= unchanged= p50_ms= p99_ms= max_ms= ...
//	ticks    n= p50_ms= p99_ms= max_ms= sync_p50_ms= ...
//	views    n= p50_ms= ...  (every View)
//	details  n= p50_ms= ...  (a key to the detail pane showing its frame)
//
// With -raw it follows the tap's session file to its end (as the tap
// announces it) without an index or a view, for reference (what a
// subscriber costs the tap alone):
//
//	live     raw_lines=
//
// With -open FILE it opens a recorded session instead, as "rpctap ui FILE"
// does, and prints when the program's first screen of rows was drawn and
// when the whole file was indexed, with the RSS then:
//
//	open     first_screen_s= first_rss_mb= loaded_s= synced_s= peak_rss_mb= entries=
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/source"
	"github.com/rpctap/rpctap/tap"
	"github.com/rpctap/rpctap/tui"
)

var (
	name       = flag.String("name", "", "the live tap's --name")
	startFile  = flag.String("start-file", "", "create this file once attached (the generator waits for it)")
	frames     = flag.Int64("frames", 0, "frames the generator sends (s2h), to check the count")
	keyEvery   = flag.Duration("keys", 50*time.Millisecond, "send a key this often (0: none)")
	width      = flag.Int("width", 160, "terminal width")
	height     = flag.Int("height", 48, "terminal height")
	timeout    = flag.Duration("timeout", 90*time.Second, "give up after this long")
	cpuprofile = flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	open       = flag.String("open", "", "open this recorded session instead of a live tap")
	first      = flag.Int("first", 20, "with -open: rows that make the first screen")
	raw        = flag.Bool("raw", false, "follow the session file without a view (reference)")
	trace      = flag.Bool("trace", false, "print the index's lag every 10 ms on stderr, and the goroutines once when the index stalls 400 ms")
)

func main() {
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	var err error
	switch {
	case *open != "":
		err = runOpen(*open)
	case *raw:
		err = runRaw()
	default:
		err = runLive()
	}
	if err != nil {
		pprof.StopCPUProfile()
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "liveview:", err)
	os.Exit(1)
}

// keyAt is a key with the time it was handed to the program.
type keyAt struct {
	key tea.KeyMsg
	at  time.Time
}

// probe wraps the UI's model: it passes every message on and times keys
// and ticks. Bubble Tea calls View right after each Update, on the same
// goroutine, so a key's latency ends when the View after it returns.
type probe struct {
	m tea.Model

	mu       sync.Mutex
	prev     string    // the last view
	keyT0    time.Time // a key was handled; its View is next
	tickT0   time.Time // a tick was handled; its View is next
	tickUpd  time.Duration
	detailT0 time.Time // a key's detail pane is loading
	detailIn bool      // the detail just arrived; its View is next
	keys     []time.Duration
	unchg    int
	details  []time.Duration
	ticks    []time.Duration // Update(tick) + View
	tickSync []time.Duration // Update(tick) alone
	views    []time.Duration // every View
	seenTick bool            // a tick was handled since reset

	// With -open: the first View after a tick that took in a screenful.
	src      *source.Source
	tickLen  int
	firstAt  time.Time
	firstTxt string
}

func (p *probe) Init() tea.Cmd { return p.m.Init() }

// msgName is a message's type; the program's tick and detail messages are
// unexported, so they are known by name.
func msgName(msg tea.Msg) string { return fmt.Sprintf("%T", msg) }

func (p *probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case keyAt:
		_, cmd = p.m.Update(msg.key)
		p.keyT0 = msg.at
		p.detailT0 = msg.at
		return p, cmd
	}
	switch msgName(msg) {
	case "tui.tickMsg":
		t := time.Now()
		p.tickLen = p.src.Index.Len() // sync takes in at least these
		_, cmd = p.m.Update(msg)
		p.tickT0, p.tickUpd = t, time.Since(t)
		p.seenTick = true
		return p, cmd
	case "tui.detailLoadedMsg":
		_, cmd = p.m.Update(msg)
		p.detailIn = !p.detailT0.IsZero()
		return p, cmd
	}
	_, cmd = p.m.Update(msg)
	return p, cmd
}

func (p *probe) View() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := time.Now()
	v := p.m.View()
	now := time.Now()
	p.views = append(p.views, now.Sub(t))
	if !p.keyT0.IsZero() {
		p.keys = append(p.keys, now.Sub(p.keyT0))
		if v == p.prev {
			p.unchg++
		}
		p.keyT0 = time.Time{}
	}
	if !p.tickT0.IsZero() {
		if p.firstAt.IsZero() && p.tickLen >= *first {
			p.firstAt, p.firstTxt = now, v
		}
		p.ticks = append(p.ticks, now.Sub(p.tickT0))
		p.tickSync = append(p.tickSync, p.tickUpd)
		p.tickT0 = time.Time{}
	}
	if p.detailIn {
		p.details = append(p.details, now.Sub(p.detailT0))
		p.detailIn, p.detailT0 = false, time.Time{}
	}
	p.prev = v
	return v
}

func (p *probe) lastView() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.prev
}

// waitTick waits until the program has handled a tick after now.
func (p *probe) waitTick(limit time.Duration) bool {
	p.mu.Lock()
	p.seenTick = false
	p.mu.Unlock()
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		p.mu.Lock()
		seen := p.seenTick && p.tickT0.IsZero() // and its View ran
		p.mu.Unlock()
		if seen {
			return true
		}
	}
	return false
}

// startUI runs the real model in a Bubble Tea program with no terminal.
func startUI(src *source.Source) (*probe, *tea.Program, <-chan error) {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor) // draw as for a real terminal
	p := &probe{m: tui.New(r, []*source.Source{src}), src: src}
	prog := tea.NewProgram(p, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignalHandler())
	done := make(chan error, 1)
	go func() {
		_, err := prog.Run()
		done <- err
	}()
	prog.Send(tea.WindowSizeMsg{Width: *width, Height: *height})
	return p, prog, done
}

func findTap(name string, limit time.Duration) (tap.Info, error) {
	end := time.Now().Add(limit)
	for {
		info, err := tap.FindTap(name)
		if err == nil {
			return info, nil
		}
		if time.Now().After(end) {
			return tap.Info{}, err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func runLive() error {
	if *name == "" {
		return errors.New("-name is required")
	}
	deadline := time.Now().Add(*timeout)
	info, err := findTap(*name, 20*time.Second)
	if err != nil {
		return err
	}
	src, err := source.OpenLive(info, classify.DefaultTimeout)
	if err != nil {
		return err
	}
	defer src.Close()
	p, prog, progDone := startUI(src)

	if *startFile != "" {
		// Let the program draw its first screen, then start the traffic.
		time.Sleep(100 * time.Millisecond)
		if err := os.WriteFile(*startFile, nil, 0o644); err != nil {
			return err
		}
	}

	// Keys, while the session runs.
	stopKeys := make(chan struct{})
	keysDone := make(chan struct{})
	go func() {
		defer close(keysDone)
		if *keyEvery <= 0 {
			return
		}
		t := time.NewTicker(*keyEvery)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-stopKeys:
				return
			case <-t.C:
			}
			k := "k"
			if i%2 == 1 {
				k = "j"
			}
			prog.Send(keyAt{key: tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}, at: time.Now()})
		}
	}()

	// Watch the source until the session ends: whether it fell behind
	// (the state says so until the end, which overwrites it), and how far
	// the index lags behind the tap's clock while frames flow.
	fellBehind := false
	var behindAt time.Duration // when the state first said so
	behindN := -1              // and the frames indexed then
	t0 := time.Now()
	stallN, stallAt, dumped := 0, time.Now(), false
	var lags []time.Duration
	lastSample := time.Time{}
	for !src.Ended() {
		if time.Now().After(deadline) {
			return fmt.Errorf("the session did not end within %s (index has %d entries)", *timeout, src.Index.Len())
		}
		if !fellBehind && strings.Contains(src.State(), "catching up") {
			fellBehind, behindAt, behindN = true, time.Since(t0), src.Index.Counts().S2H
		}
		if now := time.Now(); now.Sub(lastSample) >= 10*time.Millisecond {
			lastSample = now
			if n := src.Index.Len(); n > 3 && (*frames == 0 || int64(src.Index.Counts().S2H) < *frames) {
				lag := now.Sub(src.Started()) - time.Duration(src.Index.At(n-1).T)*time.Microsecond
				lags = append(lags, lag)
				if *trace && n == stallN && !dumped && time.Since(stallAt) > 400*time.Millisecond {
					dumped = true
					pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
				}
				if n != stallN {
					stallN, stallAt = n, time.Now()
				}
				if *trace {
					fmt.Fprintf(os.Stderr, "trace %.3f entries %d lag %.1f ms state %q\n", time.Since(t0).Seconds(), n, float64(lag)/1e6, src.State())
				}
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	if !fellBehind && strings.Contains(src.State(), "catching up") {
		fellBehind, behindAt, behindN = true, time.Since(t0), src.Index.Counts().S2H
	}
	close(stopKeys)
	<-keysDone
	// One more tick, so that the screen shows the whole session.
	if !p.waitTick(2 * time.Second) {
		return errors.New("the program handled no tick after the session ended")
	}
	final := p.lastView()
	prog.Quit()
	if err := <-progDone; err != nil {
		return err
	}
	pprof.StopCPUProfile()

	c := src.Index.Counts()
	fc, err := countFile(src.Path)
	if err != nil {
		return err
	}
	uiH2S, uiS2H := int64(-1), int64(-1)
	if m := regexp.MustCompile(`→(\d+) ←(\d+)`).FindStringSubmatch(final); m != nil {
		uiH2S, _ = strconv.ParseInt(m[1], 10, 64)
		uiS2H, _ = strconv.ParseInt(m[2], 10, 64)
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("live sent_s2h=%d index_s2h=%d index_h2s=%d index_entries=%d file_s2h=%d file_h2s=%d file_records=%d file_skipped=%d ui_h2s=%d ui_s2h=%d fell_behind=%d behind_at_s=%.2f behind_at_s2h=%d %s rss_mb=%d cpu_s=%.2f\n",
		*frames, c.S2H, c.H2S, c.Entries, fc.s2h, fc.h2s, fc.records, fc.skipped, uiH2S, uiS2H, b2i(fellBehind), behindAt.Seconds(), behindN,
		pct("lag", lags), ru.Maxrss/1024,
		time.Duration(ru.Utime.Nano()+ru.Stime.Nano()).Seconds())
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Printf("keys n=%d unchanged=%d %s\n", len(p.keys), p.unchg, pct("", p.keys))
	fmt.Printf("ticks n=%d %s %s\n", len(p.ticks), pct("", p.ticks), pct("sync", p.tickSync))
	fmt.Printf("views n=%d %s\n", len(p.views), pct("", p.views))
	fmt.Printf("details n=%d %s\n", len(p.details), pct("", p.details))
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pct formats p50, p99, max and mean of ds in ms, with a prefix.
func pct(prefix string, ds []time.Duration) string {
	if prefix != "" {
		prefix += "_"
	}
	if len(ds) == 0 {
		return fmt.Sprintf("%sp50_ms=NaN %sp99_ms=NaN %smax_ms=NaN %smean_ms=NaN", prefix, prefix, prefix, prefix)
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	at := func(q float64) float64 {
		i := min(int(q*float64(len(s))), len(s)-1)
		return float64(s[i]) / 1e6
	}
	return fmt.Sprintf("%sp50_ms=%.2f %sp99_ms=%.2f %smax_ms=%.2f %smean_ms=%.2f", prefix, at(0.50), prefix, at(0.99), prefix,
		float64(s[len(s)-1])/1e6, prefix, float64(sum)/float64(len(s))/1e6)
}

type fileCount struct{ h2s, s2h, records, skipped int64 }

// countFile reads the session file with the sessions reader.
func countFile(path string) (fileCount, error) {
	var fc fileCount
	f, err := os.Open(path)
	if err != nil {
		return fc, err
	}
	defer f.Close()
	r := sessions.NewReader(bufio.NewReaderSize(f, 1<<20))
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fc, err
		}
		fc.records++
		if ev.IsFrame() {
			switch ev.Dir {
			case classify.H2S:
				fc.h2s++
			case classify.S2H:
				fc.s2h++
			}
		}
	}
	fc.skipped = int64(r.Skipped())
	return fc, nil
}

// runRaw follows the tap's session file to its end, counting lines, with
// no index and no view: what a subscriber costs the tap alone.
func runRaw() error {
	info, err := findTap(*name, 20*time.Second)
	if err != nil {
		return err
	}
	fw, err := tap.Follow(info)
	if err != nil {
		return err
	}
	defer fw.Close()
	if *startFile != "" {
		if err := os.WriteFile(*startFile, nil, 0o644); err != nil {
			return err
		}
	}
	buf := make([]byte, 256<<10)
	var lines int64
	for {
		n, err := fw.Read(buf)
		lines += int64(bytes.Count(buf[:n], []byte{'\n'}))
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	fmt.Printf("live raw_lines=%d\n", lines)
	return nil
}

// runOpen opens a recorded session in the program and times its first
// screen of rows and the whole file.
func runOpen(path string) error {
	start := time.Now()
	src, err := source.OpenFile(path, classify.DefaultTimeout)
	if err != nil {
		return err
	}
	defer src.Close()
	p, prog, progDone := startUI(src)
	deadline := start.Add(*timeout)
	var firstAt time.Duration
	var firstRSS int64
	for firstAt == 0 {
		if time.Now().After(deadline) {
			return errors.New("no first screen before the timeout")
		}
		p.mu.Lock()
		at, txt := p.firstAt, p.firstTxt
		p.mu.Unlock()
		if !at.IsZero() {
			firstAt, firstRSS = at.Sub(start), rssMB()
			if strings.Count(txt, "tools/call") < *first/2 {
				return fmt.Errorf("the first screen does not show the rows:\n%s", txt)
			}
		}
		time.Sleep(time.Millisecond)
	}
	// A file with no exit record yet is followed: it is indexed when the
	// source follows it.
	for !src.Ended() && !strings.HasPrefix(src.State(), "following") {
		if time.Now().After(deadline) {
			return errors.New("the file was not indexed before the timeout")
		}
		time.Sleep(5 * time.Millisecond)
	}
	loaded := time.Since(start)
	// The program's next tick takes in the rest.
	if !p.waitTick(5 * time.Second) {
		return errors.New("the program handled no tick after the file was indexed")
	}
	synced := time.Since(start)
	prog.Quit()
	if err := <-progDone; err != nil {
		return err
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("open first_screen_s=%.3f first_rss_mb=%d loaded_s=%.3f synced_s=%.3f peak_rss_mb=%d entries=%d\n",
		firstAt.Seconds(), firstRSS, loaded.Seconds(), synced.Seconds(), ru.Maxrss/1024, src.Index.Len())
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Printf("open-ticks n=%d %s\n", len(p.ticks), pct("", p.ticks))
	return nil
}

// rssMB is the process's resident set now.
func rssMB() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return -1
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize()) >> 20
}
