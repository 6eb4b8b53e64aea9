// Package source feeds a session's index in the background, from a
// session file (read whole, or followed while a tap writes it) or a live
// tap, and reads its records back: the one record source that the live
// view and rpctap tail share. It follows and attaches to taps, holds
// back while a tap says it is short of CPU, and has no terminal UI of
// its own.
package source

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
	"github.com/rpctap/rpctap/tap"
)

// A Source feeds one session's index in the background: a session file
// (read whole, or followed while a tap still writes it) or a live tap.
// Its goroutines do the I/O; the program only reads the index.
type Source struct {
	Name  string
	Index *sessions.Index
	Path  string // the session file, for reading frames back
	// socket is the live tap's socket, where frames are injected; "" for
	// a recording.
	socket string

	started atomic.Value // time.Time
	title   atomic.Value // string: the session's name from its header
	timeout time.Duration
	state   atomic.Value // string: "loading 40%", "live", "ended", an error
	behind  atomic.Bool  // a live view is catching up from the file
	ended   atomic.Bool
	// noRecord: the file ended holding no session header or record (empty,
	// binary, a plain JSON-RPC log); its state says which.
	noRecord atomic.Bool
	noExit   atomic.Bool  // the file was read to its end and has no exit record
	lastT    atomic.Int64 // the last record's time, µs
	// A live session with no file: frames the tap said this view missed,
	// and whether its stream ended before the session's end did.
	missed atomic.Int64
	cutOff atomic.Bool

	fmu  sync.Mutex
	file *os.File
	// held keeps frames of a live session with no file (nil otherwise).
	held *heldFrames
	// pace holds an observer back while the live tap says it is short of
	// CPU; lower puts the calling goroutine on a thread of lower priority,
	// lowerAll the whole process. They are nil where they do not apply.
	pace     func(ctx context.Context)
	lower    func()
	lowerAll func()
	patient  atomic.Bool // see Patient

	// warnings are what the view should tell the user once (a baseline
	// that cannot be read); see TakeWarnings.
	wmu      sync.Mutex
	warnings []string

	cancel context.CancelFunc
}

// warn keeps msg for the view (TakeWarnings).
func (s *Source) warn(msg string) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if len(s.warnings) < 10 {
		s.warnings = append(s.warnings, msg)
	}
}

// TakeWarnings hands back what the source has to tell the user (a
// baseline that cannot be read, so the session is not judged against it)
// since the last call; the view shows each once.
func (s *Source) TakeWarnings() []string {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	w := s.warnings
	s.warnings = nil
	return w
}

// Title is the session's name: from its header once read, else Name.
func (s *Source) Title() string {
	if t, ok := s.title.Load().(string); ok {
		return t
	}
	return s.Name
}

// Started is when the session began (from its header).
func (s *Source) Started() time.Time {
	if t, ok := s.started.Load().(time.Time); ok {
		return t
	}
	return time.Time{}
}

// State is one word or two about where the source stands.
func (s *Source) State() string {
	st, _ := s.state.Load().(string)
	return st
}

// Timeout is the pending-request timeout the session is judged with.
func (s *Source) Timeout() time.Duration {
	h, _ := s.Index.Header()
	return h.TimeoutOr(s.timeout)
}

// Clock is the session's time now: the wall clock for a live session, the
// last record's time for one that ended.
func (s *Source) Clock(now time.Time) time.Duration {
	if s.ended.Load() || s.Started().IsZero() {
		return time.Duration(s.lastT.Load()) * time.Microsecond
	}
	return now.Sub(s.Started())
}

// Close stops the source's goroutines.
func (s *Source) Close() {
	if s.cancel != nil {
		s.cancel()
	}
	s.fmu.Lock()
	if s.file != nil {
		s.file.Close()
	}
	s.fmu.Unlock()
}

// Record reads the record at index position pos back from the file.
func (s *Source) Record(pos int) (*sessions.Event, error) {
	if s.held != nil {
		ev, ok := s.held.get(s.Index.At(pos).Seq)
		if !ok {
			return nil, fmt.Errorf("the tap records no file (--no-record), and this view keeps only the frames it saw, the last %d MiB of them", heldBytes>>20)
		}
		cp := *ev
		cp.Frame = bytes.Clone(ev.Frame)
		cp.Header = bytes.Clone(ev.Header)
		return &cp, nil
	}
	s.fmu.Lock()
	defer s.fmu.Unlock()
	if s.file == nil {
		if s.Path == "" {
			return nil, errors.New("this session has no file to read frames back from (the tap runs with --no-record)")
		}
		f, err := os.Open(s.Path)
		if err != nil {
			return nil, err
		}
		s.file = f
	}
	ev, err := sessions.ReadRecord(s.file, s.Index.At(pos))
	if err != nil {
		return nil, err
	}
	// ReadRecord's event aliases a reader that is gone: keep a copy.
	cp := *ev
	cp.Frame = bytes.Clone(ev.Frame)
	cp.Header = bytes.Clone(ev.Header)
	return &cp, nil
}

