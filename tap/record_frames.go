package tap

import (
	"bytes"
	"time"

	"github.com/rpctap/rpctap/classify"
)

// This file holds how the recorder cuts what it is handed into frames: a
// direction's wire bytes split by its framing, an injected frame whole, and
// a frame too large to hold spooled for the file, its first bytes kept to
// classify it.

func (r *recorder) process(it item) {
	t := it.at - r.started
	switch {
	case it.event != nil:
		r.addJob(job{kind: jobEvent, t: t, event: *it.event}, nil, nil)
	case it.whole:
		if d := &r.dirs[it.dir]; d.size > 0 || len(d.pend) > 0 {
			held := it
			held.data = bytes.Clone(it.data)
			held.header = bytes.Clone(it.header)
			held.original = bytes.Clone(it.original)
			d.held = append(d.held, held)
			return
		}
		r.whole(it)
	default:
		r.wire(t, it)
	}
}

// whole records an injected frame.
func (r *recorder) whole(it item) {
	n := int64(len(it.data))
	j := job{kind: jobFrame, t: it.at - r.started, dir: it.dir, src: it.src, info: classify.FrameInfo{BodyLen: n, Size: n}, partial: it.partial, captured: it.captured,
		outcome: it.held, heldFor: it.heldFor, http: it.http}
	if it.original != nil {
		b := r.batch()
		j.original, j.hasOriginal = [2]int{len(b.data), len(b.data) + len(it.original)}, true
		b.data = append(b.data, it.original...)
	}
	r.addJob(j, it.data, it.header)
}

// wire splits a direction's bytes into frames and records each.
func (r *recorder) wire(t time.Duration, it item) {
	d := &r.dirs[it.dir]
	if d.sp == nil {
		d.sp = classify.NewSplitter(r.framingFor(it.dir))
	}
	data := it.data
	if len(d.pend) > 0 {
		data = append(d.pend, data...)
		d.pend = nil
	}
	for len(data) > 0 || it.eof {
		n, end := d.sp.Split(data, it.eof)
		part := data[:n]
		data = data[n:]
		if d.size == 0 && n > 0 {
			d.at = t
		}
		d.size += int64(n)
		// The limit counts body bytes, as readers of the file count
		// them: an LSP header block is held on top of it.
		limit := r.limit + d.sp.HeaderRead()
		if end {
			limit = r.limit + d.sp.Frame().HeaderLen
		}
		whole := end && len(d.asm) == 0 && !d.over && n <= limit
		switch {
		case whole:
			// The frame is all in this item: it goes to the batch
			// from here, with no assembling.
		case d.over:
			if d.spool != nil {
				d.spool.write(part)
			}
		case len(d.asm)+len(part) <= limit:
			d.asm = append(d.asm, part...)
		default:
			r.beginStream(d, part, limit)
		}
		if end {
			frame := d.asm
			if whole {
				frame = part
			}
			r.endFrame(d, frame, t, it.dir, it.captured)
			for _, h := range d.held {
				r.whole(h)
			}
			d.held = d.held[:0]
			continue
		}
		if n == 0 {
			if it.eof {
				break
			}
			// The splitter wants more bytes than this item has: keep
			// them, and show them to it again with the next item's.
			d.pend = append([]byte(nil), data...)
			break
		}
	}
}

// framingFor is the framing the relays use; stderr is always lines.
func (r *recorder) framingFor(dir classify.Direction) classify.Framing {
	if dir == classify.Err {
		return classify.FramingNDJSON
	}
	return r.hub.framing
}

// endFrame records the frame that just ended: frame holds its bytes (up to
// limit of them, for a frame that was spooled).
func (r *recorder) endFrame(d *dirState, frame []byte, t time.Duration, dir classify.Direction, captured bool) {
	info := d.sp.Frame()
	if info.Framing == classify.FramingLSP && !r.lspNoted[dir] && r.hub.framing == classify.FramingAuto && dir != classify.Err {
		// The header said auto; say what this direction's traffic
		// showed, before its first frame, so readers of the file frame
		// and judge it the same way (each direction is decided apart:
		// a host may frame with Content-Length and its server with
		// newlines).
		r.lspNoted[dir] = true
		r.addJob(job{kind: jobLSPNote, t: t, dir: dir}, nil, nil)
	}
	var header []byte
	if info.HeaderLen > 0 && !info.PlainHeader {
		header = frame[:min(info.HeaderLen, len(frame))]
	}
	j := job{kind: jobFrame, t: t, dir: dir, info: info, eof: info.EOF, captured: captured}
	if d.over {
		// The frame's first limit bytes go with the job as they are (no
		// copy), and the direction starts a small buffer again.
		j.kind, j.t, j.spool, j.spoolErr = jobSpool, d.at, d.spool, d.err
		j.held = info.Body(frame)
		if header != nil {
			header = bytes.Clone(header)
		}
		d.spool, d.err, d.over, d.asm = nil, nil, false, nil
		r.addJob(j, nil, header)
		d.size = 0
		return
	}
	r.addJob(j, info.Body(frame), header)
	d.asm = d.asm[:0]
	d.size = 0
}

// beginStream starts recording a frame too large to hold: its first limit
// bytes stay for classification, all of them go to a spool for the file.
func (r *recorder) beginStream(d *dirState, part []byte, limit int) {
	keep := limit - len(d.asm)
	d.asm = append(d.asm, part[:keep]...)
	d.over = true
	if r.bw == nil {
		return
	}
	sp, err := newSpool(r.spoolDir)
	if err != nil {
		d.err = err
		return
	}
	sp.write(d.asm)
	sp.write(part[keep:])
	d.spool = sp
}
