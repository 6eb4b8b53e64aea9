package tap

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// This file holds the recorder's commit stage: each encoded batch in order
// to the file, each frame observed by the tracker, and its record with
// findings and pairs to the hub.

// commit records the batches in order, once encoded.
func (r *recorder) commit() {
	for b := range r.commits {
		<-b.done
		r.commitBatch(b)
	}
}

// commitBatch records an encoded batch and frees it.
func (r *recorder) commitBatch(b *batch) {
	r.mu.Lock()
	for i := range b.jobs {
		at := r.written
		r.commitJob(b, &b.jobs[i])
		if r.bw != nil && r.written-at >= soloRecord {
			// A large record goes to the file on its own: should the
			// file not take it (a size limit it would cross), the
			// records after it are not lost with it, and those that
			// fit go on.
			r.flush()
		}
	}
	if r.bw != nil && r.bw.Buffered() >= flushAt {
		r.flush()
	}
	r.mu.Unlock()
	if !b.reset() {
		b = newBatch()
	}
	r.free <- b
}

func (r *recorder) commitJob(b *batch, j *job) {
	switch j.kind {
	case jobEvent:
		j.event.T = int64(j.t / time.Microsecond)
		r.writeEvent(j.event)
		if j.event.Kind == sessions.EventExit {
			// What is still owed stays unanswered, as a reader of the
			// file finds at its exit record.
			r.publishFindings(j.t, r.tracker.End(j.t))
		}
	case jobLSPNote:
		r.tracker.UseLSPFraming()
		r.profile.Store(uint32(r.tracker.Profile()))
		r.writeEvent(sessions.EventRecord{T: int64(j.t / time.Microsecond), Kind: sessions.EventNote, Dir: j.dir, Text: sessions.NoteFramingLSP})
	case jobSpool:
		r.lastAt = r.started + j.t
		r.seq++
		if p := r.tracker.Profile(); j.m.Profile != p {
			j.m = classify.ClassifyFramed(j.held, j.info, j.dir, p)
		}
		switch {
		case r.bw == nil:
			r.tooLarge(j)
		case r.failing:
			r.missing[j.dir]++
			if j.spool != nil {
				j.spool.close()
			}
		case j.spoolErr != nil:
			r.unspooled(j, j.spoolErr)
		case j.spool == nil:
		default:
			header, masked := r.redact.MaskHeader(b.bytes(j.header))
			rec := sessions.FrameRecord{T: int64(j.t / time.Microsecond), Dir: j.dir, EOF: j.eof, Captured: j.captured, Header: header, Redacted: masked}
			if j.dir != classify.Err {
				// Derived fields, as a frame held whole has them, from
				// its first bytes, masked.
				rec.Kind, rec.Method = j.m.Kind.String(), j.m.Method()
				if j.m.HasID() {
					rec.ID = j.m.ID().Raw
				}
			}
			var se spoolError
			if err := j.spool.record(r.w, rec, int64(j.info.HeaderLen), j.info.BodyLen, r.redact); errors.As(err, &se) {
				r.unspooled(j, se.err)
			} else if err != nil {
				r.fail(j.dir, err)
			} else {
				r.wrote(j.dir)
			}
		}
		r.observe(j.t, &j.m, false, classify.Delivered, j.eof, false, j.http)
		r.sayInClear(j.t)
	case jobFrame:
		r.lastAt = r.started + j.t
		r.seq++
		line := b.out[j.line[0]:j.line[1]]
		if p := r.tracker.Profile(); j.dir != classify.Err && j.m.Profile != p {
			// The profile changed while the frame was on its way (the
			// handshake): judge it as the tracker does now.
			r.scratch, j.err = r.encodeFrame(append(r.scratch[:0], 0), j, b.bytes(j.body), b.bytes(j.header), j.originalIn(b), p)
			line = r.scratch
		}
		written := false
		if r.failing {
			r.missing[j.dir]++
		} else if j.err != nil {
			r.fail(j.dir, j.err)
		} else if err := r.w.WriteEncoded(line); err != nil {
			r.fail(j.dir, err)
		} else {
			written = true
			r.wrote(j.dir)
		}
		if j.dir == classify.Err {
			if written {
				r.publishLast(true, nil, nil, nil)
			}
			return
		}
		fate := sessions.Fate{Src: j.src, Held: j.outcome}
		r.observe(j.t, &j.m, written, fate.Delivery(), j.eof, fate.ByUser(), j.http)
		r.profile.Store(uint32(r.tracker.Profile()))
		r.sayInClear(j.t)
	}
}