// Records reads the records of the source's file in order, for an
// observer that goes through the index from start to end: one reader
// moves forward through the file instead of a read of its own for each
// record, as Record does. Close it when done.
func (s *Source) Records() *Records { return &Records{s: s} }

// Records reads a source's records back in file order (see
// Source.Records). It is not safe for concurrent use.
type Records struct {
	s    *Source
	f    *os.File
	r    *sessions.Reader
	base int64 // the file offset r starts at
}

// At returns the record at index position pos, read on from the last one
// when it comes after it (else read on its own, as Record does). The
// Event is valid until the next call.
func (c *Records) At(pos int) (*sessions.Event, error) {
	e := c.s.Index.At(pos)
	if c.s.held != nil || c.s.Path == "" || e.Offset < 0 {
		return c.s.Record(pos)
	}
	if c.f == nil {
		f, err := os.Open(c.s.Path)
		if err != nil {
			return nil, err
		}
		c.f = f
	}
	if c.r == nil || e.Offset < c.base+c.r.End() {
		c.base = e.Offset
		c.r = sessions.NewReader(io.NewSectionReader(c.f, e.Offset, math.MaxInt64-e.Offset))
	}
	for {
		ev, err := c.r.Next()
		if err != nil {
			c.r = nil
			return c.s.Record(pos)
		}
		switch off := c.base + c.r.Offset(); {
		case off < e.Offset:
			continue
		case off == e.Offset && ev.T == e.T && ev.Kind == e.Event && (!ev.IsFrame() || ev.Dir == e.Dir && int64(len(ev.Frame)) == e.Size):
			return ev, nil
		}
		// Not the record indexed: read it on its own, which says why.
		c.r = nil
		return c.s.Record(pos)
	}
}

// Close closes the file the records are read from.
func (c *Records) Close() {
	if c.f != nil {
		c.f.Close()
		c.f, c.r = nil, nil
	}
}

// Open opens a session file path, or a live tap by name, pid or
// socket.
func Open(target string) (*Source, error) { return openTarget(target, false) }

// OpenFollowing is Open with a session file followed whatever writes it
// (a tap elsewhere, or one that serves no socket), until its exit record
// or Close: what tail -f does.
func OpenFollowing(target string) (*Source, error) { return openTarget(target, true) }

func openTarget(target string, follow bool) (*Source, error) {
	if fi, err := os.Stat(target); err == nil && !fi.IsDir() && !strings.HasSuffix(target, ".sock") {
		return openSessionFile(target, 0, follow)
	}
	info, err := tap.FindTap(target)
	if err != nil {
		if strings.ContainsAny(target, "/.") && !strings.HasSuffix(target, ".sock") {
			if _, serr := os.Stat(target); errors.Is(serr, os.ErrNotExist) {
				var amb *tap.AmbiguousError
				if !errors.As(err, &amb) {
					return nil, fmt.Errorf("there is no file %s, and no live tap has that name; rpctap ls lists both", classify.EscapeString(target, 200))
				}
			}
			return nil, fmt.Errorf("%s is neither a session file nor a live tap: %w", classify.EscapeString(target, 200), err)
		}
		return nil, err
	}
	return OpenLive(info, 0)
}

// OpenFile indexes a session file in the background. While a live tap
// writes the file, it follows it, up to its exit record, or until that
// tap is gone; any other file is read as it is, whatever its end (a line
// cut short, lines after the exit record, no exit record at all), and
// the source then says how it ended.
func OpenFile(path string, timeout time.Duration) (*Source, error) {
	return openSessionFile(path, timeout, false)
}

