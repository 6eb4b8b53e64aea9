// Package replay plays one side of a recorded session against a live
// peer, as rpctap replay does. Serve plays the recorded server for a live
// host: it answers each request from a recorded request of the same call
// (the method and what it names, then the params, by ServeOptions.Match),
// with the recorded delays, and can pass what matches nothing to a real
// server (Forward). PlayHost plays the recorded host against a live
// server and compares each answer with the recorded one (HostReport);
// HostConn does the same beside a tap. Neither holds the recording's
// payloads in memory: frames are read back from the file when they are
// due.
package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// A recording is the index of a session file that replay plays from: an
// entry a frame, with no payload (frames are read back from the file by
// their offset), so that a recording of any size plays in bounded memory.
type recording struct {
	f        io.ReaderAt
	hdr      sessions.Header
	framings sessions.Framings // each direction's, to rebuild its bytes with
	frames   []recFrame
	// byMethod lists the host's requests and notifications by method,
	// in recording order; byCall its requests by their call (sessions.CallID.Key),
	// and masked those with a secret masked in them by method (their
	// calls are compared with the masks standing for any value).
	byMethod map[string][]int32
	byCall   map[uint64][]int32
	masked   map[string][]int32
	// after lists, by the index of a frame (or -1 for the session's
	// start), the server's frames that came after it: notifications,
	// server requests and anything that is not an answer.
	after map[int32][]int32
	// methods are the names seen, interned; revisions the MCP revisions
	// the host's requests carried in params._meta (recFrame.rev indexes
	// it, 0 standing for none).
	methods   map[string]string
	revisions []string
	// Of an HTTP session (hdr.Transport): firstOut holds each exchange's
	// first server frame, which says its status and headers; gets and
	// deletes the host's GET and DELETE requests, in recording order.
	// A stdio session's frames get exchanges too, one a host request
	// (see exchangeOf), to serve it over HTTP.
	firstOut      map[int32]int32
	gets, deletes []int32
}

// A recFrame is one h2s or s2h frame of a recording.
type recFrame struct {
	line, off, t int64
	dir          classify.Direction
	kind         classify.Kind
	method       string
	hash         uint64          // the frame's structural hash (see Ignore)
	call         sessions.CallID // a host request's or notification's call
	masked       bool            // the recording masked a secret in it
	// pair is the index of the request's response, or the response's
	// request; -1 when it has none.
	pair int32
	// trigger is the frame the server's frame came after (see after), and
	// delay how long after it (µs).
	trigger int32
	used    bool
	// A multi round-trip call (MCP 2026-07-28): inputRequired marks an
	// answer that asked the host for input, and next is the recorded
	// request that retried it (-1: none); retry marks such a request,
	// which answers only the retry of a call replay asked for input.
	inputRequired, retry bool
	next                 int32
	// rev is the revision the host's request carried (an index in
	// recording.revisions).
	rev uint8
	// exchange is the HTTP exchange (a request and its response) the
	// frame crossed in (see recording.firstOut).
	exchange int32
	// gate, of an answer to a host request, is the host's answer to a
	// server request asked within that request (an elicitation/create
	// during a tools/call) that came before it, the latest one: the
	// answer waits for the live host's answer to it, as the server did
	// (-1: none).
	gate int32
}

// Stopped is the cause of a replay's context when a signal stopped it
// (context.WithCancelCause): the replay's session file ends with an exit
// record that says so, as a tap's does.
type Stopped struct {
	Code   int    // 128+signal
	Signal string // "SIGTERM"
}

func (s Stopped) Error() string { return "stopped by " + s.Signal }

// errNotRecording is returned for a file with no frame to play.
var errNotRecording = errors.New("the file holds no frame to replay: is it a session file rpctap recorded?")