// unspooled records a gap record in the place of a frame too large to
// hold whose bytes could not be kept for the session file (its spool
// could not be made or written: a full disk, no file descriptor left),
// while the file itself takes writes: that frame alone is missing, where
// it was, and the records after it go on. The first time, the tap says
// so.
func (r *recorder) unspooled(j *job, err error) {
	if !r.saidSpool {
		r.saidSpool = true
		r.warn(fmt.Sprintf("a frame of %d MiB %s could not be kept to be recorded (%v); the session file records it as missing, and the traffic goes on", (j.info.Size+1<<19)>>20, j.dir.Toward(), err))
	}
	ev := sessions.EventRecord{T: int64(j.t / time.Microsecond), Kind: sessions.EventGap, Dir: j.dir, Missing: 1}
	if err := r.w.WriteEvent(ev); err != nil {
		r.fail(j.dir, err)
		return
	}
	r.gone[j.dir]++
	r.ends = append(r.ends, batched{end: r.written, dir: j.dir, gap: true})
	r.publishLast(false, nil, nil, nil)
}

// sayInClear says, the first time the redactor left a secret in clear (a
// secret written as a JSON number, outside every string), that it did:
// on stderr, and in a note in the session, after the frame just recorded.
func (r *recorder) sayInClear(t time.Duration) {
	if r.saidInClear {
		return
	}
	name := r.redact.InClear()
	if name == "" {
		return
	}
	r.saidInClear = true
	name = classify.EscapeString(name, 60)
	r.warn(fmt.Sprintf("the value of %s is written as a JSON number in the traffic, outside every string; rpctap masks secrets only inside strings (a frame keeps its shape), so what it records and shows holds that value in clear: if it is a secret, delete the session file when done (rpctap sessions rm FILE)", name))
	r.writeEvent(sessions.EventRecord{T: int64(t / time.Microsecond), Kind: sessions.EventNote,
		Text: "redact: the value of " + name + " is written as a JSON number, outside every string, and is recorded in clear"})
}

// tooLarge tells live views, in the place of a frame too large to hold
// that no file records, that they miss it: the tap kept only its first
// limit bytes, to classify it, and has nowhere to read the rest back
// from. The note counts as a missed frame, as the notes of frames a view
// fell behind do, so that a view says it missed it.
func (r *recorder) tooLarge(j *job) {
	if !r.hub.listening() {
		return
	}
	what := "frame"
	if j.dir == classify.Err {
		what = "line"
	}
	text := fmt.Sprintf("a %s of %d MiB %s is larger than this tap holds (%d MiB), and this tap records no file: this view cannot show it", what, (j.info.Size+1<<19)>>20, j.dir.Toward(), r.limit>>20)
	line := appendMissedNote(nil, int64(j.t/time.Microsecond), text, 1)
	r.lines = append(r.lines, published{line: line, offset: r.written, end: r.written, missed: true})
}

