package tap

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// This file holds the recorder's writes to the session file: events,
// flushes, what a failed write does to the records that follow, and what the
// tap says of a file that misses frames.

// resume tries to write what the file is missing, after a failure: the
// header if the file lost it, a gap record per direction, and the event
// records it has yet to take (the exit last); all of them or none.
func (r *recorder) resume() {
	seq := r.seq
	if r.torn {
		tee{r}.Write([]byte("\n"))
		r.w.LineEnded()
	}
	if r.written == 0 {
		tee{r}.Write(r.hub.header)
	}
	// The gap records stand where the frames went missing: at the time
	// of the last of them (the last frame recorded, or not), after the
	// events noted before it and before those after it, the exit too.
	t := int64((max(r.lastAt, r.started) - r.started) / time.Microsecond)
	before := func(e *sessions.EventRecord) bool { return e.T <= t && e.Kind != sessions.EventExit }
	for i := range r.unwritten {
		if e := &r.unwritten[i]; before(e) {
			r.resumeEvent(*e)
		}
	}
	for dir, n := range r.missing {
		if n > 0 {
			r.resumeEvent(sessions.EventRecord{T: t, Kind: sessions.EventGap, Dir: classify.Direction(dir), Missing: n})
		}
	}
	for i := range r.unwritten {
		if e := &r.unwritten[i]; !before(e) {
			r.resumeEvent(*e)
		}
	}
	if err := r.bw.Flush(); err != nil {
		r.seq = seq
		r.lost(err) // back to where the file was: nothing of this is in it
		return
	}
	r.synced, r.torn = r.written, false
	for dir, n := range r.missing {
		r.gone[dir] += n
	}
	r.failing = false
	r.missing = [4]int64{}
	clear(r.unwritten)
	r.unwritten = r.unwritten[:0]
	if !r.closed && !r.said {
		r.warn("the session file takes writes again; a gap record says what is missing")
	}
	// Said once: a file that takes a few records and fails again (a size
	// limit) would say it over and over; missingReport has the totals.
	r.said = true
}

// resumeEvent writes an event record for resume, and hands it to the
// hub should the file take it (a failed flush takes it back, see lost).
func (r *recorder) resumeEvent(e sessions.EventRecord) {
	r.seq++
	if r.w.WriteEvent(e) == nil {
		r.publishLast(false, nil, nil, nil)
	}
}

// missingReport is the last thing the tap says of a session whose file
// lacks frames: how many in each direction, and whether the file says
// so; "" when the file holds every frame. path is the file's.
func (r *recorder) missingReport(path string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var n [4]int64
	for dir := range n {
		n[dir] = r.gone[dir] + r.missing[dir]
	}
	if n == [4]int64{} {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the session file %s is missing %s host→server and %d server→host", path, count(n[classify.H2S], "frame"), n[classify.S2H])
	if n[classify.Err] > 0 {
		fmt.Fprintf(&b, ", and %s of the server's stderr", count(n[classify.Err], "line"))
	}
	if !r.failing {
		b.WriteString("; its gap records say where")
		return b.String()
	}
	fmt.Fprintf(&b, " (%s); it ends without the gap and exit records that would say so", writeFailure(r.err))
	return b.String()
}

// writeFailure says why the session file took no more writes, and what
// to do about it.
func writeFailure(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the disk is full: free some space on it, or record elsewhere with --record FILE"
	case errors.Is(err, syscall.EDQUOT):
		return "your disk quota is used up: free some space, or record elsewhere with --record FILE"
	case errors.Is(err, syscall.EFBIG):
		return "the file reached the size limit for files (ulimit -f)"
	case err == nil:
		return "it could not be written"
	}
	return err.Error()
}

// count is "1 frame", "2 frames".
func count(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.FormatInt(n, 10) + " " + what + "s"
}