// loadRecording reads the session file r (from its start) into an index.
// ig decides the hashes requests are matched by.
func loadRecording(r io.Reader, at io.ReaderAt, ig sessions.Ignore) (*recording, error) {
	rd := sessions.NewReader(r)
	hdr, _ := rd.Header()
	rec := &recording{f: at, hdr: hdr, byMethod: map[string][]int32{}, byCall: map[uint64][]int32{}, masked: map[string][]int32{},
		after: map[int32][]int32{}, methods: map[string]string{}, revisions: []string{""}, firstOut: map[int32]int32{}}
	isHTTP := hdr.Transport == sessions.TransportHTTP
	rec.framings = hdr.Framings()
	profile, _ := classify.ParseProfile(hdr.ProfileOrDefault())
	tr := classify.NewTracker(classify.TrackerOptions{Profile: profile, LSPFraming: rec.framings.LSP(), Timeout: -1})
	inFlight := map[int64]int32{} // request line → index
	asked := map[int64]int32{}    // a multi round-trip call's first request line → its latest input_required answer
	hs := sessions.Hasher{Ignore: ig}
	trigger := int32(-1)
	var rounds serverRounds
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the recording: %w", err)
		}
		if rec.framings.Note(ev) {
			tr.UseLSPFraming()
		}
		frame, _, ok := sessions.ServerSide(ev)
		if !ok {
			continue
		}
		if len(rec.frames) >= math.MaxInt32 {
			return nil, errors.New("the recording has more frames than replay can index (2^31)")
		}
		m := hdr.Classify(frame, ev.Dir, tr.Profile())
		obs := tr.Observe(int64(ev.Line), time.Duration(ev.T)*time.Microsecond, &m)
		i := int32(len(rec.frames))
		f := recFrame{line: int64(ev.Line), off: rd.Offset(), t: ev.T, dir: ev.Dir, kind: m.Kind, method: rec.intern(m.Method()), pair: -1, trigger: -1, next: -1, gate: -1, masked: ev.Redacted}
		if ev.Dir == classify.H2S && (m.Kind == classify.KindRequest || m.Kind == classify.KindNotification) {
			h, idn, ok := hs.HashCall(f.method, frame)
			if ok {
				f.hash = h
			}
			f.call = idn.Call
			f.rev = rec.revision(metaRevision(m.Meta()))
		} else if h, ok := hs.Hash(frame); ok {
			f.hash = h
		}
		switch m.Kind {
		case classify.KindRequest:
			inFlight[f.line] = i
		case classify.KindResponse:
			for _, p := range obs.Pairs {
				if q, ok := inFlight[p.Request]; ok {
					delete(inFlight, p.Request)
					f.pair, rec.frames[q].pair = q, i
					f.method = rec.frames[q].method
					rec.linkRound(asked, p, q, i, &f)
					break
				}
			}
		}
		rec.frames = append(rec.frames, f)
		switch {
		case m.Kind == classify.KindHTTP:
			// What HTTP did, no message: a GET or DELETE of the host, or a
			// response's status and headers; never played as a frame.
			switch string(classify.Member(ev.HTTP, "method")) {
			case `"GET"`:
				if ev.Dir == classify.H2S {
					rec.gets = append(rec.gets, i)
				}
			case `"DELETE"`:
				if ev.Dir == classify.H2S {
					rec.deletes = append(rec.deletes, i)
				}
			}
		case ev.Dir == classify.H2S:
			if m.Kind == classify.KindRequest || m.Kind == classify.KindNotification {
				rec.byMethod[f.method] = append(rec.byMethod[f.method], i)
			}
			if m.Kind == classify.KindRequest {
				rec.byCall[f.call.Key] = append(rec.byCall[f.call.Key], i)
				if f.masked {
					rec.masked[f.method] = append(rec.masked[f.method], i)
				}
			}
			trigger = i
		case f.kind == classify.KindResponse && f.pair >= 0:
			trigger = i
		default:
			rec.frames[i].trigger = trigger
			rec.after[trigger] = append(rec.after[trigger], i)
		}
		x := rec.exchangeOf(&rec.frames[i], i, ev.HTTP, isHTTP)
		rec.frames[i].exchange = x
		rounds.note(rec, i)
		if _, ok := rec.firstOut[x]; !ok && ev.Dir == classify.S2H {
			rec.firstOut[x] = i
		}
	}
	if len(rec.frames) == 0 {
		return nil, errNotRecording
	}
	return rec, nil
}

// serverRounds finds, while a recording is read, the server requests
// asked within a host request and the host's answers to them, to gate
// the request's answer (recFrame.gate).
type serverRounds struct {
	within map[int32]int32 // a server request → the host request it was asked within
	latest map[int32]int32 // a host request in flight → the latest host answer to a server request asked within it
	byX    map[int32]int32 // an HTTP exchange → the host request it carried (the last one)
}