// observe runs the tracker and publishes the frame just written with what
// it found; d says whether the frame reached its receiver, eof that it
// ended its stream (its sender answers nothing more), byUser that the
// user wrote it (its errors are counted apart); h is what HTTP said of it
// (nil over stdio).
func (r *recorder) observe(t time.Duration, m *classify.Message, written bool, d classify.Delivery, eof, byUser bool, h *sessions.HTTPInfo) {
	obs := r.tracker.ObserveDelivery(r.seq, t, m, d)
	r.frames++
	switch {
	case m.Worst() != classify.Error:
	case byUser:
		r.userErrs++
	default:
		r.errs++
	}
	if written {
		r.publishLast(true, m, obs.Findings, obs.Pairs)
	}
	if r.calls != nil {
		r.calls.observe(r.seq, t, m, obs.Pairs, h)
	}
	if eof && (m.Dir == classify.H2S || m.Dir == classify.S2H) {
		r.publishFindings(t, r.tracker.OutputClosed(m.Dir, t))
	}
}

// publishLast gives the hub the record just written (a frame's, or an
// event's), with the frame's findings, the session findings and pairing
// as extra fields that readers of the file format ignore.
func (r *recorder) publishLast(frame bool, m *classify.Message, sf []classify.SessionFinding, pairs []classify.Pair) {
	if !r.hub.listening() || len(r.last) < 2 {
		return
	}
	line := append([]byte(nil), r.last[:len(r.last)-2]...) // without "}\n"
	line = append(line, `,"seq":`...)
	line = appendInt(line, r.seq)
	line = append(line, `,"offset":`...)
	line = appendInt(line, r.written-int64(len(r.last)))
	if m != nil {
		all := m.Findings
		for i := range m.Members {
			all = append(all[:len(all):len(all)], m.Members[i].Findings...)
		}
		if len(all) > 0 {
			line = append(line, `,"findings":`...)
			line = classify.AppendFindingsJSON(line, all)
		}
		if m.Answer != nil {
			line = append(line, `,"answer":`...)
			line = m.Answer.AppendJSON(line)
		}
	}
	if len(sf) > 0 {
		line = append(line, `,"session_findings":`...)
		line = appendSessionFindings(line, sf)
	}
	for _, p := range pairs {
		line = append(line, `,"pair":{"request":`...)
		line = appendInt(line, p.Request)
		line = append(line, `,"latency_us":`...)
		line = appendInt(line, int64(p.Latency/time.Microsecond))
		line = append(line, '}')
		break
	}
	line = append(line, "}\n"...)
	r.lines = append(r.lines, published{seq: r.seq, line: line, offset: r.written - int64(len(r.last)), end: r.written, frame: frame})
}

// appendSessionFindings writes findings about frames as a JSON array.
func appendSessionFindings(dst []byte, fs []classify.SessionFinding) []byte {
	dst = append(dst, '[')
	for i, f := range fs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"seq":`...)
		dst = appendInt(dst, f.Seq)
		dst = append(dst, `,"finding":`...)
		dst = f.Finding.AppendJSON(dst)
		if f.Related != 0 {
			dst = append(dst, `,"related":`...)
			dst = appendInt(dst, f.Related)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

func appendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// tee lets the recorder see each record the sessions.Writer writes (one
// Write per record) on its way to the file.
type tee struct{ r *recorder }

func (t tee) Write(p []byte) (int, error) {
	t.r.last = p
	t.r.written += int64(len(p))
	if t.r.bw == nil {
		return len(p), nil
	}
	return t.r.bw.Write(p)
}

// timeouts reports requests that passed their deadline as the clock goes.
func (r *recorder) timeouts(at time.Duration) {
	r.publishFindings(at-r.started, r.tracker.Advance(at-r.started))
}

// publishFindings gives live subscribers session findings the tracker
// raised at t (on the session clock) about earlier frames.
func (r *recorder) publishFindings(t time.Duration, fs []classify.SessionFinding) {
	if len(fs) == 0 || !r.hub.listening() {
		return
	}
	r.out = append(r.out[:0], `{"t":`...)
	r.out = appendInt(r.out, int64(t/time.Microsecond))
	r.out = append(r.out, `,"event":"findings","session_findings":`...)
	r.out = appendSessionFindings(r.out, fs)
	r.out = append(r.out, "}\n"...)
	r.lines = append(r.lines, published{seq: 0, line: append([]byte(nil), r.out...), offset: r.written, end: r.written})
}
