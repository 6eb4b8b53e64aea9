// Package export writes a session file in another format, as rpctap
// export does (File, Write): a Markdown transcript, a Mermaid
// sequenceDiagram, one self-contained HTML page, JSON of the pairs with
// their latency, HAR 1.2, and OTLP JSON lines (spans built by the span
// model in sessions, which rpctap's live OTLP export shares). Every format
// masks the secrets its Redactor knows and escapes peer text; those that
// show the session record by record can leave its middle out
// (Options.MaxFrames).
package export

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rpctap/rpctap/classify"
	"github.com/rpctap/rpctap/sessions"
)

// A Format is a kind of export of a session.
type Format int

// The export formats.
const (
	FormatMarkdown Format = iota + 1 // a transcript for issues and PRs
	FormatMermaid                    // a sequenceDiagram, folded
	FormatHTML                       // one self-contained page, folded
	FormatJSON                       // pairs, findings and per-method latency
	FormatHAR                        // HAR 1.2, an entry per pair
	FormatOTLP                       // OTLP JSON lines, a span per pair
)

var formatNames = [...]string{"", "markdown", "mermaid", "html", "json", "har", "otlp"}

// FormatNames lists the formats by name, for help and errors.
const FormatNames = "markdown, mermaid, html, json, har or otlp"

func (f Format) String() string {
	if f > 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "unknown"
}

// Extension is the usual file name extension of the format.
func (f Format) Extension() string {
	switch f {
	case FormatMarkdown:
		return "md"
	case FormatMermaid:
		return "mmd"
	case FormatOTLP:
		return "otlp.jsonl"
	}
	return f.String()
}

// ParseFormat reads a format's name ("md" is markdown too).
func ParseFormat(s string) (Format, error) {
	if s == "md" {
		return FormatMarkdown, nil
	}
	for i, n := range formatNames {
		if i > 0 && n == s {
			return Format(i), nil
		}
	}
	return 0, fmt.Errorf("unknown export format %q: use %s", s, FormatNames)
}

// DefaultMaxFrames is how many records a format shows of a session unless
// told otherwise: the formats a reader takes in whole (a diagram, a page)
// cannot stream, so they fold a long session; the others show all of it
// (0).
func (f Format) DefaultMaxFrames() int {
	switch f {
	case FormatMermaid:
		return 200
	case FormatHTML:
		return 2000
	}
	return 0
}

// Folds reports whether the format may leave records out (--max-frames):
// those that show the session record by record.
func (f Format) Folds() bool {
	return f == FormatMarkdown || f == FormatMermaid || f == FormatHTML
}

// Options configure an export.
type Options struct {
	Format Format
	// MaxFrames is how many records a folding format shows (the first
	// and last half of them), with a note of how many were left out in
	// between: 0 means the format's default, negative means all.
	MaxFrames int
	// Redactor masks secrets in everything taken from the session (nil:
	// nothing more is masked than the recording's own redaction).
	Redactor *sessions.Redactor
	// Profile, Timeout and MethodTimeouts judge the session as check does.
	Profile        classify.Profile
	Timeout        time.Duration
	MethodTimeouts map[string]time.Duration
	// Cuts bound long values in the text formats (zero: DefaultCuts).
	Cuts Cuts
	// Source names the session file in the export (its path as given).
	Source string
	// Version is rpctap's version, for the HAR creator and OTLP scope.
	Version string
}

// An Result says what an export wrote.
type Result struct {
	// Records counts the session's records; Shown those the export
	// showed (fewer when it folded).
	Records, Shown int
	// Pairs counts request/response pairs (requests with no answer too)
	// the export wrote, for the formats made of pairs.
	Pairs int
	// Skipped counts the session file's lines that are no record (and
	// so in no export), SkippedBytes the bytes they held.
	Skipped      int
	SkippedBytes int64
}

// Folded reports whether records were left out.
func (r Result) Folded() bool { return r.Shown < r.Records }

// ErrSameFile is returned by File asked to write over its input.
var ErrSameFile = errors.New("the output is the session file itself")