// note takes frame i, its pair, trigger and exchange set.
func (r *serverRounds) note(rec *recording, i int32) {
	if r.within == nil {
		r.within, r.latest, r.byX = map[int32]int32{}, map[int32]int32{}, map[int32]int32{}
	}
	f := &rec.frames[i]
	inFlight := func(q int32) bool {
		return q >= 0 && rec.frames[q].dir == classify.H2S && rec.frames[q].kind == classify.KindRequest && rec.frames[q].pair < 0
	}
	switch {
	case f.dir == classify.H2S && f.kind == classify.KindRequest:
		r.byX[f.exchange] = i
	case f.dir == classify.S2H && f.kind == classify.KindRequest:
		// Asked on the stream of a request's POST, or else after the
		// request (or after the host's answer to an earlier server
		// request asked within it).
		q, ok := r.byX[f.exchange]
		if t := f.trigger; (!ok || !inFlight(q)) && t >= 0 {
			q = t
			if g := &rec.frames[t]; g.dir == classify.H2S && g.kind == classify.KindResponse {
				q = r.within[g.pair]
			}
		}
		if inFlight(q) {
			r.within[i] = q
		}
	case f.dir == classify.H2S && f.kind == classify.KindResponse && f.pair >= 0:
		if q, ok := r.within[f.pair]; ok && inFlight(q) {
			r.latest[q] = i
		}
	case f.dir == classify.S2H && f.kind == classify.KindResponse && f.pair >= 0:
		if a, ok := r.latest[f.pair]; ok {
			f.gate = a
			delete(r.latest, f.pair)
		}
	}
}

// exchangeOf is the exchange frame f (index i, its record's http object
// raw) crossed in: the recorded one in an HTTP session; in a stdio one,
// its request's, as though each host request had been a POST of its own
// (a host notification or answer too, and a server frame is in its
// trigger's).
func (rec *recording) exchangeOf(f *recFrame, i int32, raw []byte, isHTTP bool) int32 {
	if isHTTP {
		n, err := strconv.ParseInt(string(classify.Member(raw, "exchange")), 10, 32)
		if err != nil {
			return 0
		}
		return int32(n)
	}
	switch {
	case f.dir == classify.H2S:
		return i + 1
	case f.pair >= 0:
		return rec.frames[f.pair].exchange
	case f.trigger >= 0:
		return rec.frames[f.trigger].exchange
	}
	return 0
}

// linkRound links a round of a multi round-trip call: the answer i (f,
// not in frames yet) to request q, paired as p. asked holds each call's
// latest input_required answer, by its first request's line.
func (rec *recording) linkRound(asked map[int64]int32, p classify.Pair, q, i int32, f *recFrame) {
	origin := p.Origin
	if origin != 0 {
		rec.frames[q].retry = true
		if prev, ok := asked[origin]; ok {
			rec.frames[prev].next = q
		}
		delete(asked, origin)
	} else {
		origin = p.Request
	}
	if p.InputRequired {
		f.inputRequired = true
		asked[origin] = i
	}
}

// metaKeyVersion is the member of params._meta that names a 2026-07-28
// request's revision.
const metaKeyVersion = "io.modelcontextprotocol/protocolVersion"

// metaRevision is the revision a request's _meta names, "" when none.
func metaRevision(meta []byte) string {
	if meta == nil {
		return ""
	}
	v, _ := classify.StringValue(classify.Member(meta, metaKeyVersion))
	return v
}

// requestRevision is the revision a request's params._meta names, ""
// when none.
func requestRevision(body []byte) string {
	return metaRevision(classify.Member(classify.Member(body, "params"), "_meta"))
}

// revision is the index of the revision v in rec.revisions, added when
// new; 0 for none (and past 255 revisions, which no recording has).
func (rec *recording) revision(v string) uint8 {
	if v == "" {
		return 0
	}
	for i, r := range rec.revisions {
		if r == v {
			return uint8(i)
		}
	}
	if len(rec.revisions) > 255 {
		return 0
	}
	rec.revisions = append(rec.revisions, v)
	return uint8(len(rec.revisions) - 1)
}

