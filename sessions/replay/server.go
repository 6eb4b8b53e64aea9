package replay

import (
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// Match modes of ServeOptions.Match.
const (
	MatchBest       = "best"       // same method, then the most alike params
	MatchSequential = "sequential" // the recorded requests of a method in their order
	MatchStrict     = "strict"     // same method and equal params
)

// ServeOptions configure Serve.
type ServeOptions struct {
	// Match is MatchBest (the default), MatchSequential or MatchStrict.
	Match string
	// Ignore leaves paths out of the comparison of params.
	Ignore sessions.Ignore
	// Speed scales the recorded delays: 2 plays twice as fast. 0 means 1.
	Speed float64
	// NoDelay sends the server's frames as soon as they are due, with
	// none of their recorded delays.
	NoDelay bool
	// StrictVersion makes initialize match only a recorded initialize
	// that asked for the same protocol version.
	StrictVersion bool
	// Record writes the replayed session to a file of its own, as a tap
	// does: what the host sent and what replay answered, with a note on
	// each match. RecordPath names the file ("": a new file in the state
	// directory).
	Record     bool
	RecordPath string
	// Overwrite writes over a file already at RecordPath (--force);
	// without it the replay is recorded beside that file, and Warn (when
	// not nil) is told so.
	Overwrite bool
	Warn      func(string)
	// Argv is the command line the replay's session file names.
	Argv []string
	// Redactor masks secrets in the replay's session file, as a tap's
	// (nil: none are masked).
	Redactor *sessions.Redactor
	// Forward, when not nil, is the real server that requests matching
	// nothing in the recording go to (--unmatched forward).
	Forward *Forward
	// Log, when not nil, is told what replay does, one line at a time
	// (peer text escaped).
	Log func(string)
	// Now is the clock the Record's times are taken on (time since its
	// start); nil: since Serve began.
	Now func() time.Duration
}

// Stats says what a replay as the server did.
type Stats struct {
	Answered, Unmatched, Forwarded, Sent, Dropped int
	// Retries counts the requests Answered that retried a multi
	// round-trip call (one call with its first request).
	Retries int
	Path    string // the replay's own session file, if one was written
}

// Serve plays the recorded server of the session file at path for
// a live host: it reads the host's frames from in and writes the
// recording's answers to out (and nothing else), until in ends or ctx is
// done. See the README's section on replay for the rules.
func Serve(ctx context.Context, path string, in FrameSource, out io.Writer, opts ServeOptions) (Stats, error) {
	f, err := os.Open(path)
	if err != nil {
		return Stats{}, fmt.Errorf("cannot open the recording: %w (rpctap ls lists recent sessions)", err)
	}
	defer f.Close()
	rec, err := loadRecording(f, f, opts.Ignore)
	if err != nil {
		return Stats{}, err
	}
	sf, opts, err := startRecord(rec, opts, "")
	if err != nil {
		return Stats{}, err
	}
	st, err := serve(ctx, rec, in, out, opts, sf)
	return endRecord(ctx, sf, opts, st, err)
}

// startRecord creates the replay's own session file when opts.Record,
// of the given transport ("" for stdio), and returns opts timed from
// its start.
func startRecord(rec *recording, opts ServeOptions, transport string) (*sessionFile, ServeOptions, error) {
	if !opts.Record {
		return nil, opts, nil
	}
	h := sessions.Header{Started: time.Now(), Argv: opts.Argv, Name: "replay-" + rec.hdr.Name, Framing: rec.framings.Framing().String(), Profile: rec.hdr.ProfileOrDefault(),
		Redact: opts.Redactor.Names(), Transport: transport}
	sf, err := createSessionFile(opts.RecordPath, h, opts.Overwrite, opts.Warn)
	if err != nil {
		return nil, opts, err
	}
	for _, note := range rec.framings.Notes() { // the directions' framings, when they differ
		sf.w.WriteEvent(note)
	}
	start := h.Started
	opts.Now = func() time.Duration { return time.Since(start) }
	return sf, opts, nil
}

// endRecord ends the replay's session file (when there is one) with an
// exit record, saying in st where it is.
func endRecord(ctx context.Context, sf *sessionFile, opts ServeOptions, st Stats, err error) (Stats, error) {
	if sf == nil {
		return st, err
	}
	if !sf.sink {
		st.Path = sf.path
	}
	ev := sessions.EventRecord{T: opts.Now().Microseconds(), Kind: sessions.EventExit, Code: new(int)}
	var stopped Stopped
	if errors.As(context.Cause(ctx), &stopped) {
		*ev.Code, ev.Signal = stopped.Code, stopped.Signal
	}
	sf.w.WriteEvent(ev)
	if cerr := sf.close(); cerr != nil && err == nil {
		err = cerr
	}
	return st, err
}

// FramingOf is the framing of the session file at path, as replay
// reads it: to read the live streams of a replay with (each direction's
// framing, when both have the same; FramingAuto when they differ, which
// lets a splitter decide each stream by its bytes).
func FramingOf(path string) (classify.Framing, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("cannot open the recording: %w (rpctap ls lists recent sessions)", err)
	}
	defer f.Close()
	rd := sessions.NewReader(f)
	h, _ := rd.Header()
	if framing, _ := classify.ParseFraming(h.FramingOrDefault()); framing != classify.FramingAuto {
		return framing, nil
	}
	// An auto session says in a note, before a direction's first frame,
	// when that direction turned out to be LSP.
	framings := h.Framings()
	seen := map[classify.Direction]bool{}
	for len(seen) < 2 {
		ev, err := rd.Next()
		if err != nil {
			break
		}
		framings.Note(ev)
		if ev.IsFrame() && ev.Dir != classify.Err {
			seen[ev.Dir] = true
		}
	}
	return framings.Framing(), nil
}