// File exports the session file at path to out, through a temporary
// file in out's directory renamed over out once complete, so that out is
// never left half written; out "" or "-" writes to stdout instead. It
// never writes over the session file, and the export is readable by no
// one who cannot read the session file (it takes the file's permissions,
// 0600 for a session rpctap recorded).
func File(path, out string, stdout io.Writer, opts Options) (Result, error) {
	if out == "" || out == "-" {
		bw := bufio.NewWriterSize(stdout, 1<<20)
		res, err := Write(bw, path, opts)
		if ferr := bw.Flush(); err == nil && ferr != nil {
			err = fmt.Errorf("writing the export: %w", ferr)
		}
		return res, err
	}
	in, err := os.Stat(path)
	if err != nil {
		return Result{}, err
	}
	if same, err := sameFile(in, out); err != nil {
		return Result{}, err
	} else if same {
		return Result{}, ErrSameFile
	}
	if err := outputPlace(out, opts.Format); err != nil {
		return Result{}, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return Result{}, fmt.Errorf("cannot write the export next to %s: %w", out, err)
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	bw := bufio.NewWriterSize(tmp, 1<<20)
	res, err := Write(bw, path, opts)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Chmod(in.Mode().Perm() & 0o666)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	if err != nil {
		return res, fmt.Errorf("writing the export to %s: %w", out, err)
	}
	return res, nil
}

// outputPlace checks, before anything is written, that out can be
// written: its directory exists, and it is not itself a directory. Its
// errors say what to do, and are not about the session file.
func outputPlace(out string, f Format) error {
	q := func(p string) string { return classify.EscapeString(p, 200) }
	dir := filepath.Dir(out)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("there is no directory %s to write %s in: make it first (mkdir -p %s), or give -o a path in one that exists", q(dir), q(out), q(dir))
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return fmt.Errorf("-o %s is a directory: give a file in it (-o %s)", q(out), q(filepath.Join(out, "session."+f.Extension())))
	}
	return nil
}

// sameFile reports whether out names the file in (by inode, so a link or
// another spelling of the path counts).
func sameFile(in os.FileInfo, out string) (bool, error) {
	o, err := os.Stat(out)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(in, o), nil
}

// Write writes the session file at path to w in opts.Format. It reads
// the file twice, streaming: first into a sessions.Index (an entry a
// record, no payloads) and the session's pairs, then record by record to
// write them, reading a pair's answer back by its offset. Memory grows
// with the number of records (about a hundred bytes each), never with
// their size.
func Write(w io.Writer, path string, opts Options) (Result, error) {
	s, err := openExport(path, opts)
	if err != nil {
		return Result{}, err
	}
	defer s.f.Close()
	switch opts.Format {
	case FormatMarkdown:
		err = s.markdown(w)
	case FormatMermaid:
		err = s.mermaid(w)
	case FormatHTML:
		err = s.html(w)
	case FormatJSON:
		err = s.jsonDoc(w)
	case FormatHAR:
		err = s.har(w)
	case FormatOTLP:
		err = s.otlp(w)
	default:
		err = fmt.Errorf("unknown export format: use %s", FormatNames)
	}
	return s.res, err
}

// exporter is one export under way.
type exporter struct {
	opts   Options
	f      *os.File
	x      *sessions.Index
	pairs  sessions.Pairs
	hdr    sessions.Header
	hasHdr bool
	counts sessions.Counts
	red    *sessions.Redactor
	cuts   Cuts
	res    Result
	// fold: records at positions [foldFrom, foldTo) are left out.
	foldFrom, foldTo int
	recs, back       *sessions.RecordReader // records in order; answers
	ids              *sessions.RecordReader // batch answers, for their members' ids (HTML)
	idsSeq           int64                  // the line ids read last, its frame classified in idsMsg
	idsMsg           classify.Message
	buf, body        []byte // scratch of prettyFrame and mdRecord
	masked           bool   // the export's masking changed the frame walk gives fn
	// Scratch of eachPair and the OTLP export, reused pair to pair.
	reqMsg classify.Message
	pair   exportPair
	span   sessions.Span
}

