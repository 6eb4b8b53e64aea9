package export

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// mask masks the secrets the exporter's redactor knows in a record, and
// reports whether it changed the frame.
func (s *exporter) mask(ev *sessions.Event) bool {
	if s.red == nil {
		return false
	}
	var m1, m2 bool
	ev.Frame, m1 = s.red.Mask(ev.Frame)
	if ev.Header != nil {
		ev.Header, m2 = s.red.MaskHeader(ev.Header)
	}
	if ev.Original != nil {
		ev.Original, _ = s.red.Mask(ev.Original)
	}
	ev.Text = s.red.MaskString(ev.Text)
	ev.Redacted = ev.Redacted || m1 || m2
	return m1
}

// response reads back the record on line seq, masked.
func (s *exporter) response(seq int64) (sessions.Entry, *sessions.Event, error) {
	i, ok := s.x.BySeq(seq)
	if !ok {
		return sessions.Entry{}, nil, fmt.Errorf("line %d is not in the index", seq)
	}
	e := s.x.At(i)
	ev, err := s.back.Read(e)
	if err != nil {
		return e, nil, err
	}
	s.mask(ev)
	return e, ev, nil
}

// classify judges a (masked) record's frame for what the export shows of
// it: its kind, id, method, members.
func (s *exporter) classify(ev *sessions.Event) classify.Message {
	return s.hdr.Classify(ev.Frame, ev.Dir, s.x.Profile())
}

// stats counts the session's methods: requests and notifications from
// the index (a batch's members from its frame, read back: the index
// keeps no member's method), answers from the pairs, each with the error
// of the member that answers, not of its batch.
func (s *exporter) stats() ([]MethodStats, error) {
	var b statsBuilder
	var chunk []sessions.Entry
	var rr *sessions.RecordReader // batches are few: read apart from the walk's readers
	for pos := 0; pos < s.counts.Entries; pos += len(chunk) {
		chunk = s.x.Entries(chunk[:0], pos, pos+4096)
		for i := range chunk {
			e := &chunk[i]
			switch {
			case e.Kind == classify.KindRequest:
				b.request(e.Method)
			case e.Kind == classify.KindNotification:
				b.notification(e.Method)
			case e.Kind == classify.KindBatch && e.IsFrame():
				if rr == nil {
					rr = sessions.NewRecordReader(s.f)
				}
				ev, err := rr.Read(*e)
				if err != nil {
					return nil, fmt.Errorf("%w (did the session file change while it was exported?)", err)
				}
				m := s.classify(ev)
				for j := range m.Members {
					switch mm := &m.Members[j]; mm.Kind {
					case classify.KindRequest:
						b.request(mm.Method())
					case classify.KindNotification:
						b.notification(mm.Method())
					}
				}
			}
		}
	}
	for _, p := range s.pairs.List() {
		if p.Origin != 0 {
			b.retry(p.Method)
		}
		if p.InputRequired {
			continue // the call goes on in a retry, whose answer counts it once
		}
		b.answer(p.Method, p.CallLatency, p.Error)
	}
	return b.done(), nil
}

// findings returns the findings about the entry at position pos, masked.
func (s *exporter) findings(pos int) []sessions.EntryFinding {
	fs := s.x.Findings(pos)
	for i := range fs {
		fs[i].Message = s.red.MaskString(fs[i].Message)
	}
	return fs
}

// text is peer text made safe for the text formats: masked and escaped.
func (s *exporter) text(t string, max int) string {
	return classify.EscapeString(s.red.MaskString(t), max)
}

// prettyFrame appends the frame of entry e pretty-printed and cut, safe
// for a terminal; ok is false when the frame is not JSON (then nothing is
// appended). The index's judgement says a frame is JSON when the index
// read it whole and the export's masking left it as it was; it is checked
// otherwise.
func (s *exporter) prettyFrame(dst []byte, e *sessions.Entry, frame []byte) ([]byte, bool) {
	if !s.knownJSON(e, frame) && !classify.Valid(frame) {
		return dst, false
	}
	s.buf = classify.AppendPretty(s.buf[:0], frame, s.cuts)
	return classify.AppendSafeJSON(dst, s.buf), true
}

// original appends the bytes an edited frame came in with (an event's
// Original), safe for a terminal: pretty-printed and cut when they are
// JSON (isJSON), else escaped.
func (s *exporter) original(dst, orig []byte) (out []byte, isJSON bool) {
	if !classify.Valid(orig) {
		return classify.AppendEscaped(dst, orig, 4*s.cuts.String), false
	}
	s.buf = classify.AppendPretty(s.buf[:0], orig, s.cuts)
	return classify.AppendSafeJSON(dst, s.buf), true
}

// knownJSON reports whether the index judged frame, the frame of entry e
// as walk gives it, one valid JSON value: a kind only JSON has, from the
// whole frame, which the export's masking did not change since.
func (s *exporter) knownJSON(e *sessions.Entry, frame []byte) bool {
	limit := s.hdr.ParseLimit
	if limit <= 0 || limit > classify.MaxParse {
		limit = classify.MaxParse
	}
	return e.IsFrame() && e.Kind >= classify.KindBatch && !s.masked && e.Size == int64(len(frame)) && e.Size <= int64(limit)
}

// command is the session's command line, masked: each argument, and the
// line they make (a secret may span two arguments).
func (s *exporter) command() string {
	return s.red.MaskString(strings.Join(s.red.MaskStrings(s.hdr.Argv), " "))
}

// sessionName is what the export calls the session: its name, else its
// file.
func (s *exporter) sessionName() string {
	if s.hdr.Name != "" {
		return s.red.MaskString(s.hdr.Name)
	}
	if s.opts.Source != "" {
		return filepath.Base(s.opts.Source)
	}
	return "session"
}

// at is the wall-clock time of t microseconds into the session.
func (s *exporter) at(t int64) time.Time {
	return s.hdr.Started.Add(time.Duration(t) * time.Microsecond)
}

// leftOut counts the frames in the fold.
func (s *exporter) leftOut() (frames int, fromLine, toLine int64) {
	if s.foldTo <= s.foldFrom {
		return 0, 0, 0
	}
	var chunk []sessions.Entry
	for pos := s.foldFrom; pos < s.foldTo; pos += len(chunk) {
		chunk = s.x.Entries(chunk[:0], pos, min(pos+4096, s.foldTo))
		for i := range chunk {
			if chunk[i].IsFrame() {
				frames++
			}
		}
	}
	return frames, s.x.At(s.foldFrom).Seq, s.x.At(s.foldTo - 1).Seq
}

func (s *exporter) version() string {
	if s.opts.Version != "" {
		return s.opts.Version
	}
	return "devel"
}