type server struct {
	rec  *recording
	opts ServeOptions
	// masked is opts.Ignore with the recording's masks standing for any
	// text (recordedMasks), for the recorded requests that masked one.
	masked sessions.Ignore
	file   *sessionFile // nil when not recording
	front  *httpFront   // nil unless served over HTTP
	fwd    *forwarding  // nil unless forwarding
	out    io.Writer
	start  time.Time
	speed  float64

	mu      sync.Mutex
	queue   outQueue
	wake    chan struct{}
	seq     int64
	nextID  int
	serverQ map[string]int32 // rewritten id key of a server request → its frame
	// hostIDs are the ids of the host's requests that look like replay's
	// own ("rpctap-replay-N"), which a server request must not take.
	hostIDs map[string]bool
	stats   Stats
	// related is sameCall's memory, reused.
	related []related
	// asked are the input_required results handed out whose retry has
	// not come, oldest first.
	asked []inputAsked
	// flush, while set, writes the session file's buffer soon, so that
	// what is recorded reaches the file (and live views) as a tap's
	// does; fileDone stops it.
	flush    *time.Timer
	fileDone bool
	werr     error
	closing  bool
	// gated are the answers waiting for the host's answer to a server
	// request (recFrame.gate), by that recorded answer.
	gated map[int32][]outItem
}

// An outItem is a recorded server frame due to be written.
type outItem struct {
	due   time.Time
	seq   int64 // tie-break: the order items were scheduled
	frame int32
	id    []byte // the id to give it (a response: the host's; a server request: replay's own)
	// answer marks an answer to a host request, which is written even
	// when the host has closed its input.
	answer bool
	raw    []byte // a frame of replay's own (an error), instead of frame
	// to is the live HTTP response it goes out on (nil: found by its
	// frame's exchange, see httpFront.route; never set on stdio).
	to *liveStream
}

type outQueue []outItem