func openExport(path string, opts Options) (*exporter, error) {
	s := &exporter{opts: opts, red: opts.Redactor, cuts: opts.Cuts}
	if s.cuts == (Cuts{}) {
		s.cuts = DefaultCuts
	}
	iopts := s.pairs.CollectPairs(sessions.IndexOptions{Profile: opts.Profile, Timeout: opts.Timeout, MethodTimeouts: opts.MethodTimeouts})
	x, err := sessions.IndexFile(path, iopts, nil)
	if err != nil {
		return nil, err // it says "reading the session file"
	}
	s.x = x
	s.hdr, s.hasHdr = x.Header()
	s.counts = x.Counts()
	if s.counts.Entries == 0 && !s.hasHdr {
		return nil, sessions.ErrNoRecords
	}
	if s.f, err = os.Open(path); err != nil {
		return nil, fmt.Errorf("reading the session file: %w", err)
	}
	// Both are read in walkEntries' reading goroutine: recs the records
	// in order, back the answers.
	s.recs, s.back = sessions.NewRecordReader(s.f), sessions.NewRecordReader(s.f)
	s.back.LookIn(s.recs) // an answer close after its request is read with it
	s.pairs.List()        // sorted now, read by both goroutines from here on
	s.res.Records = s.counts.Entries
	s.res.Skipped, s.res.SkippedBytes = s.counts.Skipped, s.counts.SkippedBytes
	s.foldFrom, s.foldTo = s.counts.Entries, s.counts.Entries
	max := opts.MaxFrames
	if max == 0 {
		max = opts.Format.DefaultMaxFrames()
	}
	if opts.Format.Folds() && max > 0 && s.counts.Entries > max {
		s.foldFrom = (max + 1) / 2
		s.foldTo = s.counts.Entries - max/2
	}
	s.res.Shown = s.counts.Entries - (s.foldTo - s.foldFrom)
	return s, nil
}

// walk calls fn with each record of the session in order, with its index
// entry and position, masked. Records in the fold are not read: fold is
// called once in their place (when not nil). With frames false, only the
// frame records that hold requests are read (and given to fn).
func (s *exporter) walk(fn func(pos int, e *sessions.Entry, ev *sessions.Event) error, fold func() error) error {
	return s.walkEntries(true, func(it *walkItem, _ []walkItem) error { return fn(it.pos, &it.e, &it.ev) }, fold)
}

// walkEntries is walk, or with all false, a walk of the requests alone,
// each with the answers of its pairs (read ahead too), in pair order.
func (s *exporter) walkEntries(all bool, fn func(it *walkItem, answers []walkItem) error, fold func() error) error {
	// Two goroutines: this one reads and masks the records, a batch at a
	// time, a batch or two ahead of the caller's fn, which formats them.
	full, free := make(chan *walkBatch, 2), make(chan *walkBatch, 3)
	for range 3 {
		free <- &walkBatch{}
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(full)
		s.readBatches(all, full, free, done)
	}()
	for b := range full {
		for i := range b.items {
			b.items[i].ev.Frame, b.items[i].ev.Header = b.data[b.items[i].frame[0]:b.items[i].frame[1]], nil
			if h := b.items[i].header; h[1] > h[0] {
				b.items[i].ev.Header = b.data[h[0]:h[1]]
			}
			if o := b.items[i].original; b.items[i].ev.Original != nil {
				b.items[i].ev.Original = b.data[o[0]:o[1]]
			}
		}
		for i := 0; i < len(b.items); i++ {
			it := &b.items[i]
			if it.fold {
				if fold != nil {
					if err := fold(); err != nil {
						return err
					}
				}
				continue
			}
			k := i + 1
			for k < len(b.items) && b.items[k].answer {
				k++
			}
			s.masked = it.masked
			if err := fn(it, b.items[i+1:k]); err != nil {
				return err
			}
			i = k - 1
		}
		if b.err != nil {
			return b.err
		}
		free <- b
	}
	return nil
}

// A walkBatch is records read ahead, their bytes in data.
type walkBatch struct {
	items []walkItem
	data  []byte
	err   error
}

type walkItem struct {
	pos                     int
	e                       sessions.Entry
	ev                      sessions.Event
	frame, header, original [2]int // where ev's bytes are in data
	fold                    bool   // the fold is here
	// answer marks the answer of a pair of the request before it, with
	// the pair's latency.
	answer  bool
	latency time.Duration
	masked  bool // the export's masking changed the frame
}