func (r *recorder) writeEvent(e sessions.EventRecord) {
	r.seq++
	if r.failing {
		r.keep(e) // resume writes it, once the file takes writes
		return
	}
	if err := r.w.WriteEvent(e); err != nil {
		r.fail(0, err)
		r.keep(e) // flush tries it again, after the gap records
		return
	}
	if r.bw != nil {
		r.ends = append(r.ends, batched{end: r.written, event: &e})
	}
	r.publishLast(false, nil, nil, nil)
}

// maxUnwritten bounds the notes kept while the file takes no writes; the
// exit record is always kept.
const maxUnwritten = 64

// keep holds an event record the file did not take, for resume.
func (r *recorder) keep(e sessions.EventRecord) {
	if len(r.unwritten) < maxUnwritten || e.Kind == sessions.EventExit {
		r.unwritten = append(r.unwritten, e)
	}
}

// wrote notes a frame's record written to the file's buffer, until it is
// flushed.
func (r *recorder) wrote(dir classify.Direction) {
	if r.bw != nil {
		r.ends = append(r.ends, batched{end: r.written, dir: dir})
	}
}

// fail notes that the session file could not be written (dir: a frame of
// that direction is missing; 0: none).
func (r *recorder) fail(dir classify.Direction, err error) {
	if !r.failing && !r.said {
		r.warn(fmt.Sprintf("cannot write the session file (%v); traffic goes on and the file will say how many frames are missing", err))
	}
	r.failing = true
	r.err = err
	if dir != 0 {
		r.missing[dir]++
	}
}

// lost handles a write to the file that failed: the file is cut back to
// the end of its last whole record, so that it never ends in a torn line,
// the frames after that end are counted missing, the events after it are
// kept for resume, and offsets follow what the file holds.
func (r *recorder) lost(err error) {
	r.fail(0, err)
	r.bw.Reset(r.file)
	cut := r.synced
	pos, perr := r.file.Seek(0, io.SeekCurrent)
	var events []sessions.EventRecord
	for _, b := range r.ends {
		switch {
		case perr == nil && b.end <= pos:
			cut = b.end
		case b.gap:
			// The gap record that counted its frame is gone with the
			// rest: the frame counts again below.
			r.gone[b.dir]--
			r.missing[b.dir]++
		case b.event != nil:
			events = append(events, *b.event)
		case b.dir != 0:
			r.missing[b.dir]++
		}
	}
	r.ends = r.ends[:0]
	if len(events) > 0 {
		// They came before the events noted since the file failed.
		r.unwritten = append(events, r.unwritten...)
	}
	switch {
	case perr != nil: // where the file ends is unknown
		r.torn = true
	case r.file.Truncate(cut) == nil:
		_, err := r.file.Seek(cut, io.SeekStart)
		r.torn = err != nil
	default: // the file cannot be cut (a device, say): it keeps what it took
		r.torn = pos != cut
		cut = pos
	}
	r.written, r.synced = cut, cut
	if !r.torn {
		r.w.LineEnded()
	}
	kept := r.lines[:0]
	for _, l := range r.lines {
		if l.end <= cut {
			kept = append(kept, l)
		}
	}
	r.lines = kept
}

// flush pushes the batch to the file and the hub. After a failure it
// tries again, and once the file takes writes it records the gap.
func (r *recorder) flush() {
	if r.bw != nil {
		if err := r.bw.Flush(); err != nil {
			r.lost(err)
		} else {
			r.ends, r.synced = r.ends[:0], r.written
		}
		if r.failing {
			// At once: the last flush, at the session's end, gets its
			// try too.
			r.resume()
		}
	}
	stats := Stats{Frames: r.frames, Errors: r.errs, UserErrors: r.userErrs, Pending: r.tracker.InFlight()}
	if len(r.lines) > 0 {
		r.hub.publish(r.lines, r.written, stats)
		r.lines = r.lines[:0]
	} else {
		r.hub.advance(r.written, stats)
	}
}