func (q outQueue) Len() int { return len(q) }
func (q outQueue) Less(i, j int) bool {
	if !q[i].due.Equal(q[j].due) {
		return q[i].due.Before(q[j].due)
	}
	return q[i].seq < q[j].seq
}
func (q outQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *outQueue) Push(x any)   { *q = append(*q, x.(outItem)) }
func (q *outQueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// newServer makes the server that plays rec, writing to out; what came
// at the recording's start is queued.
func newServer(rec *recording, out io.Writer, opts ServeOptions, sf *sessionFile) *server {
	s := &server{rec: rec, opts: opts, out: out, file: sf, start: time.Now(), speed: opts.Speed,
		wake: make(chan struct{}, 1), serverQ: map[string]int32{}, hostIDs: map[string]bool{}}
	if s.speed <= 0 {
		s.speed = 1
	}
	if s.opts.Match == "" {
		s.opts.Match = MatchBest
	}
	if s.opts.Now == nil {
		s.opts.Now = func() time.Duration { return time.Since(s.start) }
	}
	s.masked = recordedMasks(s.opts.Ignore, rec.hdr, s.opts.Redactor, false)
	s.mu.Lock()
	s.scheduleAfter(-1, s.start)
	s.mu.Unlock()
	return s
}

func serve(ctx context.Context, rec *recording, in FrameSource, out io.Writer, opts ServeOptions, sf *sessionFile) (Stats, error) {
	s := newServer(rec, out, opts, sf)
	if opts.Forward != nil {
		s.fwd = newForwarding(opts.Forward, rec.framings.Of(classify.H2S))
		go s.readForward()
		go s.writeForward()
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		s.writeLoop(ctx)
	}()
	// A host may stop replay with a signal (ctx) while its input is still
	// open: the read that waits on it is then left behind.
	readDone := make(chan error, 1)
	go func() { readDone <- s.readLoop(ctx, in) }()
	var readErr error
	select {
	case readErr = <-readDone:
	case <-ctx.Done():
		readErr = ctx.Err()
	}
	s.mu.Lock()
	s.closing = true
	if s.fwd != nil {
		close(s.fwd.out)
	}
	s.mu.Unlock()
	s.poke()
	<-done
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fileDone = true // the caller closes the file
	if s.flush != nil {
		s.flush.Stop()
	}
	if readErr != nil && !errors.Is(readErr, io.EOF) && ctx.Err() == nil {
		return s.stats, fmt.Errorf("reading the host's frames: %w", readErr)
	}
	if s.werr != nil && ctx.Err() == nil {
		return s.stats, fmt.Errorf("writing to the host: %w", s.werr)
	}
	return s.stats, nil
}

func (s *server) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *server) log(format string, args ...any) {
	msg := s.opts.Redactor.MaskString(fmt.Sprintf(format, args...))
	if s.opts.Log != nil {
		s.opts.Log(msg)
	}
	s.note(msg)
}

// note records msg in the replay's own session file.
func (s *server) note(msg string) {
	if s.file != nil {
		s.file.w.WriteEvent(sessions.EventRecord{T: s.opts.Now().Microseconds(), Kind: sessions.EventNote, Text: "replay: " + msg})
		s.flushSoon()
	}
}

// record writes a frame to the replay's session file, with what HTTP
// said of it (nil on stdio).
func (s *server) record(dir classify.Direction, frame []byte, h *sessions.HTTPInfo) {
	if s.file != nil {
		frame, masked := s.opts.Redactor.Mask(frame)
		s.file.w.WriteFrame(sessions.FrameRecord{T: s.opts.Now().Microseconds(), Dir: dir, Frame: frame, Redacted: masked, HTTP: h})
		s.flushSoon()
	}
}

// fileFlushEvery bounds how long a record waits in the buffer of the
// replay's session file, as a tap's (tap's flushEvery).
const fileFlushEvery = 20 * time.Millisecond

// flushSoon has the session file's buffer written within
// fileFlushEvery. s.mu is held.
func (s *server) flushSoon() {
	if s.flush != nil || s.fileDone {
		return
	}
	s.flush = time.AfterFunc(fileFlushEvery, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.fileDone {
			s.file.bw.Flush()
		}
		s.flush = nil
	})
}

// wait turns a recorded delay into one to wait now.
func (s *server) wait(us int64) time.Duration {
	if s.opts.NoDelay {
		return 0
	}
	return time.Duration(float64(us)*float64(time.Microsecond)/s.speed + 0.5)
}

// scheduleAfter queues the server frames that came after frame i (-1: at
// the start), timed from at. s.mu is held.
func (s *server) scheduleAfter(i int32, at time.Time) {
	for _, j := range s.rec.after[i] {
		it := outItem{due: at.Add(s.wait(s.rec.delay(j))), frame: j}
		if s.rec.frames[j].kind == classify.KindRequest {
			it.id = s.newID()
		}
		s.push(it)
	}
}

// serverIDPrefix starts the ids of the server requests replay sends.
const serverIDPrefix = "rpctap-replay-"

// newID is the id of a server request replay sends: one no request of
// the host has had, nor any other server request. s.mu is held.
func (s *server) newID() []byte {
	for {
		s.nextID++
		id := serverIDPrefix + strconv.Itoa(s.nextID)
		if !s.hostIDs[id] {
			return strconv.AppendQuote(nil, id)
		}
	}
}