// maxKeptBatch is the most bytes a walkBatch keeps for its next records:
// a batch that held a huge frame gives that memory back, so that the
// batches in rotation do not each hold a huge frame's worth to the end.
const maxKeptBatch = 4 << 20

// reset empties the batch for its next records.
func (b *walkBatch) reset() {
	b.items, b.data, b.err = b.items[:0], b.data[:0], nil
	if cap(b.data) > maxKeptBatch {
		b.data = nil
	}
}

// add appends a record to the batch.
func (b *walkBatch) add(it walkItem) {
	it.frame[0] = len(b.data)
	b.data = append(b.data, it.ev.Frame...)
	it.frame[1] = len(b.data)
	it.header[0] = len(b.data)
	b.data = append(b.data, it.ev.Header...)
	it.header[1] = len(b.data)
	it.original[0] = len(b.data)
	b.data = append(b.data, it.ev.Original...) // an edit's: the reader reuses its bytes too
	it.original[1] = len(b.data)
	b.items = append(b.items, it)
}

// readBatches reads the records walkEntries walks into batches.
func (s *exporter) readBatches(all bool, full chan<- *walkBatch, free <-chan *walkBatch, done <-chan struct{}) {
	n := s.counts.Entries
	var chunk []sessions.Entry
	base := 0
	list, pi := s.pairs.List(), 0 // the pairs, and the first of those not passed yet
	var b *walkBatch
	next := func() bool {
		select {
		case b = <-free:
			b.reset()
			return true
		case <-done:
			return false
		}
	}
	send := func() bool {
		select {
		case full <- b:
			b = nil
			return true
		case <-done:
			return false
		}
	}
	if !next() {
		return
	}
	for pos := 0; pos < n; pos++ {
		if pos == s.foldFrom && s.foldTo > s.foldFrom {
			b.items = append(b.items, walkItem{fold: true})
			pos = s.foldTo
			if pos >= n {
				break
			}
		}
		if pos < base || pos >= base+len(chunk) {
			base = pos
			chunk = s.x.Entries(chunk[:0], pos, pos+1024)
		}
		e := &chunk[pos-base]
		if !all && !(e.IsFrame() && (e.Kind == classify.KindRequest || e.Kind == classify.KindBatch)) {
			continue
		}
		ev, err := s.recs.Read(*e)
		if err != nil {
			b.err = fmt.Errorf("%w (did the session file change while it was exported?)", err)
			send()
			return
		}
		masked := s.mask(ev)
		b.add(walkItem{pos: pos, e: *e, ev: *ev, masked: masked})
		if !all {
			// The requests come in line order, as the pairs are sorted: a
			// cursor finds each one's pairs.
			for pi < len(list) && list[pi].Request < e.Seq {
				pi++
			}
			pe := pi
			for pe < len(list) && list[pe].Request == e.Seq {
				pe++
			}
			pairs := list[pi:pe]
			for k, pr := range pairs {
				if k > 0 && pairs[k-1].Response == pr.Response {
					continue // one answer to many members of a batch: read once, not once a member
				}
				ae, aev, err := s.response(pr.Response)
				if err != nil {
					b.err = err
					send()
					return
				}
				b.add(walkItem{e: ae, ev: *aev, answer: true, latency: pr.Latency})
			}
		}
		if len(b.items) >= 512 || len(b.data) >= 1<<20 {
			if !send() || !next() {
				return
			}
		}
	}
	if len(b.items) > 0 {
		send()
	}
}

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
		b.answer(p.Method, p.Latency, p.Error)
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
	s.buf = appendPretty(s.buf[:0], frame, s.cuts)
	return classify.AppendSafeJSON(dst, s.buf), true
}

// original appends the bytes an edited frame came in with (an event's
// Original), safe for a terminal: pretty-printed and cut when they are
// JSON (isJSON), else escaped.
func (s *exporter) original(dst, orig []byte) (out []byte, isJSON bool) {
	if !classify.Valid(orig) {
		return classify.AppendEscaped(dst, orig, 4*s.cuts.String), false
	}
	s.buf = appendPretty(s.buf[:0], orig, s.cuts)
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