func (rec *recording) intern(s string) string {
	if s == "" {
		return ""
	}
	return sessions.InternIn(rec.methods, s)
}

// read returns the bytes of frame i (and its recorded LSP header, if any),
// read back from the file.
func (rec *recording) read(i int32) (frame, header []byte, err error) {
	f := &rec.frames[i]
	r := sessions.NewReaderAt(rec.f, f.off)
	ev, err := r.Next()
	var ok bool
	if err == nil && ev.IsFrame() && ev.T == f.t && ev.Dir == f.dir {
		frame, header, ok = sessions.ServerSide(ev)
	}
	if !ok {
		return nil, nil, fmt.Errorf("line %d of the recording could not be read back: has the file changed while it was replayed?", f.line)
	}
	return bytes.Clone(frame), bytes.Clone(header), nil
}

// delay is how long after its trigger frame i came (µs).
func (rec *recording) delay(i int32) int64 {
	f := &rec.frames[i]
	var t0 int64
	switch {
	case f.kind == classify.KindResponse && f.pair >= 0:
		t0 = rec.frames[f.pair].t
	case f.trigger >= 0:
		t0 = rec.frames[f.trigger].t
	}
	return max(f.t-t0, 0)
}

// withID returns frame with the value of its top-level id member
// replaced by id, every other byte as it was; frame itself when it has no
// id member.
func withID(frame, id []byte) []byte {
	start, end, ok := sessions.MemberSpan(frame, "id")
	if !ok {
		return frame
	}
	out := make([]byte, 0, len(frame)-(end-start)+len(id))
	out = append(out, frame[:start]...)
	out = append(out, id...)
	return append(out, frame[end:]...)
}

// A FrameSource gives the frames of a stream one at a time: the body of
// each (the line without its newline, the LSP body), valid until the next
// call, and io.EOF after the last.
type FrameSource interface {
	Next() ([]byte, error)
}

// Bodies gives a FrameReader's frames to replay as their bodies.
func Bodies(fr *classify.FrameReader) FrameSource { return bodies{fr} }

type bodies struct{ fr *classify.FrameReader }

func (b bodies) Next() ([]byte, error) {
	f, err := b.fr.Next()
	if err != nil {
		return nil, err
	}
	return f.Body(), nil
}

// A Redaction is what a replay masks in what it writes and shows: what
// the recording masked, as well as a tap masks (the secrets of the
// environment, and what --redact names).
type Redaction struct {
	// Flags are the --redact flags to make the Redactor (and a tap) with:
	// those given, and the names the recording masked that the
	// environment has a value for.
	Flags []string
	// Unset are the names the recording masked that the environment
	// does not set: replay cannot mask their values.
	Unset []string
}

// RedactionOf says what a replay of the recording at path masks,
// in an environment env, with the --redact flags given.
func RedactionOf(path string, env, flags []string) (Redaction, error) {
	f, err := os.Open(path)
	if err != nil {
		return Redaction{}, fmt.Errorf("cannot open the recording: %w (rpctap ls lists recent sessions)", err)
	}
	defer f.Close()
	hdr, _ := sessions.NewReader(f).Header()
	set := map[string]bool{}
	for _, kv := range env {
		if name, _, ok := strings.Cut(kv, "="); ok {
			set[name] = true
		}
	}
	given := map[string]bool{}
	for _, fl := range flags {
		name, _, _ := strings.Cut(fl, "=")
		given[name] = true
	}
	r := Redaction{Flags: slices.Clone(flags)}
	for _, name := range hdr.Redact {
		switch {
		case given[name], set[name] && sessions.SecretName(name):
			// Masked already: given, or a secret of the environment.
		case set[name]:
			r.Flags = append(r.Flags, name)
		default:
			r.Unset = append(r.Unset, name)
		}
	}
	return r, nil
}

// recordedMasks returns ig with the masks of a recording whose header
// is hdr standing for any text (see Ignore.WithMasks), for a message the
// recording says it masked; red is replay's own redactor.
func recordedMasks(ig sessions.Ignore, hdr sessions.Header, red *sessions.Redactor, both bool) sessions.Ignore {
	return ig.WithMasks(append(slices.Clone(hdr.Redact), red.Names()...), len(hdr.Redact) == 0, both)
}