func openSessionFile(path string, timeout time.Duration, always bool) (*Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open the session: %w", err)
	}
	f.Close()
	s := &Source{Name: filepath.Base(path), Path: path, timeout: timeout}
	s.Index = sessions.NewIndex(sessions.IndexOptions{Timeout: timeout, Baseline: sessions.BaselineLookup(s.warn)})
	s.state.Store("loading")
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	follow, alive := always, func() bool { return true }
	if !always {
		if info, ok := liveWriter(path); ok {
			follow, alive = true, tapAlive(info.Socket)
			s.socket = info.Socket
		}
	}
	if follow {
		s.lower, s.lowerAll = background, backgroundProcess // a tap may be writing it
	}
	go func() {
		progress := func(done, total int64) {
			if h, ok := s.Index.Header(); ok {
				s.setHeader(h)
			}
			if total > 0 && done < total {
				s.state.Store(fmt.Sprintf("loading %d%%", done*100/total))
			} else if follow {
				s.state.Store("following")
			}
			s.noteLast()
		}
		var err error
		if follow {
			err = s.Index.FollowWhile(ctx, path, 200*time.Millisecond, alive, progress)
		} else {
			err = s.Index.ReadFile(ctx, path, progress)
		}
		if h, ok := s.Index.Header(); ok {
			s.setHeader(h)
		}
		s.noteLast()
		_, hasHeader := s.Index.Header()
		if !hasHeader && s.Index.Len() == 0 && err == nil && ctx.Err() == nil {
			s.noRecord.Store(true)
		}
		// What the source says is stored before it ends: a view that
		// sees it ended looks no more.
		defer s.ended.Store(true)
		switch {
		case err != nil && ctx.Err() == nil:
			s.state.Store("error: " + err.Error())
		case s.noRecord.Load() && s.Index.Counts().Skipped == 0:
			s.state.Store("empty: no session record in it")
		case s.noRecord.Load():
			s.state.Store(fmt.Sprintf("not a session file: none of its %d lines is a record", s.Index.Counts().Skipped))
		case !s.Index.Counts().Exit && ctx.Err() == nil:
			s.noExit.Store(true)
			s.state.Store("ended without an exit record")
		default:
			s.state.Store("recorded")
		}
	}()
	return s, nil
}

// liveWriter finds the live tap that writes the session file at path.
func liveWriter(path string) (tap.Info, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return tap.Info{}, false
	}
	taps, _ := tap.LiveTaps()
	for _, t := range taps {
		if t.Session == "" {
			continue
		}
		if ti, err := os.Stat(t.Session); err == nil && os.SameFile(fi, ti) {
			return t, true
		}
	}
	return tap.Info{}, false
}

// tapAlive reports whether the tap on socket still answers, asking it at
// most once a second.
func tapAlive(socket string) func() bool {
	var asked time.Time
	alive := true
	return func() bool {
		if alive && time.Since(asked) >= time.Second {
			asked = time.Now()
			_, err := tap.QueryInfo(socket)
			alive = err == nil
		}
		return alive
	}
}

func (s *Source) setHeader(h sessions.Header) {
	if h.Name != "" {
		s.title.Store(h.Name)
	}
	if !h.Started.IsZero() {
		s.started.Store(h.Started)
	}
}

func (s *Source) noteLast() {
	if n := s.Index.Len(); n > 0 {
		s.lastT.Store(s.Index.At(n - 1).T)
	}
}

// OpenLive attaches to a live tap. When it records, the view follows its
// session file (the tap only says how far it is written, so a view costs
// it nothing per record) and indexes it at a lower CPU priority, and not
// at all while the tap says it is short of CPU (see pacer), so that on a
// busy machine the view yields to the tap and catches up when the traffic
// lets it. A tap that records no file sends its records one by one.
func OpenLive(info tap.Info, timeout time.Duration) (*Source, error) {
	// A tap in this very process (rpctap watch) shares the view's
	// threads and pauses: lowering them would slow the tap, not spare it.
	// Nor does the view wait while the tap says it is busy: the tap
	// measures its process, the view's own work in it too, so the view
	// would hold itself back.
	own := info.PID == os.Getpid()
	lower, lowerAll := background, backgroundProcess
	if own {
		lower, lowerAll = func() {}, nil
	}
	var fw *tap.Follower
	s := &Source{Name: info.Name, Path: info.Session, socket: info.Socket, timeout: timeout, lower: lower, lowerAll: lowerAll}
	opts := sessions.IndexOptions{Timeout: timeout, Worker: lower, Baseline: sessions.BaselineLookup(s.warn)}
	if info.Session != "" {
		var err error
		if fw, err = tap.Follow(info); err != nil {
			return nil, err
		}
		if !own {
			s.pace = patientPacer(fw.Busy, s.patient.Load, time.After)
			opts.Pace = s.pace
		}
	}
	s.Index = sessions.NewIndex(opts)
	s.started.Store(info.Started)
	s.state.Store("live")
	ctx, cancel := context.WithCancel(context.Background())
	caughtUp := func() bool { return true }
	if fw != nil {
		s.cancel = func() { cancel(); fw.Close() }
		caughtUp = func() bool { return fw.Behind() == 0 }
		go s.follow(ctx, fw, lower)
	} else {
		c, err := tap.Attach(info)
		if err != nil {
			cancel()
			return nil, err
		}
		s.cancel = func() { cancel(); c.Close() }
		s.held = newHeldFrames()
		go s.readLive(ctx, c)
	}
	go func() {
		// The tracker's clock moves with the wall clock, so timeouts show
		// while nothing crosses the tap; it waits while the view catches
		// up, and stays liveSlack behind, so that an answer the tap has
		// not yet written out is not taken for missing.
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				if s.ended.Load() {
					return
				}
				if caughtUp() {
					s.Index.Advance(now.Sub(s.Started()) - liveSlack)
				}
			}
		}
	}()
	return s, nil
}