// sawHostID notes a host request's id that could be taken for one of
// replay's own. s.mu is held.
func (s *server) sawHostID(m *classify.Message) {
	id := m.ID()
	if !id.IsString() || !bytes.HasPrefix(id.Raw, []byte(`"`+serverIDPrefix)) && bytes.IndexByte(id.Raw, '\\') < 0 {
		return
	}
	if v, ok := classify.StringValue(id.Raw); ok && strings.HasPrefix(v, serverIDPrefix) {
		s.hostIDs[v] = true
	}
}

func (s *server) push(it outItem) {
	s.seq++
	it.seq = s.seq
	heap.Push(&s.queue, it)
	s.poke()
}

// writeLoop writes queued frames when they are due.
func (s *server) writeLoop(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		if s.closing {
			// The host has closed its input: what answers its requests
			// still goes; the rest is never wanted.
			keep := s.queue[:0]
			for _, it := range s.queue {
				if it.answer {
					keep = append(keep, it)
				} else {
					s.stats.Dropped++
				}
			}
			s.queue = keep
			heap.Init(&s.queue)
		}
		if len(s.queue) == 0 && s.closing && !s.waitingForward() || s.werr != nil {
			if s.stats.Dropped > 0 {
				why := "the host closed its input"
				if s.front != nil {
					why = "replay was stopped"
				}
				s.log("%s; %d recorded server frames were not sent", why, s.stats.Dropped)
			}
			s.mu.Unlock()
			return
		}
		var wait time.Duration = time.Hour
		if len(s.queue) > 0 {
			wait = time.Until(s.queue[0].due)
		}
		if len(s.queue) > 0 && wait <= 0 {
			it := heap.Pop(&s.queue).(outItem)
			s.writeItem(it)
			s.mu.Unlock()
			continue
		}
		s.mu.Unlock()
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-timer.C:
		}
	}
}

// writeItem writes one frame to the host. s.mu is held.
func (s *server) writeItem(it outItem) {
	body, header := it.raw, []byte(nil)
	if body == nil {
		var err error
		if body, header, err = s.rec.read(it.frame); err != nil {
			s.werr = err
			return
		}
		if it.id != nil {
			if nb := withID(body, it.id); !bytes.Equal(nb, body) {
				body, header = nb, nil
			}
		}
	}
	if s.front != nil {
		if !s.front.send(it, body) {
			return
		}
	} else {
		if _, err := s.out.Write(classify.AppendFrame(nil, s.rec.framings.Of(classify.S2H), body, header)); err != nil {
			s.werr = err
			return
		}
		s.record(classify.S2H, body, nil)
	}
	s.stats.Sent++
	if it.raw != nil {
		return
	}
	f := &s.rec.frames[it.frame]
	if f.kind == classify.KindRequest {
		s.serverQ[string(classify.RawID(it.id).Key())] = it.frame
		s.log("sent the recorded server request %s (line %d) with id %s", esc(f.method), f.line, it.id)
	}
	if f.kind == classify.KindResponse && f.pair >= 0 {
		s.scheduleAfter(it.frame, time.Now())
	}
}

func esc(s string) string { return classify.EscapeString(s, 120) }

// hostProfile is the profile the host's frames are read by.
func (s *server) hostProfile() classify.Profile {
	profile, _ := classify.ParseProfile(s.rec.hdr.ProfileOrDefault())
	if profile == classify.Auto {
		profile = classify.JSONRPC
		if s.rec.framings.LSP() {
			profile = classify.LSP
		}
	}
	return profile
}

// readLoop reads the host's frames and answers them.
func (s *server) readLoop(ctx context.Context, in FrameSource) error {
	profile := s.hostProfile()
	for ctx.Err() == nil {
		body, err := in.Next()
		if err != nil {
			return err
		}
		now := time.Now()
		m := classify.Classify(body, classify.H2S, profile)
		s.mu.Lock()
		s.record(classify.H2S, body, nil)
		switch m.Kind {
		case classify.KindRequest:
			s.sawHostID(&m)
			s.answer(&m, body, now)
		case classify.KindNotification:
			s.notified(&m, body, now)
		case classify.KindResponse:
			s.answered(&m, body, now)
		case classify.KindBatch:
			s.answerBatch(&m, now)
		default:
			if m.Answer != nil {
				s.push(outItem{due: now, raw: m.Answer.JSON(), answer: true})
				s.log("the host sent %s; answered with error %d, as a strict server does", m.Kind.Phrase(), m.Answer.Code)
			}
		}
		s.mu.Unlock()
	}
	return ctx.Err()
}