// liveSlack is how far a live view's clock stays behind the wall clock:
// more than the tap takes to have a frame in its file (a flush tick).
const liveSlack = 100 * time.Millisecond

// catchingUp is how far behind the tap's file a view says it is catching
// up: some 40 ms of traffic at 100,000 frames a second, so that a view
// keeping up there does not flicker into saying it.
const catchingUp = 4 << 20

// follow indexes a live tap's session file as the tap writes it.
func (s *Source) follow(ctx context.Context, fw *tap.Follower, lower func()) {
	lower()
	defer fw.Close()
	progress := func(done, _ int64) {
		if h, ok := s.Index.Header(); ok {
			s.setHeader(h)
		}
		s.noteLast()
		b := fw.Behind()
		s.behind.Store(b >= catchingUp)
		if b >= catchingUp {
			s.state.Store(fmt.Sprintf("live, catching up from the file (%d MB behind)", (b+500_000)/1_000_000))
		} else {
			s.state.Store("live")
		}
	}
	err := s.Index.ReadStream(ctx, &patientReader{followed: fw, ctx: ctx, patient: s.patient.Load, pace: s.pace}, progress)
	s.behind.Store(false)
	s.noteLast()
	defer s.ended.Store(true) // last: see openSessionFile
	switch {
	case ctx.Err() != nil:
	case err != nil:
		s.state.Store("error: " + err.Error())
	default:
		s.state.Store("ended")
	}
}

// readLive indexes the annotated attach stream of a tap that records no
// file: the header, then each record as it comes, whose frame the view
// keeps (held) to show it.
func (s *Source) readLive(ctx context.Context, c net.Conn) {
	defer c.Close()
	r := sessions.NewReader(bufio.NewReaderSize(c, 256<<10))
	if h, ok := r.Header(); ok {
		s.setHeader(h)
		s.Index.SetHeader(h)
	}
	exit := false
	for {
		ev, err := r.Next()
		if err != nil {
			s.noteLast()
			if ctx.Err() == nil && !exit {
				// The stream ended before the session's exit: the tap
				// was killed, or ended while this view could not take
				// the rest, with no room even to say how much.
				s.cutOff.Store(true)
				s.state.Store("ended without the session's exit (the tap was killed, or cut this view off; it keeps no file)")
			} else if ctx.Err() == nil {
				s.state.Store("ended")
			}
			s.ended.Store(true) // last: see openSessionFile
			return
		}
		off := int64(-1) // there is no file to read the record back from
		if ev.Kind == sessions.EventNote && ev.Gap {
			// The tap could not queue every record for this view, and
			// keeps no file to read the missed ones from: the note, which
			// says how many frames were missed, stands where they were
			// (tail prints it as it prints any note).
			s.missed.Add(ev.Missing)
			s.state.Store("live (some records were missed: the tap keeps no file)")
			ev.Gap = false
		}
		if ev.Kind == "findings" {
			continue // the index finds timeouts itself
		}
		exit = exit || ev.Kind == sessions.EventExit
		s.held.add(ev)
		s.Index.Add(ev, off)
		s.lastT.Store(ev.T)
	}
}

// Missed says what a live view of a tap that records no file did not
// get: how many frames the tap said it missed, and whether its stream
// was cut off before the session's end (then it missed more, which the
// tap had no room to count). Both are zero for a view that got every
// frame, and for any source with a file.
func (s *Source) Missed() (frames int64, cutOff bool) {
	return s.missed.Load(), s.cutOff.Load()
}

// CatchingUp reports whether a live view is well behind its tap's file.
func (s *Source) CatchingUp() bool { return s.behind.Load() }

// SetCatchingUp says, as following a tap's file does, whether the view is
// well behind it: for the view's tests, which do not put a tap 4 MB
// ahead of its view to see how the view draws then.
func (s *Source) SetCatchingUp(behind bool) { s.behind.Store(behind) }

// Socket is the live tap's socket, where frames are injected; "" when
// the source is a recording.
func (s *Source) Socket() string { return s.socket }

// Ended reports whether the source has nothing more to add.
func (s *Source) Ended() bool { return s.ended.Load() }

// NoRecord reports whether the session file, read to its end, held no
// session header or record at all: it is no session file.
func (s *Source) NoRecord() bool { return s.noRecord.Load() }

// EndedWithoutExit reports whether the session file, read to its end,
// has records but no exit record: its tap was killed, or the file cut.
func (s *Source) EndedWithoutExit() bool {
	return s.ended.Load() && s.noExit.Load()
}
